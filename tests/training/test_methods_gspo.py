"""Each GSPO reward option of the writing-RL methods end to end for 2 steps on the tiny
model: the process reward on pairwise (with the dynamic reference scheduler) and on
checklist, R3 with the current policy and the R3 filter, R3 with a frozen reference copy."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench.fakes.methods_judge import MethodsResponder
from bench.fakes.upstream import run_in_thread
from training.distill import main

# TRL's generation still asks `is_gradient_checkpointing`, renamed in transformers 5.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")

GROUP = ["--num-generations", "2", "--batch-size", "2", "--max-completion-length", "8",
         "--save-steps", "2", "--max-steps", "2"]


@pytest.fixture(scope="module")
def judge():
    responder = MethodsResponder(verdict="B")
    with run_in_thread(responder=responder) as (url, fake):
        yield url, responder


def gspo(dataset_dir: Path, model: Path, out: Path, url: str | None, *args: str
         ) -> dict[str, Any]:
    judge = ["--judge-url", url, "--judge-model", "judge"] if url else []
    code = main(["gspo", "--data", str(dataset_dir), "--model", str(model), "--out", str(out),
                 *judge, *GROUP, *args])
    assert code == 0
    assert (out / "final" / "config.json").is_file()
    report = json.loads((out / "report.json").read_text())
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return {"summary": report["summary"], "metrics": metrics}


def logged(metrics: list[dict[str, Any]], key: str) -> list[float]:
    return [m[key] for m in metrics if key in m]


def test_pairwise_plus_process_promotes_winners_and_saves_the_pointers(
        dataset_dir, tiny_model_dir, judge, tmp_path):
    url, responder = judge
    responder.reset()
    run = gspo(dataset_dir, tiny_model_dir, tmp_path / "g", url, "--reward",
               "pairwise+process", "--eval-prompts", "0")
    # Every completion wins (the judge says "B"): R_a = 1; the tiny model writes no <think>:
    # R_p = -1; R_all = 0.25 * 1 + 0.75 * -1.
    assert responder.counts["pairwise"] == 4
    assert logged(run["metrics"], "rewards/pairwise+process/mean") == [-0.5, -0.5]
    refs = run["summary"]["reward_stats"]["answer"]["references"]
    assert 1 <= refs["promotions"] <= 2
    # Each promotion moved one prompt up one stage; the pointers went into the checkpoint.
    assert sum(int(stage) * n for stage, n in refs["at_stage"].items()) == refs["promotions"]
    saved = json.loads((tmp_path / "g" / "checkpoints" / "checkpoint-2" /
                        "reference_pointers.json").read_text())
    assert saved["promotions"] == refs["promotions"] and saved["report"] == refs


def test_checklist_plus_process_penalises_answers_without_reflection(
        dataset_dir, tiny_model_dir, judge, tmp_path):
    url, responder = judge
    responder.reset()
    run = gspo(dataset_dir, tiny_model_dir, tmp_path / "g", url, "--reward",
               "checklist+process", "--alpha", "0.5", "--eval-prompts", "0")
    # The tiny model never writes <think>: R_p = -1, so R_all = 0.5 R_a - 0.5 <= 0.
    means = logged(run["metrics"], "rewards/checklist+process/mean")
    assert len(means) == 2 and all(-0.5 <= m <= 0.0 for m in means)
    assert responder.writer.counts["judge_joint"] == 4 and responder.counts["segments"] == 0
    assert run["summary"]["reward_stats"]["answer"]["scored"] == 4


def test_r3_with_the_current_policy_and_the_r3_filter(dataset_dir, tiny_model_dir, judge,
                                                      tmp_path):
    url, _ = judge
    run = gspo(dataset_dir, tiny_model_dir, tmp_path / "g", url, "--reward", "r3",
               "--r3-filter", "--filter-every", "1", "--filter-traces", "2",
               "--filter-top-k", "100000", "--filter-drop-fraction", "0.2",
               "--filter-carry", "0", "--eval-prompts", "1")
    summary = run["summary"]
    # 5 training prompts, none too hard (k above the vocabulary); the flattest 20% dropped.
    passes = summary["reward_stats"]["r3_filter"]["passes"]
    assert [p["step"] for p in passes] == [0, 1, 2]
    assert passes[0] == {"step": 0, "kept": 4, "too_hard": 0, "too_flat": 1, "carried": 0}
    assert summary["rows"]["train"] == 4
    assert all(math.isfinite(m) for m in logged(run["metrics"], "rewards/r3/mean"))
    # The held-out prompt was scored before training: the model was captured at init.
    assert summary["holdout_reward"]["before"] is not None
    assert summary["reward_stats"]["policy"] == "current"


def test_r3_with_a_frozen_reference_uses_dros_loss_settings(dataset_dir, tiny_model_dir,
                                                            tmp_path):
    import torch

    # R3 makes no judge call: no --judge-url / --judge-model.
    run = gspo(dataset_dir, tiny_model_dir, tmp_path / "g", None, "--reward", "r3",
               "--r3-policy", "ref", "--r3-weighting", "uniform", "--eval-prompts", "0")
    assert run["summary"]["judge_calls"] == 0
    assert run["summary"]["reward_stats"]["policy"] == "ref"
    assert run["summary"]["reward_stats"]["scored"] == 4
    args = torch.load(tmp_path / "g" / "checkpoints" / "checkpoint-2" / "training_args.bin",
                      weights_only=False)
    assert (args.loss_type, args.mask_truncated_completions, args.epsilon_high, args.beta) == \
        ("dr_grpo", True, 0.2, 0.001)


def test_a_generation_batch_larger_than_the_training_batch(dataset_dir, tiny_model_dir,
                                                           tmp_path):
    """4 completions generated at once feed two optimiser steps of 2: one generation (on
    transformers' generate when asked, instead of the local engine)."""
    run = gspo(dataset_dir, tiny_model_dir, tmp_path / "g", None, "--reward", "r3",
               "--eval-prompts", "0", "--generation-batch-size", "4", "--rollouts",
               "transformers")
    summary = run["summary"]
    assert summary["steps"] == 2 and summary["completions"] == 4
    assert summary["generation"] == "transformers"      # no GPU here: no paged generation
    assert summary["speed"]["optim"] == "adamw_torch"

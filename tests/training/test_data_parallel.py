"""The trainer under `accelerate launch --num_processes 2` (gloo on CPU) against one process
with the same seed and data: the same reference pointers, the same R3 sigma and rewards, the
same R3 filter decisions; SFT and DPO complete and write one checkpoint."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.fakes.methods_judge import MethodsResponder
from bench.fakes.upstream import run_in_thread

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("parallel_probe.py")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="gloo launch on POSIX")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(processes: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`args` (a module after -m, or a script) under accelerate with `processes` CPU
    processes, or plainly for one."""
    # accelerate starts several CPU processes through its torchrun path (--multi_gpu);
    # ACCELERATE_USE_CPU makes them join one gloo group on the CPU.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": "",
           "ACCELERATE_USE_CPU": "true"}
    if processes == 1:
        command = [sys.executable, *args]
    else:
        command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
                   "--num_processes", str(processes), "--num_machines", "1",
                   "--mixed_precision", "no", "--dynamo_backend", "no",
                   "--main_process_port", str(free_port()), *args]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


def distill(processes: int, *args: str) -> None:
    launch(processes, "-m", "training.distill", *args)


def summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())["summary"]


def test_r3_sigma_rewards_and_filter_decisions_match_one_process(dataset_dir, tiny_model_dir,
                                                                tmp_path):
    results = []
    for processes in (1, 2):
        out = tmp_path / f"probe{processes}.json"
        launch(processes, str(PROBE), str(tiny_model_dir), str(dataset_dir), str(out))
        results.append(json.loads(out.read_text()))
    one, two = results
    assert two["processes"] == 2
    assert two["rewards"] == pytest.approx(one["rewards"], abs=1e-5)
    assert two["sigma"]["groups"] == one["sigma"]["groups"] == 3
    assert two["sigma"]["mean"] == pytest.approx(one["sigma"]["mean"], abs=1e-6)
    assert one["sigma"]["mean"] > 0
    assert (two["kept"], two["too_flat"]) == (one["kept"], one["too_flat"])
    assert one["too_flat"]          # the filter decided something


@pytest.fixture(scope="module")
def judge():
    with run_in_thread(responder=MethodsResponder(verdict="B")) as (url, _):
        yield url


def gspo_args(dataset_dir: Path, model: Path, out: Path, per_device: int) -> list[str]:
    return ["gspo", "--data", str(dataset_dir), "--model", str(model), "--out", str(out),
            "--num-generations", "2", "--batch-size", str(per_device),
            "--max-completion-length", "6", "--max-steps", "2", "--save-steps", "2",
            "--eval-prompts", "0", "--seed", "3"]


def test_gspo_pairwise_pointers_are_one_state(dataset_dir, tiny_model_dir, judge, tmp_path):
    """A global batch of 4 completions: one process of 4, or two of 2 each."""
    pointers = []
    for processes in (1, 2):
        out = tmp_path / f"pairwise{processes}"
        distill(processes, *gspo_args(dataset_dir, tiny_model_dir, out, 4 // processes),
                "--reward", "pairwise", "--judge-url", judge, "--judge-model", "judge")
        saved = json.loads((out / "checkpoints" / "reference_pointers.json").read_text())
        stats = summary(out)["reward_stats"]
        assert saved["report"] == stats["references"]
        assert stats["scored"] == 8 and summary(out)["completions"] == 8
        pointers.append(saved["pointers"])
    assert pointers[0] == pointers[1]
    assert sum(pointers[0].values()) == 4    # every completion won: 2 prompts a step, 2 steps


def test_gspo_r3_with_the_filter_matches_one_process(dataset_dir, tiny_model_dir, tmp_path):
    runs = []
    for processes in (1, 2):
        out = tmp_path / f"r3_{processes}"
        distill(processes, *gspo_args(dataset_dir, tiny_model_dir, out, 4 // processes),
                "--reward", "r3", "--r3-filter", "--filter-traces", "2",
                "--filter-drop-fraction", "0.4", "--filter-carry", "0", "--filter-top-k",
                "10000")
        runs.append(summary(out)["reward_stats"])
    one, two = runs
    assert one["r3_filter"]["passes"] == two["r3_filter"]["passes"]
    assert one["r3_filter"]["passes"][0]["too_flat"] >= 1
    assert one["sigma"]["groups"] == two["sigma"]["groups"] == 4   # whole groups, seen once
    assert one["scored"] == two["scored"] == 8


@pytest.mark.parametrize("stage", ["sft", "dpo"])
def test_sft_and_dpo_under_two_processes_write_one_checkpoint(dataset_dir, tiny_model_dir,
                                                              tmp_path, stage):
    out = tmp_path / stage
    distill(2, stage, "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
            str(out), "--max-steps", "2", "--batch-size", "1", "--save-steps", "2")
    assert (out / "final" / "config.json").is_file()
    assert [p.name for p in (out / "checkpoints").iterdir() if p.is_dir()] == ["checkpoint-2"]
    assert not Path(str(out) + ".partial").exists()
    assert summary(out)["steps"] == 2

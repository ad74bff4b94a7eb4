"""Trainer throughput: SFT tokens/s and GSPO completions/s, printed as one JSON line.

    python -m bench.train [--sft-steps 4] [--gspo-steps 2] [--shapes tiny,qwen2.5-0.5b]
                          [--varied-lengths] [--sft-args "..."] [--gspo-args "..."]
                          [--sft-compare "..."]

Each measurement runs `python -m training.distill sft|gspo` in a child process on a random
model built locally (nothing is downloaded) and a synthetic exported dataset whose RL prompts
carry the generic pack's checklist; the fake writer upstream is the judge. "tiny" and
"smollm2-135m" (SmolLM2-135M's shape, random weights) run on the CPU (CUDA hidden);
"qwen2.5-0.5b" (Qwen2.5-0.5B's shape, random weights) runs only where a GPU is present.
Figures are TRL's own `train_runtime`: tokens (TRL's `num_tokens`, prompt and completion
without padding) or completions scored, divided by it.

MFU (model FLOPs utilisation) of SFT = 6 x parameters (forward and backward FLOPs per token)
x tokens/s / the device's matmul rate measured in the same run: bf16 on a GPU, fp32 on the
CPU (the precision each shape trains in).

Beside the rates: where each stage's optimiser steps spent their time (`sft.time`,
`gspo.time`: seconds and shares of generation, reward, GSPO's log-probability passes, forward
and backward, the optimiser, and what happens between steps), the batch the stage trained with
and how it was chosen (given, or planned from free GPU memory), and the share of SFT's batches
that was padding. "tiny" trains with batch 4; "qwen2.5-0.5b" leaves the batch to the trainer
(planned from free memory). `--varied-lengths` gives the answers many lengths (as real data
has) instead of one; `--sft-args=...` / `--gspo-args=...` pass more options to a stage (e.g.
--sft-args=--no-group-by-length, --gspo-args="--generation-batch-size 128 --batch-size 8"), so
that each change can be measured as one JSON line before it becomes a default;
`--sft-compare=...` trains SFT a second time in the same run with those options added, and
gives both rates, both processes' peak resident memory and their ratio (e.g.
--sft-compare="--activation-checkpointing off" against --sft-args="--activation-checkpointing
on"). `--gspo-steps 0` measures SFT alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.fakes.tiny_model import build_tiny_model
from bench.fakes.train_data import PROMPTS, write_dataset
from bench.fakes.upstream import run_in_thread

ROOT = Path(__file__).resolve().parents[1]
# (rows per device per step (None: the trainer's plan), completion tokens, generations)
SETTINGS = {"tiny": {"batch": 4, "completion": 32, "generations": 4, "sentences": 8},
            "smollm2-135m": {"batch": 8, "completion": 64, "generations": 4, "sentences": 20},
            "qwen2.5-0.5b": {"batch": None, "completion": 256, "generations": 8,
                             "sentences": 40}}
CPU_SHAPES = ("tiny", "smollm2-135m")


def stage(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one stage in a child process; its summary (the last stdout line), with the child's
    peak resident memory (`peak_rss_gib`)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "training.distill", *argv], cwd=ROOT,
                                env=env, stdout=out, stderr=err, text=True)
        # wait4 alone gives this child's own resource use; Popen is told the child is reaped
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code != 0:
            raise SystemExit(f"{argv[0]} failed ({code}):\n{err.read()[-3000:]}")
        summary = json.loads(out.read().strip().splitlines()[-1])
    return {**summary, "peak_rss_gib": round(usage.ru_maxrss * 1024 / 2 ** 30, 2)}


def sft_rate(sft: dict[str, Any], args: str) -> dict[str, Any]:
    """One SFT measurement: tokens/s, seconds, peak memory, and the batch it trained with."""
    return {"tokens_per_s": round(sft["tokens"] / sft["train_runtime"], 1),
            "seconds": sft["train_runtime"], "peak_rss_gib": sft["peak_rss_gib"],
            "args": args, "batch": (sft.get("speed") or {}).get("batch")}


def measure(shape: str, work: Path, judge_url: str, sft_steps: int, gspo_steps: int,
            varied: bool = False, sft_args: str = "", gspo_args: str = "",
            sft_compare: str = "") -> dict[str, Any]:
    s = SETTINGS[shape]
    model = build_tiny_model(work / f"model-{shape}", PROMPTS, shape=shape)
    # Rows for every step of the largest batches the trainer may plan (64 SFT rows, 128
    # GSPO completions: 16 prompts).
    # Varied lengths: enough rows that the length-grouped sampler has mega-batches to sort.
    rows = max(256 if varied else 16, (s["batch"] or 64) * sft_steps, 16 * gspo_steps)
    data = write_dataset(work / f"data-{shape}", rows=rows, sentences=s["sentences"],
                         varied=varied)
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONWARNINGS": "ignore"}
    if shape in CPU_SHAPES:
        env["CUDA_VISIBLE_DEVICES"] = ""
    common = ["--data", str(data), "--model", str(model), "--save-steps", "100000",
              "--logging-steps", "1", "--overwrite"]
    if s["batch"]:
        common += ["--batch-size", str(s["batch"])]
    sft = stage(["sft", *common, "--out", str(work / f"sft-{shape}"),
                 "--max-steps", str(sft_steps), *shlex.split(sft_args)], env)
    tokens_per_s = sft["tokens"] / sft["train_runtime"]
    parameters = count_parameters(model)
    rate = matmul_rate(cpu=shape in CPU_SHAPES)
    result: dict[str, Any] = {
        "device": "cpu" if shape in CPU_SHAPES else gpu_name(),
        "sft_tokens_per_s": round(tokens_per_s, 1),
        "parameters": parameters,
        "matmul_tflops": round(rate / 1e12, 3),
        "sft_mfu": round(6 * parameters * tokens_per_s / rate, 5),
        "sft_speed": sft.get("speed"),
        "sft": {"steps": sft["steps"], "tokens": sft["tokens"],
                "seconds": sft["train_runtime"], "args": sft_args, "time": sft.get("time"),
                "peak_rss_gib": sft["peak_rss_gib"]},
    }
    if sft_compare:
        args = f"{sft_args} {sft_compare}".strip()
        other = stage(["sft", *common, "--out", str(work / f"sft-{shape}-compared"),
                       "--max-steps", str(sft_steps), *shlex.split(args)], env)
        first, second = sft_rate(sft, sft_args), sft_rate(other, args)
        result["sft_compare"] = {
            "first": first, "second": second,
            "speedup": round(second["tokens_per_s"] / first["tokens_per_s"], 3),
            "memory_ratio": round(second["peak_rss_gib"] / first["peak_rss_gib"], 3)}
    if gspo_steps == 0:
        return result
    gspo = stage(["gspo", *common, "--out", str(work / f"gspo-{shape}"),
                  "--max-steps", str(gspo_steps), "--judge-url", judge_url,
                  "--judge-model", "fake-model", "--num-generations", str(s["generations"]),
                  "--max-completion-length", str(s["completion"]), "--eval-prompts", "0",
                  *shlex.split(gspo_args)], env)
    return {
        **result,
        "gspo_completions_per_s": round(gspo["completions"] / gspo["train_runtime"], 3),
        "gspo": {"steps": gspo["steps"], "completions": gspo["completions"],
                 "seconds": gspo["train_runtime"], "generations": s["generations"],
                 "max_completion_length": s["completion"], "generation": gspo["generation"],
                 "generation_batch": gspo.get("generation_batch"),
                 "batch": (gspo.get("speed") or {}).get("batch"), "args": gspo_args,
                 "time": gspo.get("time")},
    }


def count_parameters(model_dir: Path) -> int:
    from transformers import AutoConfig, AutoModelForCausalLM

    with __import__("torch").device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model_dir))
    return sum(p.numel() for p in model.parameters())


def matmul_rate(cpu: bool, size: int = 4096, seconds: float = 2.0) -> float:
    """FLOP/s of square matmuls on the device (bf16 on a GPU, fp32 on the CPU), best of a
    few timed rounds after a warm-up."""
    import time

    import torch

    device = "cpu" if cpu or not torch.cuda.is_available() else "cuda"
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    n = 1024 if device == "cpu" else size
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    a @ b
    sync()
    best = 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        for _ in range(8):
            a @ b
        sync()
        best = max(best, 8 * 2 * n ** 3 / (time.perf_counter() - start))
    return best


def reward_costs() -> dict[str, Any]:
    """Each GSPO reward's cost per completion on the CPU (see bench.reward_cost)."""
    from bench.reward_cost import measure_rewards

    return measure_rewards()


def gpu_name() -> str | None:
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sft-steps", type=int, default=4)
    parser.add_argument("--gspo-steps", type=int, default=2)
    parser.add_argument("--shapes", default="tiny,qwen2.5-0.5b",
                        help="comma-separated: tiny, smollm2-135m (CPU), qwen2.5-0.5b (skipped "
                        "without a GPU)")
    parser.add_argument("--work", help="keep models, data and stage outputs here (default: a "
                        "temporary directory, removed afterwards)")
    parser.add_argument("--varied-lengths", action="store_true",
                        help="answers of many lengths instead of one (padding then matters)")
    parser.add_argument("--sft-args", default="", help="more options for the sft stage "
                        "(write --sft-args=\"--opt value\")")
    parser.add_argument("--gspo-args", default="", help="more options for the gspo stage "
                        "(write --gspo-args=\"--opt value\")")
    parser.add_argument("--sft-compare", default="", help="train SFT again with these options "
                        "added, and give both rates and memories and their ratio")
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = set(shapes) - set(SETTINGS)
    if unknown:
        parser.error(f"unknown shape(s) {sorted(unknown)}; known: {sorted(SETTINGS)}")
    gpu = gpu_name()
    results: dict[str, Any] = {"gpu": gpu}
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp, \
            run_in_thread(responder="writer") as (judge_url, _):
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        for shape in shapes:
            if shape not in CPU_SHAPES and gpu is None:
                results[shape] = None  # needs a GPU
                continue
            print(f"measuring {shape} ...", file=sys.stderr, flush=True)
            results[shape] = measure(shape, work, judge_url, args.sft_steps,
                                     args.gspo_steps, args.varied_lengths, args.sft_args,
                                     args.gspo_args, args.sft_compare)
    results["reward_cost"] = reward_costs()
    print(json.dumps(results))


if __name__ == "__main__":
    main()

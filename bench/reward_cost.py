"""The cost of each GSPO reward per completion, on the CPU.

    python -m bench.reward_cost [--prompts 4] [--generations 8]

Every reward in `training.rewards.REWARDS` scores the same batch (prompts x generations
completions in R2-Write's think format) once after a warm-up batch: wall time per completion,
and judge requests per completion (the cost that dominates with a real judge, whose latency
the local fake upstream does not have). R3 runs the tiny random model in-process on the CPU
(`--r3-policy ref`: the same forward passes as `current`). Prints one JSON line;
`python -m bench.train` includes it.

    python -m bench.reward_cost --r3-shape qwen2.5-0.5b

measures R3 alone on a random model of Qwen2.5-0.5B's shape (bf16 on a GPU when there is one).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.fakes.tiny_model import build_tiny_model
from bench.fakes.train_data import PROMPTS, write_dataset


def completion(i: int, j: int) -> list[dict[str, str]]:
    draft = f"A first answer to request {i}, attempt {j}."
    answer = f"{draft} It adds a concrete detail (rev. 1) and a date, Friday." + " More." * j
    text = (f"<think>{draft}\n\nMy draft lacks a concrete detail; I will add one.\n\n"
            f"{answer}</think>\n{answer}")
    return [{"role": "assistant", "content": text}]


def _requests(responder: Any) -> int:
    return sum(responder.counts.values()) + sum(responder.writer.counts.values())


def measure_rewards(prompts: int = 4, generations: int = 8) -> dict[str, Any]:
    from bench.fakes.methods_judge import MethodsResponder
    from bench.fakes.upstream import run_in_thread
    from training.data.dataset import read_rows
    from training.rewards import REWARDS, make_reward
    from training.rewards.judge import Judge

    out: dict[str, Any] = {"device": "cpu", "completions": prompts * generations,
                           "ms_per_completion": {}, "judge_requests_per_completion": {}}
    with tempfile.TemporaryDirectory(prefix="bench-rewards-") as tmp, \
            run_in_thread(responder=MethodsResponder()) as (url, fake):
        model = build_tiny_model(Path(tmp) / "model", PROMPTS)
        data = write_dataset(Path(tmp) / "data", rows=prompts, sentences=8)
        rows = read_rows(str(data), "prompts", "train")
        config = SimpleNamespace(
            data=str(data), model=str(model), judge_concurrency=16, judge_retries=2,
            alpha=0.25, references="dynamic", r3_policy="ref", r3_weighting="sigma",
            r3_length_beta=0.5, r3_max_reference_tokens=512)
        batch = [r for r in rows for _ in range(generations)]
        columns = {k: [r[k] for r in batch] for k in ("id", "checklist", "reference")}
        completions = [completion(i, j) for i in range(prompts) for j in range(generations)]
        responder = fake.responder
        with Judge(url, "fake-model") as judge:
            for name in REWARDS:
                reward = make_reward(name, config, judge=judge)
                args = ([r["prompt"] for r in batch], completions)
                reward(*(a[:generations] for a in args),
                       **{k: v[:generations] for k, v in columns.items()})   # warm-up
                before = _requests(responder)
                start = time.perf_counter()
                rewards = reward(*args, **columns)
                seconds = time.perf_counter() - start
                assert len(rewards) == len(batch)
                n = len(batch)
                out["ms_per_completion"][name] = round(1000 * seconds / n, 2)
                out["judge_requests_per_completion"][name] = round(
                    (_requests(responder) - before) / n, 2)
        out["reference_words"] = len(rows[0]["reference"].split())
    return out


def measure_r3(shape: str, generations: int = 8, reference_tokens: int = 512,
               reasoning_tokens: int = 512, groups: int = 4) -> dict[str, Any]:
    """R3 alone, through `--reward r3 --r3-policy ref`'s factory (the frozen copy goes to this
    process's device, in bf16 where the device has it): ms per completion of a group of
    `generations` with a reference of `reference_tokens` tokens."""
    import torch

    from training.rewards.r3 import r3_reward

    with tempfile.TemporaryDirectory(prefix="bench-r3-") as tmp:
        model = build_tiny_model(Path(tmp) / "model", PROMPTS, shape=shape)
        config = SimpleNamespace(model=str(model), r3_policy="ref", r3_weighting="sigma",
                                 r3_length_beta=0.5, r3_max_reference_tokens=reference_tokens,
                                 precision="auto")
        reward = r3_reward(config)
        words = [w for p in PROMPTS for w in p.split()]
        reference = " ".join(words[i % len(words)] for i in range(reference_tokens))
        prompt = [{"role": "user", "content": PROMPTS[0]}]

        def thought(start: int) -> str:
            return " ".join(words[(start + i) % len(words)] for i in range(reasoning_tokens))

        def group(k: int) -> list[float | None]:
            texts = [f"<think>{thought(k + j)}</think>{reference[:200 + 10 * j]}"
                     for j in range(generations)]
            return reward([prompt] * generations, texts, id=["q"] * generations,
                          reference=[reference] * generations)

        group(0)                                                   # warm-up
        sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
        sync()
        start = time.perf_counter()
        for k in range(groups):
            assert all(r is not None for r in group(k + 1))
        sync()
        seconds = time.perf_counter() - start
        device = next(reward.model.parameters()).device
        return {"shape": shape, "device": torch.cuda.get_device_name(0)
                if device.type == "cuda" else "cpu", "dtype": str(reward.model.dtype),
                "generations": generations, "reference_tokens": reference_tokens,
                "reasoning_words": reasoning_tokens,
                "r3_ms_per_completion": round(1000 * seconds / (groups * generations), 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reward_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--r3-shape", choices=("tiny", "qwen2.5-0.5b"),
                        help="measure R3 alone on a random model of this shape, on the GPU "
                        "when there is one")
    args = parser.parse_args(argv)
    os.environ.setdefault("TQDM_DISABLE", "1")
    if args.r3_shape:
        print(json.dumps(measure_r3(args.r3_shape, args.generations)))
    else:
        print(json.dumps(measure_rewards(args.prompts, args.generations)))


if __name__ == "__main__":
    main()

"""`processbench`: R2-Write's ProcessBench. A model's trajectories on the exported prompts,
scored with the process reward's judge: the reflection segments of each `<think>` part, each
+1 only if the issue is real, the revision matches the rubric and the final answer carries it
out (`training.rewards.process`).

    python -m training.distill processbench --data DIR --url URL --model M [--judge-url URL]

Prints one JSON line: mean R_p, segments per answer, think length, the share of answers with
a `<think>` part, and how many could not be generated or judged.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tqdm import tqdm

from generation.errors import RedraftError
from generation.openai import OpenAIBackend
from generation.types import ChatParams
from training.config import ProcessbenchConfig
from training.data.dataset import read_manifest, read_rows
from training.errors import UsageError
from training.rewards.process import ProcessScore, process_score


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise(scores: list[ProcessScore | None]) -> dict[str, Any]:
    """The bench's figures from per-prompt scores (None: no trajectory was generated)."""
    done = [s for s in scores if s is not None]
    judged = [s for s in done if s.r_p is not None]
    return {"prompts": len(scores), "generated": len(done),
            "generation_failures": len(scores) - len(done),
            "judge_failures": len(done) - len(judged),
            "mean_r_p": _mean([s.r_p for s in judged if s.r_p is not None]),
            "segments_per_answer": _mean([float(s.segments) for s in judged]),
            "think_chars": _mean([float(s.think_chars) for s in done]),
            "with_think": _mean([float(s.think_chars > 0) for s in done])}


async def bench(config: ProcessbenchConfig,
                rows: list[dict[str, Any]]) -> list[ProcessScore | None]:
    writer = OpenAIBackend([config.url], model=config.model, api_key=config.api_key)
    judge = OpenAIBackend([config.judge_url or config.url],
                          model=config.judge_model or config.model,
                          api_key=config.judge_api_key or config.api_key)
    await writer.start()
    await judge.start()
    try:
        for name, backend in (("--url", writer), ("--judge-url", judge)):
            if not await backend.ready():
                raise UsageError(f"{name} is unreachable (GET /models failed)")
        semaphore = asyncio.Semaphore(config.concurrency)
        params = ChatParams(model=config.model, max_tokens=config.max_tokens)
        judge_params = ChatParams(model=config.judge_model or config.model, temperature=0.0)

        async def one(row: dict[str, Any]) -> ProcessScore | None:
            async with semaphore:
                try:
                    text = (await writer.chat(row["prompt"], params)).text
                except RedraftError:
                    return None
                return await process_score(judge, judge_params, row["prompt"], text,
                                           row.get("checklist"))

        tasks = [asyncio.ensure_future(one(r)) for r in rows]
        return [await t for t in tqdm(tasks, desc="processbench", unit="prompt")]
    finally:
        await writer.aclose()
        await judge.aclose()


def run_processbench(config: ProcessbenchConfig) -> int:
    read_manifest(config.data)
    rows = read_rows(config.data, "prompts", config.split)[:config.limit]
    if not rows:
        raise UsageError(f"--data {config.data} has no {config.split} prompts")
    scores = asyncio.run(bench(config, rows))
    summary = {"model": config.model, "split": config.split, **summarise(scores)}
    if config.out:
        per_prompt = [None if s is None else {"id": r["id"], "r_p": s.r_p,
                                              "segments": s.segments,
                                              "think_chars": s.think_chars}
                      for r, s in zip(rows, scores, strict=True)]
        Path(config.out).write_text(json.dumps({"summary": summary, "prompts": per_prompt},
                                               indent=1) + "\n")
    print(json.dumps(summary))
    return 0

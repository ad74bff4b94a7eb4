"""Trained direct against base direct, judged pairwise on content by a stronger model.

Pass rates say whether the stated requirements are met; they do not say whether the text is
still a good answer. So a stronger judge (any OpenAI-compatible server) compares the two
models' direct answers to each held-out prompt with the pairwise prompt of the trainer's
pairwise reward (`training.rewards.pairwise.compare`: substance, not length or position; ties
allowed). Which answer is shown first is drawn per prompt from the run's seed, so the judge's
position bias falls evenly and the same run gives the same order. Figures: wins, losses and
ties of the trained model, verdicts that could not be had, and wins + half the ties as a share
of the judged prompts.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from generation.openai import OpenAIBackend
from generation.types import ChatParams
from training.errors import UsageError
from training.rewards.pairwise import compare

CONCURRENCY = 4


def orders(keys: Sequence[str], seed: int) -> dict[str, bool]:
    """Per prompt key: True when the trained answer is shown first (as response A)."""
    rng = random.Random(f"flywheel-pairs/{seed}")
    return {key: rng.random() < 0.5 for key in keys}


def outcome(value: float | None, trained_first: bool) -> str:
    """The trained model's result from `compare`'s value for response B (1 B wins, 0 A wins,
    0.5 tie, None no verdict)."""
    if value is None:
        return "failed"
    if value == 0.5:
        return "tie"
    trained_won = (value == 0.0) if trained_first else (value == 1.0)
    return "win" if trained_won else "loss"


def tally(results: Sequence[str]) -> dict[str, Any]:
    wins, losses = results.count("win"), results.count("loss")
    ties, failed = results.count("tie"), results.count("failed")
    judged = wins + losses + ties
    return {"prompts": len(results), "judged": judged, "wins": wins, "losses": losses,
            "ties": ties, "failed": failed,
            "win_rate": round((wins + ties / 2) / judged, 4) if judged else None}


async def _judge(backend: OpenAIBackend, params: ChatParams, items: Sequence[dict[str, Any]],
                 seed: int) -> list[dict[str, Any]]:
    first = orders([i["key"] for i in items], seed)
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        trained_first = first[item["key"]]
        a, b = ((item["trained"], item["base"]) if trained_first
                else (item["base"], item["trained"]))
        async with semaphore:
            value = await compare(backend, params, [{"role": "user", "content": item["query"]}],
                                  a, b, None)
        return {"key": item["key"], "trained_first": trained_first, "value": value,
                "outcome": outcome(value, trained_first)}

    tasks = [asyncio.ensure_future(one(i)) for i in items]
    with tqdm(total=len(tasks), desc="pair judge", unit="pair") as bar:
        for task in asyncio.as_completed(tasks):
            await task
            bar.update()
    return [t.result() for t in tasks]


async def _run(url: str, model: str, api_key: str | None, max_tokens: int,
               items: Sequence[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    backend = OpenAIBackend([url], model=model, api_key=api_key)
    try:
        await backend.start()
        if not await backend.ready():
            raise UsageError(f"--pair-judge-url {url} is unreachable (GET /models failed)")
        params = ChatParams(model=model, temperature=0.0, max_tokens=max_tokens, seed=seed)
        return await _judge(backend, params, items, seed)
    finally:
        await backend.aclose()


def judge_pairs(config: Any, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One verdict per item ({"key", "query", "trained", "base"}), in the items' order."""
    return asyncio.run(_run(config.pair_judge_url, config.pair_judge_model,
                            config.pair_judge_api_key, config.pair_judge_max_tokens, items,
                            config.seed))

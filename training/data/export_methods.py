"""The writing-RL methods' part of `export`: margin-aware selection (`--select margin`) and
the R2-Write think format (`--format think`), applied to the rows `export` kept.

`kept` maps a prompt id to `training.data.rows.rows_of`'s bundle ({"sft", "prompt", "pair", ...});
the prompts row carries the loop's candidates, which both methods read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tqdm import tqdm

from llm.openai import OpenAIBackend
from llm.types import ChatParams
from training.data.selection import Competitor, select_with_competitor
from training.data.think import Voice, think_text
from training.errors import UsageError

Kept = dict[str, dict[str, Any]]


async def _ready(backend: OpenAIBackend, flag: str, url: str) -> None:
    await backend.start()
    if not await backend.ready():
        raise UsageError(f"{flag} {url} is unreachable (GET /models failed)")


async def select(config: Any, kept: Kept) -> tuple[Kept, dict[str, Any]]:
    competitor = None
    backends: list[OpenAIBackend] = []
    try:
        if config.competitor_url:
            judge_url = config.competitor_judge_url or config.competitor_url
            judge_model = config.competitor_judge_model or config.competitor_model
            writer = OpenAIBackend([config.competitor_url], model=config.competitor_model,
                                   api_key=config.competitor_api_key)
            judge = OpenAIBackend([judge_url], model=judge_model,
                                  api_key=config.competitor_api_key)
            backends = [writer, judge]
            await _ready(writer, "--competitor-url", config.competitor_url)
            await _ready(judge, "--competitor-judge-url", judge_url)
            competitor = Competitor(writer, judge, ChatParams(model=config.competitor_model),
                                    ChatParams(model=judge_model, temperature=0.0))
        selection = await select_with_competitor(
            [b["prompt"] for b in kept.values()], top_k=config.select_top_k,
            min_competitor_score=config.min_competitor_score, competitor=competitor)
    finally:
        for backend in backends:
            await backend.aclose()
    if not selection.kept:
        raise UsageError(f"--select margin kept no prompt ({selection.counts()}): lower "
                         "--min-competitor-score")
    return {k: kept[k] for k in selection.kept}, selection.counts()


async def think(config: Any, kept: Kept) -> dict[str, Any]:
    backend = None
    if config.voice_url:
        backend = OpenAIBackend([config.voice_url], model=config.voice_model,
                                api_key=config.voice_api_key)
        await _ready(backend, "--voice-url", config.voice_url)
    voice = Voice(backend, ChatParams(model=config.voice_model, temperature=0.3,
                                      max_tokens=512) if backend else None)
    try:
        for bundle in tqdm(kept.values(), desc="think trajectories", unit="loop", leave=False):
            sft = bundle["sft"]
            text = await think_text(sft["prompt"], bundle["prompt"]["candidates"], voice)
            bundle["sft"] = {**sft, "completion": [{"role": "assistant", "content": text}]}
    finally:
        if backend is not None:
            await backend.aclose()
    return {"rows": len(kept), "voice": config.voice_model or "template",
            "voice_calls": voice.calls, "voice_fallbacks": voice.fallbacks}


def apply_export_methods(config: Any, kept: Kept) -> tuple[Kept, dict[str, Any]]:
    """(the rows to write, the manifest counts of what the methods did)."""
    counts: dict[str, Any] = {}
    if getattr(config, "select", "none") == "margin":
        kept, counts["selection"] = asyncio.run(select(config, kept))
    if getattr(config, "format", "chat") == "think":
        counts["think"] = asyncio.run(think(config, kept))
    return kept, counts

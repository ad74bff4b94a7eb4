"""`export`: recorded loops → a versioned dataset directory (`training.data.dataset`).

Loops that ended degraded, errored or ran no loop are left out and counted; a prompt asked
several times keeps the loop with the best y*. Two writing-RL methods act on the rows kept:
margin-aware selection (`--select margin`, Writing-RL) and the think format (`--format think`,
R2-Write). `kept` maps a prompt id to `training.data.rows.rows_of`'s bundle ({"sft", "prompt",
"pair", ...}); the prompts row carries the loop's candidates, which both methods read.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from tqdm import tqdm

from generation.openai import OpenAIBackend
from generation.types import ChatParams
from training.config import ExportConfig
from training.data.dataset import VERSION, content_hash, split, write_dataset
from training.data.rows import Counter as TokenCounter
from training.data.rows import char_counter, left_out, rows_of
from training.data.selection import Competitor, select_with_competitor
from training.data.source import LoopQuery, database_url, parse_time, read_loops, redacted
from training.data.think import Voice, think_text
from training.errors import UsageError
from training.stages.checkpoints import StageDir, write_json
from training.stages.report import write_stage_report

LEFT_OUT = ("degraded", "passthrough", "errored", "filtered", "dropped_task", "cut_off")


def token_counter(tokenizer: str | None) -> TokenCounter:
    if tokenizer is None:
        return char_counter
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(tokenizer)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--tokenizer {tokenizer} is not a tokenizer: {exc}") from None
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def select(config: ExportConfig, records: list[Any],
           count: TokenCounter) -> tuple[dict[str, dict[str, Any]], Counter[str], int]:
    """(rows by prompt id, left-out counts, duplicates merged); newest loop wins a tie."""
    kept: dict[str, dict[str, Any]] = {}
    reasons: Counter[str] = Counter()
    duplicates = 0
    for record in tqdm(records, desc="export", unit="loop", leave=False):
        reason = left_out(record, config.min_final_score,
                          task_guard=not config.keep_dropped_task)
        if reason is not None:
            reasons[reason] += 1
            continue
        rows = rows_of(record, max_prompt_tokens=config.max_prompt_tokens, count=count,
                       min_gain=config.min_gain)
        old = kept.get(rows["id"])
        if old is not None:
            duplicates += 1
            if old["score"] >= rows["score"]:
                continue
        kept[rows["id"]] = rows
    return kept, reasons, duplicates


def run_export(config: ExportConfig) -> int:
    url = database_url(config.database)
    since, until = parse_time(config.since, "--since"), parse_time(config.until, "--until")
    if since and until and since >= until:
        raise UsageError("--since must be before --until")
    stage = StageDir(config.out, overwrite=config.overwrite)
    stage.check()
    count = token_counter(config.tokenizer)
    query = LoopQuery(namespace=config.namespace, since=since, until=until, model=config.model)
    records = read_loops(url, query)
    kept, reasons, duplicates = select(config, records, count)
    if not kept:
        why = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) or "none recorded"
        guard = " or pass --keep-dropped-task" if {"dropped_task", "cut_off"} & set(reasons) \
            else ""
        raise UsageError(f"no loops match the filters: {len(records)} read ({why}); "
                         "widen --since/--until/--namespace/--model or lower --min-final-score"
                         f"{guard}")
    kept, method_counts = apply_methods(config, kept)  # --select margin, --format think
    holdout = split(list(kept), config.holdout, config.seed)
    out = stage.open()
    try:
        counts = write_dataset(out, kept, holdout)
        manifest = {
            "version": VERSION, "created_at": datetime.now(UTC).isoformat(),
            "source_database": redacted(url),
            "filters": {"namespace": config.namespace, "since": config.since,
                        "until": config.until, "model": config.model,
                        "min_final_score": config.min_final_score, "min_gain": config.min_gain,
                        "holdout": config.holdout, "seed": config.seed,
                        "max_prompt_tokens": config.max_prompt_tokens,
                        "select": config.select, "select_top_k": config.select_top_k,
                        "min_competitor_score": config.min_competitor_score,
                        "competitor_model": config.competitor_model},
            "counts": {"loops_read": len(records), "kept": len(kept) + duplicates,
                       "left_out": {r: reasons.get(r, 0) for r in LEFT_OUT},
                       "prompts": len(kept), "duplicates_merged": duplicates,
                       "truncated_prompts": sum(r["truncated"] for r in kept.values()),
                       # loops whose answer is another text than the draft, scored higher
                       "gained": sum(r["gained"] for r in kept.values()),
                       **counts, **method_counts},
            "content_hash": content_hash(out), "format": config.format,
        }
        write_json(out / "manifest.json", manifest)
        write_stage_report(out, "export", [], {"counts": manifest["counts"]})
    except BaseException:
        stage.discard()
        raise
    stage.commit()
    print(json.dumps({"out": str(stage.out), **manifest["counts"]}))
    return 0


Kept = dict[str, dict[str, Any]]


async def _ready(backend: OpenAIBackend, flag: str, url: str) -> None:
    await backend.start()
    if not await backend.ready():
        raise UsageError(f"{flag} {url} is unreachable (GET /models failed)")


async def select_by_margin(config: Any, kept: Kept) -> tuple[Kept, dict[str, Any]]:
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


async def think_rows(config: Any, kept: Kept) -> dict[str, Any]:
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


def apply_methods(config: Any, kept: Kept) -> tuple[Kept, dict[str, Any]]:
    """(the rows to write, the manifest counts of what the methods did)."""
    counts: dict[str, Any] = {}
    if getattr(config, "select", "none") == "margin":
        kept, counts["selection"] = asyncio.run(select_by_margin(config, kept))
    if getattr(config, "format", "chat") == "think":
        counts["think"] = asyncio.run(think_rows(config, kept))
    return kept, counts

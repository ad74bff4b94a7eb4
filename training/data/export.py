"""`export`: recorded loops → a versioned dataset directory of JSONL files.

    OUT/manifest.json                      counts, filters, source database, content hash
    OUT/sft/{train,holdout}.jsonl          conversation → y*        (prompt/completion)
    OUT/prompts/{train,holdout}.jsonl      conversation + stored checklist, for RL
    OUT/pairs/{train,holdout}.jsonl        y* chosen vs draft y0    (prompt/chosen/rejected)

The held-out split is by prompt id, deterministic from --seed. A prompt asked several times
keeps the loop with the best y*.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from training.config import ExportConfig
from training.data.export_methods import apply_export_methods
from training.data.rows import Counter as TokenCounter
from training.data.rows import char_counter, left_out, rows_of
from training.data.source import LoopQuery, database_url, parse_time, read_loops, redacted
from training.errors import UsageError
from training.stages.checkpoints import StageDir, write_json
from training.stages.report import write_stage_report

VERSION = 1
KINDS = ("sft", "prompts", "pairs")
SPLITS = ("train", "holdout")
LEFT_OUT = ("degraded", "passthrough", "errored", "filtered")


def token_counter(tokenizer: str | None) -> TokenCounter:
    if tokenizer is None:
        return char_counter
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(tokenizer)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--tokenizer {tokenizer} is not a tokenizer: {exc}") from None
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def split(ids: list[str], share: float, seed: int) -> set[str]:
    """The held-out prompt ids: a seeded shuffle of the sorted ids, at least one when there
    are two or more prompts and `share` > 0, never all of them."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    if share <= 0 or len(order) < 2:
        return set()
    n = min(len(order) - 1, max(1, math.floor(share * len(order) + 0.5)))
    return set(order[:n])


def content_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for kind in KINDS:
        for name in SPLITS:
            path = root / kind / f"{name}.jsonl"
            digest.update(f"{kind}/{name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def select(config: ExportConfig, records: list[Any],
           count: TokenCounter) -> tuple[dict[str, dict[str, Any]], Counter[str], int]:
    """(rows by prompt id, left-out counts, duplicates merged); newest loop wins a tie."""
    kept: dict[str, dict[str, Any]] = {}
    reasons: Counter[str] = Counter()
    duplicates = 0
    for record in tqdm(records, desc="export", unit="loop", leave=False):
        reason = left_out(record, config.min_final_score)
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
        raise UsageError(f"no loops match the filters: {len(records)} read ({why}); "
                         "widen --since/--until/--namespace/--model or lower --min-final-score")
    kept, method_counts = apply_export_methods(config, kept)  # --select margin, --format think
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


def write_dataset(out: Path, kept: dict[str, dict[str, Any]],
                  holdout: set[str]) -> dict[str, dict[str, int]]:
    """The JSONL files; returns {"sft": {"train": n, "holdout": n}, "prompts_rows": ...}."""
    buckets: dict[tuple[str, str], list[dict[str, Any]]] = {
        (k, s): [] for k in KINDS for s in SPLITS}
    for qid in sorted(kept):
        rows, name = kept[qid], "holdout" if qid in holdout else "train"
        buckets["sft", name].append(rows["sft"])
        buckets["prompts", name].append(rows["prompt"])
        if rows["pair"] is not None:
            buckets["pairs", name].append(rows["pair"])
    for (kind, name), rows in buckets.items():
        _write_jsonl(out / kind / f"{name}.jsonl", rows)
    sizes = {k: {s: len(buckets[k, s]) for s in SPLITS} for k in KINDS}
    return {"sft": sizes["sft"], "prompts_rows": sizes["prompts"], "pairs": sizes["pairs"]}


def read_manifest(data: str) -> dict[str, Any]:
    """The manifest of an exported dataset directory, or a clear error."""
    path = Path(data) / "manifest.json"
    if not path.is_file():
        raise UsageError(f"--data {data} is not an exported dataset (no manifest.json); "
                         "write one with `python -m training.distill export`")
    manifest = json.loads(path.read_text())
    if manifest.get("version") != VERSION:
        raise UsageError(f"--data {data}: dataset version {manifest.get('version')} is not "
                         f"{VERSION}; export it again")
    return manifest


def read_rows(data: str, kind: str, name: str) -> list[dict[str, Any]]:
    """The rows of DATA/KIND/NAME.jsonl (empty when the file is empty)."""
    path = Path(data) / kind / f"{name}.jsonl"
    if not path.is_file():
        raise UsageError(f"--data {data} has no {kind}/{name}.jsonl; export it again")
    with path.open() as f:
        return [json.loads(line) for line in f if line.strip()]

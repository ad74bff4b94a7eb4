"""The exported dataset directory: its layout, held-out split, manifest and rows.

    DATA/manifest.json                      counts, filters, source database, content hash
    DATA/sft/{train,holdout}.jsonl          conversation → y*        (prompt/completion)
    DATA/prompts/{train,holdout}.jsonl      conversation + stored checklist, for RL
    DATA/pairs/{train,holdout}.jsonl        y* chosen vs draft y0    (prompt/chosen/rejected)

The held-out split is by prompt id, deterministic from the seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from pathlib import Path
from typing import Any

from training.errors import UsageError

VERSION = 1
KINDS = ("sft", "prompts", "pairs")
SPLITS = ("train", "holdout")


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


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


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
        write_jsonl(out / kind / f"{name}.jsonl", rows)
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

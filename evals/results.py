"""`results.jsonl` (one line per query x variant, the last line for a key wins) and `run.json`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evals.queries import UsageError

RESULTS = "results.jsonl"
RUN = "run.json"


def row_key(row: dict[str, Any]) -> tuple[str, str]:
    return row["query_id"], row["variant"]


def read_results(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The rows of a run by (query, variant). A torn last line (a killed run) is skipped."""
    path = out / RESULTS
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.exists():
        return rows
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows[row_key(row)] = row
        except (ValueError, KeyError, TypeError):
            if number == len(lines):
                continue
            raise UsageError(f"{path}:{number} is not a result line") from None
    return rows


def drop_torn_tail(out: Path) -> None:
    """Cut a last line a killed run left half-written, so that appends start on a new line."""
    path = out / RESULTS
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[:data.rfind(b"\n") + 1])


def read_run(out: Path) -> dict[str, Any]:
    path = out / RUN
    if not path.is_dir() and not out.is_dir():
        raise UsageError(f"{out} is not a directory")
    if not path.exists():
        raise UsageError(f"{out} has no {RUN}: not a `redraft eval` output directory")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from None


def write_json(path: Path, data: Any) -> None:
    """Written whole or not at all (a temporary file renamed over the old one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def final_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["variant"], r["query_id"]))

"""summary.json, table.md and the figures of an output directory, from its result lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.figures import draw_all
from evals.results import final_rows, read_results, read_run, write_json, write_text
from evals.summary import summarise
from evals.table import render

SUMMARY = "summary.json"
TABLE = "table.md"


def build(out: Path) -> tuple[dict[str, Any], list[Path]]:
    """Write the report files of `out` (again); the summary and the figures made."""
    run = read_run(out)
    rows = final_rows(read_results(out).values())
    summary = summarise(rows, run)
    figures = draw_all(summary, out)
    summary["figures"] = [p.name for p in figures]
    write_json(out / SUMMARY, summary)
    write_text(out / TABLE, render(summary))
    return summary, figures

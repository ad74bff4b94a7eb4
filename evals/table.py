"""table.md: WritingBench scores laid out like Writer-R1's Table 3, then what each row cost."""

from __future__ import annotations

from typing import Any

from evals.methods import LABELS
from evals.queries import DOMAINS, FOCI

SCORE_COLUMNS = ("Overall", *(f"D{i}" for i in range(1, 7)),
                 *(f"{f.capitalize()} {part}" for f in FOCI for part in ("R", "C")),
                 "All checks pass", "Checks passed")
COST_COLUMNS = ("Queries", "Scored", "Judge missing", "Errors", "Mean rounds",
                "Rounds to τ", "Reached τ", "Hidden calls / query", "Tokens / query",
                "p50 latency (s)", "p95 latency (s)", "Stop reasons", "Judge tokens / query")


def _score(value: float | None) -> str:
    return "–" if value is None else f"{10 * value:.2f}"


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def _label(variant: dict[str, Any]) -> str:
    name = LABELS.get(variant.get("method", ""), variant["key"])
    if variant.get("method") in (None, "direct"):
        return name
    return f"{name}, T={variant['max_rounds']}, τ={variant['threshold']:g}"


def share(value: float | None) -> str:
    """A pass rate as a percentage; "n/a" where no query had checks."""
    return "n/a" if value is None else f"{100 * value:.0f}%"


def score_row(variant: dict[str, Any]) -> list[str]:
    s = variant["scores"]
    cells = [_score(s["overall"]), *(_score(s["domains"][f"D{i}"]) for i in range(1, 7))]
    for focus in FOCI:
        cells += [_score(s["requirements"][focus]["R"]), _score(s["requirements"][focus]["C"])]
    checks = variant.get("checks") or {}
    return [*cells, share(checks.get("prompt_level")), share(checks.get("check_level"))]


def cost_row(variant: dict[str, Any]) -> list[str]:
    c, j = variant["cost"], variant["judge"]
    stops = ", ".join(f"{k} {v}" for k, v in c["stop_reasons"].items()) or "–"
    reached = "–" if c["threshold_rate"] is None else f"{100 * c['threshold_rate']:.0f}%"
    return [str(variant["queries"]), str(variant["scored"]), str(variant["judge_missing"]),
            str(variant["errors"]), _num(c["rounds"]), _num(c["rounds_to_threshold"]), reached,
            _num(c["hidden_calls"], 1), _num(c["tokens"], 0), _num(c["latency_p50_s"]),
            _num(c["latency_p95_s"]), stops, _num(j["tokens_per_query"], 0)]


def _table(header: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def render(summary: dict[str, Any], title: str | None = None) -> str:
    options = summary.get("options", {})
    variants = summary["variants"]
    head = title or (f"WritingBench: {options.get('model', '?')} through redraft "
                     f"{summary.get('redraft_version') or ''}, judged by "
                     f"{options.get('judge_model', '?')}")
    domains = "; ".join(f"D{i} {d}" for i, d in enumerate(DOMAINS, 1))
    lines = [f"# {head}", "",
             f"{summary.get('queries', 0)} queries. Scores on WritingBench's 1–10 scale (the "
             "mean of the judge's per-criterion scores). R: queries with that requirement; "
             "C: only the criteria tagged with it. " + domains + ". Checks (requirements "
             "verified in code): the share of answers passing all their query's checks, and "
             "of all checks passed; n/a where no query had checks.", ""]
    lines += _table(("Method", *SCORE_COLUMNS), [[_label(v), *score_row(v)] for v in variants])
    lines += ["", "## Cost", ""]
    lines += _table(("Method", *COST_COLUMNS), [[_label(v), *cost_row(v)] for v in variants])
    return "\n".join(lines) + "\n"

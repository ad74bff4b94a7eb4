"""`redraft eval --compare BEFORE AFTER`: what changed between two runs, query by query.

The flywheel's measure: the same queries and variants before and after (e.g. before and after
`python -m training.distill`), paired, with a bootstrap 95% interval for the score difference.
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean
from typing import Any

import numpy as np

from evals.queries import UsageError
from evals.results import read_results, read_run
from evals.summary import check_rates, query_checks

RESAMPLES = 10_000


def paired_bootstrap(before: list[float], after: list[float], *, resamples: int = RESAMPLES,
                     seed: int = 0) -> tuple[float, float, float]:
    """Mean of after - before and its 95% percentile interval over resampled query sets."""
    diffs = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(diffs), size=(resamples, len(diffs)))
    means = diffs[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diffs.mean()), float(low), float(high)


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def compare(before_dir: Path, after_dir: Path) -> dict[str, Any]:
    runs = [read_run(d) for d in (before_dir, after_dir)]
    before, after = read_results(before_dir), read_results(after_dir)
    # Both sides of a pair are held to the same checks: the earlier run's, else the later's.
    found = {**query_checks(list(after.values()), _order(runs[1])),
             **query_checks(list(before.values()), _order(runs[0]))}
    variants: dict[str, Any] = {}
    for key in dict.fromkeys(v for (_, v) in (*before, *after)):
        pairs = [(before[k], after[k]) for k in before if k[1] == key and k in after]
        scored = [(b, a) for b, a in pairs
                  if b.get("score") is not None and a.get("score") is not None]
        answered = [(b, a) for b, a in pairs
                    if b.get("answer") is not None and a.get("answer") is not None]
        if not answered:
            continue
        entry: dict[str, Any] = {"pairs": len(scored)}
        if scored:
            diff, low, high = paired_bootstrap([b["score"] for b, _ in scored],
                                               [a["score"] for _, a in scored])
            entry.update(before=fmean(b["score"] for b, _ in scored),
                         after=fmean(a["score"] for _, a in scored), diff=diff, ci95=[low, high])
        for side, index in (("before", 0), ("after", 1)):
            rows = [pair[index] for pair in answered]
            reached = [r.get("rounds") or 0 for r in rows if r.get("stop_reason") == "threshold"]
            entry[f"rounds_{side}"] = _mean([r.get("rounds") or 0 for r in rows])
            entry[f"rounds_to_threshold_{side}"] = _mean(reached)
            entry[f"tokens_{side}"] = _mean([r["usage"]["total_tokens"] for r in rows])
            rates = check_rates(rows, found)
            entry[f"checks_{side}"] = {k: rates[k] for k in ("prompt_level", "check_level")}
        entry["checked_pairs"] = rates["queries"]
        variants[key] = entry
    if not variants:
        raise UsageError(f"{before_dir} and {after_dir} share no answered (query, variant) "
                         "pair: run the same queries and methods in both")
    return {"before": {"dir": str(before_dir), "model": runs[0]["options"].get("model")},
            "after": {"dir": str(after_dir), "model": runs[1]["options"].get("model")},
            "variants": variants}


def _order(run: dict[str, Any]) -> list[str]:
    return [v["key"] for v in run.get("variants") or ()]


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _f(value: float | None, scale: float = 1.0, digits: int = 2, sign: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value * scale:+.{digits}f}" if sign else f"{value * scale:.{digits}f}"


def render(result: dict[str, Any]) -> str:
    b, a = result["before"], result["after"]
    lines = [f"before: {b['dir']} ({b['model']})", f"after:  {a['dir']} ({a['model']})", "",
             "Scores on WritingBench's 1–10 scale; Δ with its paired bootstrap 95% interval.",
             "",
             "| Variant | Pairs | Before | After | Δ score | 95% CI | Rounds | Rounds to τ "
             "| Tokens / query | All checks pass | Checks passed |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, v in result["variants"].items():
        ci = "–" if "ci95" not in v else \
            f"[{_f(v['ci95'][0], 10, sign=True)}, {_f(v['ci95'][1], 10, sign=True)}]"
        lines.append(
            f"| {key} | {v['pairs']} | {_f(v.get('before'), 10)} | {_f(v.get('after'), 10)} | "
            f"{_f(v.get('diff'), 10, sign=True)} | {ci} | "
            f"{_f(v['rounds_before'])} → {_f(v['rounds_after'])} | "
            f"{_f(v['rounds_to_threshold_before'])} → {_f(v['rounds_to_threshold_after'])} | "
            f"{_f(v['tokens_before'], digits=0)} → {_f(v['tokens_after'], digits=0)} | "
            f"{_checks(v, 'prompt_level')} | {_checks(v, 'check_level')} |")
    return "\n".join(lines) + "\n"


def _checks(entry: dict[str, Any], level: str) -> str:
    before, after = entry["checks_before"][level], entry["checks_after"][level]
    if before is None and after is None:
        return "n/a"
    return f"{_share(before)} → {_share(after)}"

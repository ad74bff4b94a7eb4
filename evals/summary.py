"""Per-variant figures from result lines: WritingBench's scores and what the loop cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean
from typing import Any

import numpy as np

from evals.queries import DOMAINS, FOCI


def mean(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return round(fmean(got), 4) if got else None


def percentile(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values else None


def focus_score(row: dict[str, Any], focus: str) -> float | None:
    """C: the mean of only the criteria a requirement tags for this query, / 10."""
    names = (row.get("focus") or {}).get(focus) or []
    scores = row.get("scores") or {}
    picked = [scores[n] for n in names if n in scores]
    return sum(picked) / len(picked) / 10 if picked else None


def scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Overall, D1-D6, languages, and R / C for style, format and length."""
    scored = [r for r in rows if r.get("score") is not None]

    def over(keep: Callable[[dict[str, Any]], bool]) -> float | None:
        return mean(r["score"] for r in scored if keep(r))

    out: dict[str, Any] = {"overall": mean(r["score"] for r in scored)}
    out["domains"] = {f"D{i}": over(lambda r, d=d: r["domain1"] == d)
                      for i, d in enumerate(DOMAINS, 1)}
    out["languages"] = {lang: over(lambda r, lang=lang: r["language"] == lang)
                        for lang in ("en", "zh")}
    out["requirements"] = {}
    for focus in FOCI:
        tagged = [r for r in scored if focus in (r.get("focus") or {})]
        out["requirements"][focus] = {
            "R": mean(r["score"] for r in tagged),
            "C": mean(focus_score(r, focus) for r in tagged), "n": len(tagged)}
    return out


def costs(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Rounds, hidden calls, tokens, latency and stop reasons of the answered queries."""
    answered = [r for r in rows if r.get("answer") is not None]
    latencies = [r["latency_s"] for r in answered if r.get("latency_s") is not None]
    stops = Counter(r.get("stop_reason") or "none" for r in answered)
    loops = [r for r in answered if r.get("loop_id")]  # direct answers ran no loop
    reached = [r for r in loops if r.get("stop_reason") == "threshold"]
    return {
        "rounds": mean(r.get("rounds") or 0 for r in answered),
        "rounds_histogram": dict(sorted(Counter(r.get("rounds") or 0 for r in answered).items())),
        "threshold_rate": round(len(reached) / len(loops), 4) if loops else None,
        "rounds_to_threshold": mean(r.get("rounds") or 0 for r in reached),
        "hidden_calls": mean(r.get("hidden_calls") for r in answered),
        "tokens": mean(r["usage"]["total_tokens"] for r in answered),
        "prompt_tokens": mean(r["usage"]["prompt_tokens"] for r in answered),
        "completion_tokens": mean(r["usage"]["completion_tokens"] for r in answered),
        "latency_p50_s": percentile(latencies, 50),
        "latency_p95_s": percentile(latencies, 95),
        "stop_reasons": dict(stops.most_common()),
    }


def judge_cost(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    judged = [r["judge"] for r in rows if r.get("judge")]
    tokens = [j["prompt_tokens"] + j["completion_tokens"] for j in judged]
    return {"calls": sum(j["calls"] for j in judged),
            "prompt_tokens": sum(j["prompt_tokens"] for j in judged),
            "completion_tokens": sum(j["completion_tokens"] for j in judged),
            "tokens_per_query": mean(tokens), "calls_per_query": mean(j["calls"] for j in judged),
            "seconds": round(sum(j["seconds"] for j in judged), 3)}


def summarise(rows: Sequence[dict[str, Any]], run: dict[str, Any]) -> dict[str, Any]:
    """summary.json: the run's options, versions and every variant's figures."""
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_variant.setdefault(row["variant"], []).append(row)
    out = []
    for variant in run.get("variants") or [{"key": k} for k in by_variant]:
        part = by_variant.get(variant["key"], [])
        status = Counter(r.get("status") for r in part)
        out.append({**variant, "queries": len(part), "scored": status["ok"],
                    "judge_missing": status["judge_missing"], "errors": status["error"],
                    "scores": scores(part), "cost": costs(part), "judge": judge_cost(part)})
    return {"options": run.get("options", {}), "redraft_version": run.get("redraft_version"),
            "queries": len(run.get("queries") or []), "variants": out}

"""Per-variant figures from result lines: WritingBench's scores, the checks' pass rates and what
the loop cost.

Checks (requirements verified in code, `rubrics.checks`) are run on every answer when the report
is built, so every method of a query is held to the same checks. Where a query's checks come
from: the deterministic pre-pass on the query (`rubrics.checks.prepass`) for a WritingBench
query; otherwise the checks of the checklist a loop of that query returned (the first variant in
the run's order whose server answer carried a checklist with checks); otherwise none, and the
pass rates read "n/a". Prompt level: the share of queries whose answer passes every check; check
level: the share of all checks passed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean
from typing import Any

import numpy as np

from evals.queries import DOMAINS, FOCI, load_queries
from rubrics.checks import Check, run_checks
from rubrics.checks.kinds import KINDS
from rubrics.checks.prepass import prepass

QueryChecks = dict[str, tuple[str, tuple[Check, ...]]]  # query id -> (source, checks)


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


def parse_checks(items: Iterable[Any] | None) -> tuple[Check, ...]:
    """Checks from stored JSON; entries that do not parse or whose kind this version does not
    know are skipped."""
    out = []
    for item in items or ():
        try:
            check = item if isinstance(item, Check) else Check.model_validate(item)
        except ValueError:
            continue
        if check.kind in KINDS:
            out.append(check)
    return tuple(out)


def query_checks(rows: Sequence[dict[str, Any]],
                 order: Sequence[str] = ()) -> QueryChecks:
    """Each query's checks and where they came from (see the module docstring)."""
    ids = list(dict.fromkeys(r["query_id"] for r in rows))
    out: QueryChecks = {}
    texts = {q.id: q.query for q in load_queries() if q.id in set(ids)}
    for qid in ids:
        if qid in texts:
            out[qid] = ("prepass", prepass(texts[qid]))
    rank = {key: i for i, key in enumerate(order)}
    for r in sorted(rows, key=lambda r: rank.get(r.get("variant"), len(rank))):
        qid = r["query_id"]
        if qid not in out and (found := parse_checks(r.get("loop_checks"))):
            out[qid] = ("loop", found)
    return out


def check_rates(rows: Sequence[dict[str, Any]], found: QueryChecks) -> dict[str, Any]:
    """Prompt- and check-level pass rates of the answered rows whose query has checks; None
    (shown "n/a") when none has."""
    passed = run = all_pass = queries = 0
    sources: Counter[str] = Counter()
    for r in rows:
        source, checks = found.get(r["query_id"], ("none", ()))
        if r.get("answer") is None or not checks:
            continue
        outcomes = run_checks(r["answer"], checks)
        queries += 1
        run += len(outcomes)
        passed += sum(o.passed for o in outcomes)
        all_pass += all(o.passed for o in outcomes)
        sources[source] += 1
    return {"prompt_level": round(all_pass / queries, 4) if queries else None,
            "check_level": round(passed / run, 4) if run else None,
            "queries": queries, "checks": run, "sources": dict(sources)}


def summarise(rows: Sequence[dict[str, Any]], run: dict[str, Any]) -> dict[str, Any]:
    """summary.json: the run's options, versions and every variant's figures."""
    found = query_checks(rows, [v["key"] for v in run.get("variants") or ()])
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_variant.setdefault(row["variant"], []).append(row)
    out = []
    for variant in run.get("variants") or [{"key": k} for k in by_variant]:
        part = by_variant.get(variant["key"], [])
        status = Counter(r.get("status") for r in part)
        out.append({**variant, "queries": len(part), "scored": status["ok"],
                    "judge_missing": status["judge_missing"], "errors": status["error"],
                    "scores": scores(part), "checks": check_rates(part, found),
                    "cost": costs(part), "judge": judge_cost(part)})
    return {"options": run.get("options", {}), "redraft_version": run.get("redraft_version"),
            "queries": len(run.get("queries") or []), "variants": out}

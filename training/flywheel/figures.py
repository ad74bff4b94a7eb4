"""The figures of one evaluated method, from its answers and the prompts' attached checks.

Per method: the prompt-level pass rate (every attached check passes), the check-level pass
rate (the share of all attached checks passed) and the same per check kind; what an answer
cost (tokens of every hidden call, prompt and completion, and seconds); the share of answers
that loop on themselves (`loops.answer.looping`); distinct-2 over all the method's answers
(distinct word pairs / word pairs, each answer's pairs counted within it); the mean length in
words and its ratio to base direct's. A request that failed counts as an answer with no text.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from loops.answer import looping
from rubrics.checks import run_checks
from rubrics.checks.kinds import count_words
from training.data.prompts import Prompt

_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+")


def passed(text: str, prompt: Prompt) -> list[bool]:
    """Each attached check of `prompt` on `text`."""
    return [o.passed for o in run_checks(text, prompt.run_checks())]


def distinct_2(texts: Sequence[str]) -> float | None:
    """Distinct word bigrams over all bigrams of `texts` (None when there are none)."""
    grams: Counter[tuple[str, str]] = Counter()
    for text in texts:
        words = _TOKEN.findall(text.lower())
        grams.update(zip(words, words[1:], strict=False))
    total = sum(grams.values())
    return round(len(grams) / total, 4) if total else None


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def per_kind(prompts: Sequence[Prompt], results: Sequence[list[bool]]) -> dict[str, Any]:
    """{kind: {"checks", "passed", "pass_rate"}}, kinds in name order."""
    counts: dict[str, list[int]] = {}
    for prompt, outcome in zip(prompts, results, strict=True):
        for kind, ok in zip(prompt.kinds, outcome, strict=True):
            entry = counts.setdefault(kind, [0, 0])
            entry[0] += 1
            entry[1] += ok
    return {kind: {"checks": n, "passed": k, "pass_rate": round(k / n, 4)}
            for kind, (n, k) in sorted(counts.items())}


def summarise(prompts: Sequence[Prompt], rows: Sequence[dict[str, Any]],
              base_words: float | None = None) -> dict[str, Any]:
    """The figures of one method; `rows[i]` answers `prompts[i]`."""
    texts = [r["text"] for r in rows]
    results = [passed(t, p) for t, p in zip(texts, prompts, strict=True)]
    checks = [ok for outcome in results for ok in outcome]
    words = [count_words(t) for t in texts]
    mean_words = _mean(words)
    out: dict[str, Any] = {
        "prompts": len(rows),
        "errors": sum(r.get("error") is not None for r in rows),
        "prompt_pass_rate": round(sum(all(o) for o in results) / len(rows), 4),
        "prompts_passed": sum(all(o) for o in results),
        "check_pass_rate": round(sum(checks) / len(checks), 4) if checks else None,
        "checks": len(checks), "checks_passed": sum(checks),
        "per_kind": per_kind(prompts, results),
        "tokens": _mean([r["total_tokens"] for r in rows]),
        "prompt_tokens": _mean([r["prompt_tokens"] for r in rows]),
        "completion_tokens": _mean([r["completion_tokens"] for r in rows]),
        "seconds": _mean([r["seconds"] for r in rows]),
        "looping_share": round(sum(looping(t) for t in texts) / len(rows), 4),
        "distinct_2": distinct_2(texts),
        "words": mean_words,
        "length_vs_base": round(mean_words / base_words, 4)
        if base_words and mean_words is not None else None,
    }
    loops = [r["reflection"] for r in rows if isinstance(r.get("reflection"), dict)
             and "loop_id" in r["reflection"]]
    if loops:
        out["loop"] = {
            "loops": len(loops),
            "rounds": _mean([x.get("rounds") or 0 for x in loops]),
            "stop_reasons": dict(sorted(Counter(str(x.get("stop_reason"))
                                                for x in loops).items())),
            # loops whose request stated no check the pre-pass could read: judged instead
            "judged": sum(x.get("checklist_source") not in ("checks", "user") for x in loops),
            "degraded": sum(bool(x.get("degradations")) for x in loops),
        }
    return out


def timing_free(figures: Any) -> Any:
    """`figures` without what a rerun cannot repeat (seconds, wall times): what the
    determinism of an evaluation is checked on."""
    if isinstance(figures, dict):
        return {k: timing_free(v) for k, v in figures.items()
                if k not in ("seconds", "wall_seconds", "stage_seconds")}
    if isinstance(figures, list):
        return [timing_free(v) for v in figures]
    return figures

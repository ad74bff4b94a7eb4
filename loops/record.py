"""A finished loop as the store keeps it (one record, written in one transaction).

A candidate's check outcomes ride in its `scores` JSON under the reserved key `CHECKS_KEY`
(a list of {kind, passed, measured, target, quote}), beside the per-dimension entries;
`SHRUNK_KEY` marks a rewrite that dropped most of the text it revised, `REJUDGED_KEY` one
whose first judgement copied its parent's scores (asked again, `loops.judges.assess.judged_alike`)
and `ANSWER_KEY` the candidate the loop returned (y*, chosen by the rule in `loops.answer`,
which a total score alone does not reproduce); `stored_checks`, `dimension_scores` and
`answer_of` read them apart again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from generation.types import Usage
from loops.trace import Candidate, LoopTrace
from rubrics.checks import CheckOutcome
from store.records import CandidateRecord, LoopRecord


def usage_dict(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}


CHECKS_KEY = "_checks"
SHRUNK_KEY = "_shrunk"
ANSWER_KEY = "_answer"
REJUDGED_KEY = "_rejudged"
LOOPING_KEY = "_looping"
CONFORMED_KEY = "_conformed"   # check kinds met in code on the model's text
SAME_AS_KEY = "_same_as"       # the earlier candidate with this very text (judged once)
RETRIED_KEY = "_retried"       # asked again: the first rewrite gave its parent back unchanged
UNSUPPORTED_KEY = "_unsupported"  # a gain the judge did not quote the text for: not counted
PADDED_KEY = "_padded"         # sentences a rewrite says twice that its parent said once
OFF_LANGUAGE_KEY = "_off_language"  # a rewrite in another language than its parent
OFF_TOPIC_KEY = "_off_topic"   # a rewrite that left the request's topic its parent kept
CUT_KEY = "_cut"               # the call that wrote the text stopped at the token limit
RESERVED = (CHECKS_KEY, SHRUNK_KEY, ANSWER_KEY, REJUDGED_KEY, LOOPING_KEY,
            CONFORMED_KEY, SAME_AS_KEY, RETRIED_KEY, UNSUPPORTED_KEY, PADDED_KEY,
            OFF_LANGUAGE_KEY, OFF_TOPIC_KEY, CUT_KEY)


def stored_checks(scores: dict[str, Any] | None) -> tuple[CheckOutcome, ...]:
    """The check outcomes a stored candidate carries (none for loops recorded before checks,
    and entries that do not parse are skipped)."""
    out = []
    for item in (scores or {}).get(CHECKS_KEY) or ():
        try:
            out.append(CheckOutcome.model_validate(item))
        except ValueError:
            continue
    return tuple(out)


def dimension_scores(scores: dict[str, Any] | None) -> dict[str, Any]:
    """The per-dimension entries of a stored candidate's scores, without the reserved keys."""
    return {k: v for k, v in (scores or {}).items() if k not in RESERVED}


def answer_of(candidates: Sequence[CandidateRecord]) -> CandidateRecord | None:
    """y* of a stored loop: the candidate marked as the answer; for loops recorded before the
    mark, the highest total score (the earliest on a tie); None when nothing was scored."""
    for c in candidates:
        if (c.scores or {}).get(ANSWER_KEY):
            return c
    scored = [c for c in candidates if c.total_score is not None]
    return max(scored, key=lambda c: (c.total_score, -c.position)) if scored else None


def candidate_record(c: Candidate, answer: bool = False) -> CandidateRecord:
    scores: dict[str, Any] = {}
    if c.evaluation is not None:
        scores = {s.name: {"score": s.score, "evidence": s.evidence, "band": s.band}
                  for s in c.evaluation.scores}
    if c.checks:
        scores[CHECKS_KEY] = [o.model_dump(mode="json") for o in c.checks]
    if c.shrunk:
        scores[SHRUNK_KEY] = True
    if c.rejudged:
        scores[REJUDGED_KEY] = True
    if c.looping:
        scores[LOOPING_KEY] = True
    if c.conformed:
        scores[CONFORMED_KEY] = list(c.conformed)
    if c.same_as is not None:
        scores[SAME_AS_KEY] = c.same_as
    if c.retried:
        scores[RETRIED_KEY] = True
    if c.unsupported:
        scores[UNSUPPORTED_KEY] = True
    if c.padded:
        scores[PADDED_KEY] = list(c.padded)
    if c.off_language:
        scores[OFF_LANGUAGE_KEY] = True
    if c.off_topic:
        scores[OFF_TOPIC_KEY] = True
    if c.finish_reason == "length":
        scores[CUT_KEY] = True
    if answer:
        scores[ANSWER_KEY] = True
    return CandidateRecord(
        position=c.position, round=c.round, kind=c.kind, text=c.text, parent_position=c.parent,
        scores=scores, total_score=c.score,
        reflection=c.reflection.as_dict() if c.reflection is not None else None,
        usage=usage_dict(c.usage), latency_ms=c.latency_ms)


def stage_usage(trace: LoopTrace) -> dict[str, Any]:
    return {stage: {**usage_dict(u), "calls": trace.ledger.calls[stage]}
            for stage, u in trace.ledger.usage.items()}


def to_record(trace: LoopTrace, *, namespace: str, request: dict[str, Any], model: str,
              backend: str) -> LoopRecord:
    finished = datetime.now(UTC)
    scores = trace.scores
    return LoopRecord(
        id=trace.loop_id, namespace=namespace, model=model, backend=backend, request=request,
        created_at=finished - timedelta(seconds=trace.elapsed), finished_at=finished,
        checklist=trace.checklist.model_dump(mode="json"),
        checklist_source=trace.checklist_source, checklist_id=trace.checklist_id,
        stop_reason=trace.stop_reason, rounds=trace.rounds,
        initial_score=scores[0] if scores else None, final_score=trace.answer.score,
        usage={**stage_usage(trace), "total": usage_dict(trace.ledger.total)},
        timings={**{k: round(v, 4) for k, v in trace.ledger.seconds.items()},
                 "total": round(trace.elapsed, 4)},
        experiences=trace.experiences,
        candidates=tuple(candidate_record(c, c.position == trace.answer.position)
                         for c in trace.candidates),
        degradations=tuple(d.as_dict() for d in trace.degradations))

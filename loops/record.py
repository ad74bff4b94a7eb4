"""A finished loop as the store keeps it (one record, written in one transaction)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from llm.types import Usage
from loops.trace import Candidate, LoopTrace
from store.records import CandidateRecord, LoopRecord


def usage_dict(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}


def candidate_record(c: Candidate) -> CandidateRecord:
    scores = {}
    if c.evaluation is not None:
        scores = {s.name: {"score": s.score, "evidence": s.evidence, "band": s.band}
                  for s in c.evaluation.scores}
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
        candidates=tuple(candidate_record(c) for c in trace.candidates))

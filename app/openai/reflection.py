"""The `reflection` request object to loop options, and a finished loop to response fields."""

from __future__ import annotations

import re
from typing import Any

from app.openai.wire import ReflectionOptions
from app.settings import ReflectionSettings
from generation.errors import InvalidRequest
from loops.checklists import ChecklistSpec
from loops.options import LoopOptions
from loops.record import candidate_record, dimension_scores, stage_usage, usage_dict
from loops.trace import LoopTrace

_STORED_ID = re.compile(r"^[0-9a-f]{32}$")


def skip_reason(opts: ReflectionOptions | None, defaults: ReflectionSettings, *, tools: bool,
                json_output: str | None) -> str | None:
    """Why the loop will not run for a request, or None when it will. `json_output` names the
    field that asked for JSON (`response_format`, `text.format`), if one did."""
    enabled = opts.enabled if opts is not None and opts.enabled is not None else defaults.enabled
    if not enabled:
        return "disabled"
    if tools:
        return "tools requested: the loop rewrites prose, not tool calls"
    if json_output:
        return f"JSON {json_output} requested: the loop rewrites prose, not JSON"
    return None


def loop_options(opts: ReflectionOptions | None, defaults: ReflectionSettings) -> LoopOptions:
    o = opts or ReflectionOptions()

    def pick(value: Any, default: Any) -> Any:
        return default if value is None else value

    evaluation = pick(o.evaluation, defaults.evaluation)
    holistic = evaluation == "holistic"  # the baseline judges without checklist or memory
    if holistic and o.checklist is not None:
        raise InvalidRequest("evaluation 'holistic' judges the answer as a whole and takes no "
                             "checklist; drop reflection.checklist or set "
                             "reflection.evaluation to 'joint'", param="reflection.checklist")
    return LoopOptions(
        max_rounds=pick(o.max_rounds, defaults.max_rounds),
        threshold=pick(o.threshold, defaults.threshold),
        candidates=pick(o.candidates, defaults.candidates),
        evaluation=evaluation,
        memory=pick(o.memory, defaults.memory) and not holistic,
        return_trace=bool(o.return_trace),
        token_budget=defaults.token_budget or None,
        time_budget=defaults.time_budget or None,
        # relative to the draft: the default path's bound (a loop scored in code); a loop
        # that asks for its evaluation keeps the absolute budgets alone
        token_budget_ratio=(defaults.token_budget_ratio or None) if evaluation == "auto"
        else None,
        time_budget_ratio=(defaults.time_budget_ratio or None) if evaluation == "auto"
        else None,
        checklist_mode=defaults.checklist_mode,
        fuse_reflection=defaults.fuse_reflection,
        conform=pick(o.conform, defaults.conform),
    )


def checklist_spec(opts: ReflectionOptions | None) -> ChecklistSpec | None:
    value = opts.checklist if opts is not None else None
    if value is None:
        return None
    if isinstance(value, str):
        return ChecklistSpec(id=value) if _STORED_ID.match(value) else ChecklistSpec(ref=value)
    if isinstance(value, dict) and set(value) == {"pack"}:
        return ChecklistSpec(ref=str(value["pack"]))
    if isinstance(value, dict) and set(value) == {"id"}:
        return ChecklistSpec(id=str(value["id"]))
    return ChecklistSpec(inline=value)


def summary(trace: LoopTrace, with_trace: bool) -> dict[str, Any]:
    """The `reflection` object of a response."""
    out: dict[str, Any] = {
        "loop_id": trace.loop_id,
        "rounds": trace.rounds,
        "scores": [round(s, 4) for s in trace.scores],
        "final_score": None if trace.answer.score is None else round(trace.answer.score, 4),
        "stop_reason": trace.stop_reason,
        "degradations": [d.as_dict() for d in trace.degradations],
        "checklist_id": trace.checklist_id,
        "checklist_source": trace.checklist_source,
        "usage": stage_usage(trace),
    }
    if with_trace:
        out["trace"] = {
            "checklist": trace.checklist.model_dump(mode="json"),
            "answer_position": trace.answer.position,
            "candidates": [_candidate(c) for c in trace.candidates],
            "timings": {k: round(v, 4) for k, v in trace.ledger.seconds.items()},
            "elapsed": round(trace.elapsed, 4),
            "experiences": trace.experiences,
            "total_usage": usage_dict(trace.ledger.total),
        }
    return out


def _candidate(c: Any) -> dict[str, Any]:
    record = candidate_record(c)
    return {"position": record.position, "round": record.round, "kind": record.kind,
            "parent": record.parent_position, "text": record.text, "score": record.total_score,
            "scores": dimension_scores(record.scores),
            "checks": [o.model_dump(mode="json") for o in c.checks], "shrunk": c.shrunk,
            "conformed": list(c.conformed), "same_as": c.same_as, "retried": c.retried,
            "unsupported": c.unsupported, "padded": list(c.padded),
            "off_language": c.off_language, "off_topic": c.off_topic,
            "reflection": record.reflection, "usage": record.usage,
            "latency_ms": round(record.latency_ms, 2)}

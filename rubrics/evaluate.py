"""Scoring a text against a checklist with a judge backend.

`joint` asks for every dimension in one call; `per_dimension` asks one call per dimension,
in parallel under a semaphore, as WritingBench's judge does. Scores off the scale are
clamped onto it; a dimension still unscored after the retries gets its minimum and marks
the result degraded. Bad judge output never raises.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError

from llm.base import Backend, JsonSchema
from llm.errors import InvalidRequest, UpstreamError
from llm.structured import (
    RETRY,
    AnswerInvalid,
    AnswerModel,
    ask,
    for_schema,
    parse_json,
    schema_of,
    system_user,
)
from llm.types import ChatParams, Message, Usage
from rubrics.checklist import Checklist, Dimension, DimensionScore, Evaluation, name_key
from rubrics.conversation import render_conversation
from rubrics.templates import render

Mode = Literal["joint", "per_dimension"]
EVIDENCE_CHARS = 1000


class Judged(AnswerModel):
    evidence: str
    # A float on reading so that 7.5 or "8" is rounded rather than rejected.
    score: float = Field(allow_inf_nan=False)


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    evaluation: Evaluation
    usage: Usage
    calls: int
    degraded: bool
    checklist: Checklist

    @property
    def total(self) -> float:
        return self.evaluation.total(self.checklist)

    @property
    def normalised(self) -> float:
        return self.evaluation.normalised(self.checklist)


def _criterion(dim: Dimension) -> str:
    bands = "\n".join(f"- {b.low}-{b.high}: {b.description}" for b in dim.bands)
    return f"### {dim.name}\n{dim.description}\nBands (score range: description):\n{bands}"


def judged_schema(dim: Dimension) -> JsonSchema:
    """Judged's schema with the score pinned to the dimension's integer scale."""
    schema = schema_of(Judged)
    schema["properties"]["score"] = {"type": "integer", "minimum": dim.scale_min,
                                     "maximum": dim.scale_max}
    return schema


def joint_schema(dims: Sequence[Dimension]) -> JsonSchema:
    scores = {"type": "object", "properties": {d.name: judged_schema(d) for d in dims},
              "required": [d.name for d in dims], "additionalProperties": False}
    return {"type": "object", "properties": {"scores": scores}, "required": ["scores"],
            "additionalProperties": False}


def _evidence(text: str) -> str:
    return text.strip().strip("\"'“”「」").strip()[:EVIDENCE_CHARS]


def _read_joint(text: str, pending: Sequence[Dimension]) -> tuple[list[DimensionScore], str]:
    """The valid scores in a joint answer, and what to say about the rest."""
    try:
        data = parse_json(text)
    except AnswerInvalid as exc:
        return [], str(exc)
    scores: Any = data.get("scores") if isinstance(data, dict) else None
    if isinstance(scores, list):
        scores = {str(s.get("name")): s for s in scores if isinstance(s, dict)}
    if not isinstance(scores, dict):
        return [], "the answer has no 'scores' object"
    by_key = {name_key(str(k)): v for k, v in scores.items()}
    found = []
    for dim in pending:
        try:
            judged = Judged.model_validate(by_key.get(name_key(dim.name)))
        except ValidationError:
            continue
        found.append(dim.scored(judged.score, _evidence(judged.evidence)))
    scored = {s.name for s in found}
    missing = [d.name for d in pending if d.name not in scored]
    return found, "no valid evidence and integer score for: " + json.dumps(
        missing, ensure_ascii=False)


async def _joint(judge: Backend, prompt: dict[str, str], checklist: Checklist,
                 params: ChatParams, retries: int) -> tuple[dict[str, DimensionScore], Usage, int]:
    pending = list(checklist.dimensions)
    found: dict[str, DimensionScore] = {}
    usage, calls = Usage(), 0
    messages: list[Message] = system_user(render("judge_system"), render(
        "judge_joint", criteria="\n\n".join(_criterion(d) for d in pending),
        names=json.dumps([d.name for d in pending], ensure_ascii=False), **prompt))
    for _ in range(retries + 1):
        calls += 1
        try:
            completion = await judge.chat(messages, params, schema=joint_schema(pending))
        except UpstreamError:
            continue
        usage += completion.usage
        scored, error = _read_joint(completion.text, pending)
        found.update((s.name, s) for s in scored)
        pending = [d for d in pending if d.name not in found]
        if not pending:
            break
        messages = [*messages, {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": RETRY.format(error=error)}]
    return found, usage, calls


async def _per_dimension(judge: Backend, prompt: dict[str, str], checklist: Checklist,
                         params: ChatParams, retries: int,
                         concurrency: int) -> tuple[dict[str, DimensionScore], Usage, int]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(dim: Dimension) -> tuple[DimensionScore | None, Usage, int]:
        messages = system_user(render("judge_system"), render(
            "judge_dimension", criterion=_criterion(dim), low=dim.scale_min,
            high=dim.scale_max, **prompt))
        async with semaphore:
            answer = await ask(judge, messages, params, Judged,
                               lambda j: dim.scored(j.score, _evidence(j.evidence)),
                               retries=retries, schema=judged_schema(dim))
        return answer.value, answer.usage, answer.calls

    tasks = [asyncio.ensure_future(one(d)) for d in checklist.dimensions]
    try:
        results = await asyncio.gather(*tasks)
    except BaseException:
        # One failed upstream call fails the evaluation; the others' calls are not wanted.
        for task in tasks:
            task.cancel()
        raise
    found = {s.name: s for s, _, _ in results if s is not None}
    usage = sum((u for _, u, _ in results), Usage())
    return found, usage, sum(c for _, _, c in results)


async def evaluate(judge_backend: Backend, query_messages: Sequence[Message], text: str,
                   checklist: Checklist, params: ChatParams, *, mode: Mode = "joint",
                   retries: int = 2, concurrency: int = 8) -> EvaluationResult:
    """Score `text`, the answer to the last user turn of `query_messages`, on `checklist`."""
    if mode not in ("joint", "per_dimension"):
        raise InvalidRequest(f"unknown evaluation mode {mode!r}", param="reflection.evaluation")
    if retries < 0 or concurrency < 1:
        raise InvalidRequest(f"bad evaluation bounds retries={retries} concurrency={concurrency}")
    prompt = {"conversation": render_conversation(query_messages), "text": text}
    params = for_schema(params)
    if mode == "joint":
        found, usage, calls = await _joint(judge_backend, prompt, checklist, params, retries)
    else:
        found, usage, calls = await _per_dimension(judge_backend, prompt, checklist, params,
                                                   retries, concurrency)
    scores = tuple(found.get(d.name) or d.scored(d.scale_min) for d in checklist.dimensions)
    evaluation = Evaluation(scores=scores)
    degraded = len(found) < len(checklist.dimensions)
    return EvaluationResult(evaluation, usage, calls, degraded, checklist)

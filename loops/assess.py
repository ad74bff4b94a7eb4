"""Evaluation of a candidate, optionally with the reflection on it in the same call.

Joint evaluation with fused reflection is one sequential call where the plain method takes
two (evaluate, then reflect); per-dimension evaluation goes through `rubrics.evaluate` and
reflects separately.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import Field

from llm.base import Backend, JsonSchema
from llm.schemas import EVIDENCE_CHARS, array, clip, obj, text
from llm.structured import AnswerInvalid, AnswerModel, ask, for_schema
from llm.types import ChatParams, Message, Usage
from loops.options import EvaluationMode
from loops.prompting import Attempt
from loops.reflection import (
    MAX_ITEMS,
    Reflected,
    ReflectionItemOut,
    ReflectionOut,
    assess_messages,
    item_schema,
    reflect,
    to_reflection,
)
from loops.trace import Reflection
from rubrics.checklist import Checklist, Evaluation, name_key
from rubrics.checks import CheckOutcome
from rubrics.evaluate import Judged, evaluate, flag_unquoted, joint_schema
from rubrics.evidence import retry_note


class AssessOut(AnswerModel):
    scores: dict[str, Judged] = Field(min_length=1)
    summary: str
    items: list[ReflectionItemOut] = Field(max_length=8)


def assess_schema(checklist: Checklist) -> JsonSchema:
    """The joint judge's scores (one required key per dimension, each an integer on its
    scale) and the reflection (items about checklist dimensions)."""
    return obj({"scores": joint_schema(checklist.dimensions)["properties"]["scores"],
                "summary": text(),
                "items": array(item_schema(checklist), 1, MAX_ITEMS)})


def scores_to_evaluation(scores: Mapping[str, Judged], checklist: Checklist) -> Evaluation:
    """Every dimension scored once, clamped onto its scale; a missing one is an error."""
    found = {name_key(name): s for name, s in scores.items()}
    out = []
    for dim in checklist.dimensions:
        s = found.get(name_key(dim.name))
        if s is None:
            raise AnswerInvalid(f"dimension {dim.name!r} was not scored")
        out.append(dim.scored(s.score, clip(s.evidence, EVIDENCE_CHARS)))
    return Evaluation(scores=tuple(out))


@dataclass(frozen=True, slots=True)
class Assessment:
    evaluation: Evaluation | None
    critique: Reflection | None
    usage: Usage
    calls: int
    reflect_usage: Usage = Usage()
    reflect_calls: int = 0

    def score(self, checklist: Checklist) -> float | None:
        return self.evaluation.normalised(checklist) if self.evaluation is not None else None


class Assessor:
    def __init__(self, judge: Backend, params: ChatParams, mode: EvaluationMode = "joint",
                 fuse: bool = True, retries: int = 2) -> None:
        self.judge = judge
        self.params = params
        self.mode = mode
        self.fuse = fuse and mode == "joint"
        self.retries = retries

    async def assess(self, query: Sequence[Message], text: str, checklist: Checklist,
                     want_reflection: bool) -> Assessment:
        if self.fuse and want_reflection:
            return await self._fused(query, text, checklist)
        result = await evaluate(self.judge, query, text, checklist, self.params, mode=self.mode,
                                retries=self.retries)
        # A degraded evaluation scored some dimensions at their minimum by default: not a
        # judgement the loop may keep or discard a text on.
        evaluation = None if result.degraded else result.evaluation
        return Assessment(evaluation, None, result.usage, result.calls)

    async def _fused(self, query: Sequence[Message], text: str,
                     checklist: Checklist) -> Assessment:
        held: list[tuple[Evaluation, Reflection | None]] = []  # evidence not quoted: re-asked

        def accept(out: AssessOut) -> tuple[Evaluation, Reflection | None]:
            critique = None
            if out.items:
                critique = to_reflection(ReflectionOut(summary=out.summary, items=out.items),
                                         checklist)
            evaluation, unquoted = flag_unquoted(scores_to_evaluation(out.scores, checklist),
                                                 text)
            if unquoted and not held:
                held.append((evaluation, critique))
                raise AnswerInvalid(retry_note(unquoted))
            return evaluation, critique

        answer = await ask(self.judge, assess_messages(query, text, checklist),
                           for_schema(self.params),
                           AssessOut, accept, retries=self.retries,
                           schema=assess_schema(checklist))
        value = answer.value if answer.value is not None else (held[0] if held else None)
        if value is None:
            return Assessment(None, None, answer.usage, answer.calls)
        evaluation, critique = value
        return Assessment(evaluation, critique, answer.usage, answer.calls)

    async def reflect(self, query: Sequence[Message], text: str, checklist: Checklist,
                      evaluation: Evaluation, history: list[Attempt],
                      checks: Sequence[CheckOutcome] = ()) -> Reflected:
        return await reflect(self.judge, query, text, checklist, evaluation, self.params,
                             history, self.retries, checks)

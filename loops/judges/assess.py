"""Evaluation of a candidate, optionally with the reflection on it in the same call.

Joint evaluation with fused reflection is one sequential call where the plain method takes
two (evaluate, then reflect); per-dimension evaluation goes through `rubrics.evaluate` and
reflects separately.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.errors import ContextOverflow
from generation.schemas import EVIDENCE_CHARS, array, clip, obj, text
from generation.structured import AnswerInvalid, AnswerModel, ask, for_schema
from generation.types import ChatParams, Message, Usage
from loops.options import EvaluationMode
from loops.prompting import Attempt, template
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
from rubrics.budget import SENTENCE, fitted
from rubrics.checklist import Checklist, Evaluation, name_key
from rubrics.checks import CheckOutcome
from rubrics.evaluate import Judged, evaluate, flag_unquoted, joint_schema, without_bands
from rubrics.evidence import FLAG, retry_note

ALIKE_BELOW = 0.8  # word-level Jaccard under which two texts differ substantially
_WORD = re.compile(r"\w+")


def word_jaccard(a: str, b: str) -> float:
    """Shared words over all words of the two texts (case ignored); 1.0 for two empty texts."""
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def judged_alike(earlier: Evaluation | None, later: Evaluation | None, earlier_text: str,
                 later_text: str) -> bool:
    """The judge gave two substantially different texts (word Jaccard under ALIKE_BELOW) the
    same score on every dimension: it did not read the difference. A one-dimension scale
    (the holistic baseline's) is left out: one shared overall score is often a fair verdict.
    """
    if earlier is None or later is None or len(later.scores) < 2:
        return False
    same = {name_key(s.name): s.score for s in earlier.scores} == \
        {name_key(s.name): s.score for s in later.scores}
    return same and word_jaccard(earlier_text, later_text) < ALIKE_BELOW


def contrast_note(earlier_text: str, earlier: Evaluation, text: str, lines: int = 3,
                  chars: int = 240) -> str:
    """What a re-asked judge is told: the scores the earlier version got, and the passages
    only one of the two versions has (up to `lines` each, cut to `chars`)."""
    before = [x.strip() for x in re.split(r"(?<=[.!?。！？])\s+|\n+", earlier_text) if x.strip()]
    after = [x.strip() for x in re.split(r"(?<=[.!?。！？])\s+|\n+", text) if x.strip()]
    removed = [x[:chars] for x in before if x not in after][:lines]
    added = [x[:chars] for x in after if x not in before][:lines]
    scores = ", ".join(f"{s.name}: {s.score}" for s in earlier.scores)
    return template("rejudge").substitute(
        scores=scores, removed="\n".join(f"- {x}" for x in removed) or "- (nothing)",
        added="\n".join(f"- {x}" for x in added) or "- (nothing)").strip()


def unsupported(evaluation: Evaluation | None) -> bool:
    """Most of the judgement's evidence is not found in the text it judged (flagged after the
    judge was asked again): its scores justify nothing."""
    if evaluation is None or not evaluation.scores:
        return False
    flagged = sum(s.evidence.startswith(FLAG) for s in evaluation.scores)
    return flagged * 2 > len(evaluation.scores)


class AssessOut(AnswerModel):
    scores: dict[str, Judged] = Field(min_length=1)
    summary: str
    items: list[ReflectionItemOut] = Field(max_length=8)


def assess_schema(checklist: Checklist) -> JsonSchema:
    """The joint judge's scores (one required key per dimension, each an integer on its
    scale) and the reflection (items about checklist dimensions)."""
    return obj({"scores": joint_schema(checklist.dimensions)["properties"]["scores"],
                "summary": text(SENTENCE),
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
    error: str | None = None   # why there is no evaluation
    compact: bool = False      # judged on the rubric without its bands (the full one overflowed)

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
                     want_reflection: bool, contrast: str = "") -> Assessment:
        """`contrast` (`contrast_note`) goes after the text when the judge is asked again. A
        judge prompt longer than the model's context is sent again with the rubric's band
        descriptions left out (`compact`); when that does not fit either, ContextOverflow."""
        try:
            return await self._assess(query, text, checklist, want_reflection, contrast)
        except ContextOverflow:
            bare = without_bands(checklist)
            a = await self._assess(query, text, bare, want_reflection, contrast)
            evaluation = None if a.evaluation is None else a.evaluation.rebanded(checklist)
            return replace(a, evaluation=evaluation, compact=True)

    async def _assess(self, query: Sequence[Message], text: str, checklist: Checklist,
                      want_reflection: bool, contrast: str) -> Assessment:
        if self.fuse and want_reflection:
            return await self._fused(query, text, checklist, contrast)
        result = await evaluate(self.judge, query, text, checklist, self.params, mode=self.mode,
                                retries=self.retries, contrast=contrast)
        # A degraded evaluation scored some dimensions at their minimum by default: not a
        # judgement the loop may keep or discard a text on.
        if result.degraded:
            return Assessment(None, None, result.usage, result.calls,
                              error=f"some dimensions were never scored ({result.error})"
                              if result.error else "some dimensions were never scored")
        return Assessment(result.evaluation, None, result.usage, result.calls)

    async def _fused(self, query: Sequence[Message], text: str, checklist: Checklist,
                     contrast: str = "") -> Assessment:
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

        call, schema = fitted(for_schema(self.params), assess_schema(checklist))
        answer = await ask(self.judge, assess_messages(query, text, checklist, contrast), call,
                           AssessOut, accept, retries=self.retries, schema=schema)
        value = answer.value if answer.value is not None else (held[0] if held else None)
        if value is None:
            return Assessment(None, None, answer.usage, answer.calls, error=answer.error)
        evaluation, critique = value
        return Assessment(evaluation, critique, answer.usage, answer.calls)

    async def reflect(self, query: Sequence[Message], text: str, checklist: Checklist,
                      evaluation: Evaluation, history: list[Attempt],
                      checks: Sequence[CheckOutcome] = ()) -> Reflected:
        return await reflect(self.judge, query, text, checklist, evaluation, self.params,
                             history, self.retries, checks)

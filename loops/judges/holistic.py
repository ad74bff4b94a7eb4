"""The LLM-as-a-Judge baseline of Writer-R1's Table 3: a holistic critique instead of a checklist.

The judge reads the whole answer and writes one critique, the rewrite actions and an overall
1..10 score; the writer rewrites with it. `HolisticAssessor` stands in for the checklist
assessor inside the one MRPO controller (`loops.controller`), so the baseline runs the same
rounds, threshold, budgets, candidates and trace, and the two compare like for like. The
judgement is recorded as a one-dimension scale, "Overall quality" on 1..10, with
`checklist_source` "none" (no checklist was built or used).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.conversation import render_conversation, target_text
from generation.errors import UpstreamError
from generation.schemas import EVIDENCE_CHARS
from generation.structured import AnswerModel, ask, for_schema
from generation.types import ChatParams, Message, Usage
from loops.checklists import Resolved
from loops.judges.assess import Assessment
from loops.prompting import Attempt, language_rule, template
from loops.reflection import Reflected
from loops.trace import Reflection, ReflectionItem
from rubrics.budget import CRITIQUE, REASON, fitted
from rubrics.checklist import Checklist, Evaluation
from rubrics.checks import CheckOutcome

LOW, HIGH = 1, 10
OVERALL = "Overall quality"
MAX_ACTIONS = 6
SYSTEM = ("You are a strict, fair writing judge. You read a response as a whole and say what "
          "would most improve it. You answer with a single JSON object and nothing else.")

# The judgement's scale, kept in the trace like any checklist (bands as WritingBench's).
SCALE = Checklist.model_validate({"source": "generated", "dimensions": [{
    "name": OVERALL, "description": "The judge's holistic score of the whole response.",
    "bands": [{"low": lo, "high": lo + 1, "description": d} for lo, d in (
        (1, "fails the task"), (3, "weak"), (5, "adequate"), (7, "good"),
        (9, "excellent"))]}]})


class HolisticOut(AnswerModel):
    critique: str = Field(min_length=1)
    actions: list[str] = Field(min_length=1, max_length=MAX_ACTIONS)
    score: int = Field(ge=LOW, le=HIGH)


def holistic_schema() -> JsonSchema:
    """The tightest schema `HolisticOut` validates: an integer score on 1..10, all required,
    the critique one paragraph and each action a sentence (`rubrics.budget`)."""
    return {"type": "object", "additionalProperties": False,
            "required": ["critique", "actions", "score"],
            "properties": {
                "critique": {"type": "string", "minLength": 1, "maxLength": CRITIQUE},
                "actions": {"type": "array", "items": {"type": "string", "minLength": 1,
                                                       "maxLength": REASON},
                            "minItems": 1, "maxItems": MAX_ACTIONS},
                "score": {"type": "integer", "minimum": LOW, "maximum": HIGH}}}


@dataclass(frozen=True, slots=True)
class Judgement:
    score: int
    critique: Reflection


# What the controller uses in place of a checklist: nothing to build, nothing to store.
RESOLVED = Resolved(SCALE, "none", None)  # type: ignore[arg-type]


class HolisticAssessor:
    """`loops.judges.assess.Assessor`'s interface, judging the whole text on `SCALE`."""

    def __init__(self, judge: Backend, params: ChatParams, retries: int = 2) -> None:
        self.judge = judge
        self.params = for_schema(params)
        self.retries = retries

    async def assess(self, query: Sequence[Message], text: str, checklist: Checklist,
                     want_reflection: bool, contrast: str = "") -> Assessment:
        judgement, usage, calls = await judge_holistically(
            self.judge, query, text, self.params, self.retries, contrast)
        if judgement is None:
            return Assessment(None, None, usage, calls)
        evaluation = Evaluation(scores=(SCALE.dimensions[0].scored(
            judgement.score, judgement.critique.summary[:EVIDENCE_CHARS]),))
        return Assessment(evaluation, judgement.critique, usage, calls)

    async def reflect(self, query: Sequence[Message], text: str, checklist: Checklist,
                      evaluation: Evaluation, history: list[Attempt],
                      checks: Sequence[CheckOutcome] = ()) -> Reflected:
        """The critique comes with every judgement; asked again only if it went missing."""
        judgement, usage, calls = await judge_holistically(
            self.judge, query, text, self.params, self.retries)
        if judgement is None:
            raise UpstreamError("the judge gave no usable holistic critique")
        return Reflected(judgement.critique, usage, calls, False)


async def judge_holistically(judge: Backend, query: Sequence[Message], text: str,
                             params: ChatParams, retries: int, contrast: str = ""
                             ) -> tuple[Judgement | None, Usage, int]:
    """One critique and one overall score of `text`; None when the judge never answered well.
    `contrast` (a re-asked judgement's note on an earlier version) comes last."""
    prompt = template("holistic").substitute(
        conversation=render_conversation(query), text=text, low=LOW, high=HIGH,
        language_rule=language_rule(target_text(query)))
    if contrast:
        prompt = f"{prompt.rstrip()}\n\n{contrast}"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]

    def accept(out: HolisticOut) -> Judgement:
        item = ReflectionItem(OVERALL, "", out.critique, tuple(out.actions))
        return Judgement(out.score, Reflection(items=(item,), summary=out.critique))

    call, schema = fitted(params, holistic_schema())
    answer = await ask(judge, messages, call, HolisticOut, accept,
                       retries=retries, schema=schema)
    return answer.value, answer.usage, answer.calls

"""Reflection: g = Phi(q, y, K), alone or fused with the evaluation of y."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from llm.base import Backend
from llm.structured import AnswerInvalid, AnswerModel, ask, for_schema, system_user
from llm.types import ChatParams, Message, Usage
from loops.prompting import (
    Attempt,
    language_rule,
    render_checklist,
    render_history,
    render_scores,
    template,
)
from loops.trace import Reflection, ReflectionItem
from rubrics.checklist import Checklist, Evaluation, name_key
from rubrics.conversation import render_conversation, target_text
from rubrics.templates import render

MAX_ITEMS = 4


class ReflectionItemOut(AnswerModel):
    dimension: str
    evidence: str
    objective: str
    actions: list[str] = Field(min_length=1, max_length=6)


class ReflectionOut(AnswerModel):
    summary: str
    items: list[ReflectionItemOut] = Field(min_length=1, max_length=8)


@dataclass(frozen=True, slots=True)
class Reflected:
    reflection: Reflection
    usage: Usage
    calls: int
    degraded: bool


def to_reflection(out: ReflectionOut, checklist: Checklist) -> Reflection | None:
    """Keep the items about real dimensions (judges invent names); None when none are left."""
    names = {name_key(d.name): d.name for d in checklist.dimensions}
    items = tuple(
        ReflectionItem(names[name_key(i.dimension)], i.evidence.strip(), i.objective.strip(),
                       tuple(a.strip() for a in i.actions if a.strip()))
        for i in out.items if name_key(i.dimension) in names)
    items = tuple(i for i in items if i.actions)[:MAX_ITEMS]
    return Reflection(items, out.summary.strip()) if items else None


def fallback_reflection(checklist: Checklist, evaluation: Evaluation) -> Reflection:
    """When the reflector fails: aim each weak dimension at its top band, by the rubric's words."""
    scores = {name_key(s.name): s for s in evaluation.scores}
    weak = sorted(checklist.dimensions,
                  key=lambda d: (scores[name_key(d.name)].score - d.scale_min)
                  / (d.scale_max - d.scale_min) if name_key(d.name) in scores else 0.0)
    items = tuple(
        ReflectionItem(d.name, scores[name_key(d.name)].evidence if name_key(d.name) in scores
                       else "", f"Reach the top band: {d.bands[-1].description}",
                       (f"Revise the text so that it satisfies: {d.description}",))
        for d in weak[:MAX_ITEMS])
    return Reflection(items, "Raise the weakest dimensions to their top band.")


async def reflect(backend: Backend, query: Sequence[Message], text: str, checklist: Checklist,
                  evaluation: Evaluation, params: ChatParams, history: list[Attempt],
                  retries: int = 2) -> Reflected:
    prompt = template("reflect").substitute(
        max_items=MAX_ITEMS, language_rule=language_rule(target_text(query)),
        conversation=render_conversation(query), checklist=render_checklist(checklist),
        scores=render_scores(checklist, evaluation), history=render_history(history), text=text)
    answer = await ask(backend, judge_messages(prompt), for_schema(params),
                       ReflectionOut, lambda out: usable(out, checklist), retries=retries)
    if answer.value is None:
        return Reflected(fallback_reflection(checklist, evaluation), answer.usage, answer.calls,
                         True)
    return Reflected(answer.value, answer.usage, answer.calls, False)


def usable(out: ReflectionOut, checklist: Checklist) -> Reflection:
    reflection = to_reflection(out, checklist)
    if reflection is None:
        names = ", ".join(d.name for d in checklist.dimensions)
        raise AnswerInvalid(f"no reflection item names a checklist dimension ({names})")
    return reflection


def assess_prompt(query: Sequence[Message], text: str, checklist: Checklist) -> str:
    return template("assess").substitute(
        max_items=MAX_ITEMS, language_rule=language_rule(target_text(query)),
        conversation=render_conversation(query), checklist=render_checklist(checklist), text=text)


def judge_messages(prompt: str) -> list[Message]:
    """The judge's standing instructions (shared with `rubrics.evaluate`), then the task."""
    return system_user(render("judge_system"), prompt)

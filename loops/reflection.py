"""Reflection: g = Phi(q, y, K), alone or fused with the evaluation of y."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.conversation import target_text
from generation.schemas import EVIDENCE_CHARS, LINE_CHARS, array, clip, obj, one_of, text
from generation.structured import AnswerInvalid, AnswerModel, ask, for_schema
from generation.types import ChatParams, Message, Usage
from loops.prompting import Attempt, language_rule, render_history, render_scores, template
from loops.trace import Reflection, ReflectionItem
from rubrics.budget import QUOTE, REASON, SENTENCE, fitted
from rubrics.checklist import Checklist, Dimension, Evaluation, name_key
from rubrics.checks import CheckOutcome
from rubrics.evaluate import judge_messages
from rubrics.templates import render

MAX_ITEMS = 4
MAX_ACTIONS = 4


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


def item_schema(checklist: Checklist) -> JsonSchema:
    """One reflection item: about a checklist dimension, with one to MAX_ACTIONS actions."""
    return obj({"dimension": one_of([d.name for d in checklist.dimensions]),
                "evidence": text(QUOTE), "objective": text(SENTENCE),
                "actions": array(text(REASON, 1), 1, MAX_ACTIONS)})


def reflection_schema(checklist: Checklist) -> JsonSchema:
    return obj({"summary": text(SENTENCE),
                "items": array(item_schema(checklist), 1, MAX_ITEMS)})


def to_reflection(out: ReflectionOut, checklist: Checklist) -> Reflection | None:
    """Keep the items about real dimensions (judges invent names); None when none are left.

    A blank objective or blank actions (all a schema can allow) get the rubric's own words:
    reach the top band, satisfy the description."""
    dims = {name_key(d.name): d for d in checklist.dimensions}
    items = tuple(_item(dims[name_key(i.dimension)], i) for i in out.items
                  if name_key(i.dimension) in dims)[:MAX_ITEMS]
    return Reflection(items, clip(out.summary, LINE_CHARS)) if items else None


def _item(dim: Dimension, out: ReflectionItemOut) -> ReflectionItem:
    actions = tuple(a for a in (clip(a, LINE_CHARS) for a in out.actions) if a)[:MAX_ACTIONS]
    return ReflectionItem(
        dim.name, clip(out.evidence, EVIDENCE_CHARS),
        clip(out.objective, LINE_CHARS) or f"Reach the top band: {dim.bands[-1].description}",
        actions or (f"Revise the text so that it satisfies: {dim.description}",))


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


CHECK_PREFIX = "check: "  # a reflection item about a check, not a checklist dimension


def check_item(outcome: CheckOutcome) -> ReflectionItem:
    """A failed check as a reflection item: what the text has, what the request needs."""
    quoted = f' (the request: "{outcome.quote}")' if outcome.quote else ""
    return ReflectionItem(
        f"{CHECK_PREFIX}{outcome.kind}", outcome.measured,
        f"Needs {outcome.target}{quoted}; now {outcome.measured}.",
        (f"Change the text so that it has {outcome.target}, and keep everything else that "
         "the request asks for.",))


def with_checks(reflection: Reflection, outcomes: Sequence[CheckOutcome]) -> Reflection:
    """The reflection with one item per failed check first: these are measured, so they are
    never wrong and never left out; the judge's items follow. Passed checks add nothing."""
    failed = tuple(check_item(o) for o in outcomes if not o.passed)
    if not failed:
        return reflection
    kept = tuple(i for i in reflection.items if not i.dimension.startswith(CHECK_PREFIX))
    return Reflection(failed + kept, reflection.summary)


async def reflect(backend: Backend, query: Sequence[Message], text: str, checklist: Checklist,
                  evaluation: Evaluation, params: ChatParams, history: list[Attempt],
                  retries: int = 2, checks: Sequence[CheckOutcome] = ()) -> Reflected:
    """The judge's reflection on `text`; the checks measured on it are shown beside the
    scores (the failed ones are added as items by `with_checks` whatever the judge writes)."""
    scores = render_scores(checklist, evaluation)
    if checks:
        scores += "\n\nRequirements measured in code:\n" + "\n".join(o.line() for o in checks)
    task = template("reflect").substitute(
        max_items=MAX_ITEMS, language_rule=language_rule(target_text(query)),
        scores=scores, history=render_history(history), text=text)
    call, schema = fitted(for_schema(params), reflection_schema(checklist))
    answer = await ask(backend, judge_messages(query, checklist, task), call, ReflectionOut,
                       lambda out: usable(out, checklist), retries=retries, schema=schema)
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


def assess_messages(query: Sequence[Message], text: str, checklist: Checklist,
                    contrast: str = "") -> list[Message]:
    """The joint judge's prompt (same head, same scoring paragraph) with the reflection's
    instructions added before the text: a fused call shares the evaluation's prefix.
    `contrast` (a re-asked judgement's note on an earlier version) comes last."""
    task = template("assess").substitute(
        scoring=render("judge_scoring").strip(), max_items=MAX_ITEMS,
        language_rule=language_rule(target_text(query)), text=text)
    return judge_messages(query, checklist, f"{task}\n\n{contrast}" if contrast else task)

"""The LLM side of the memory bank: the key of a task, choosing relevant experiences, and
summarising a finished loop into a new experience (Writer-R1 section 3.3.2).

Each is one schema-constrained call; a bad answer is retried, then degrades (no key: the
target text itself is the key; no valid choice: nothing selected; no summary: nothing
remembered). None of them raises on bad model output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.conversation import render_conversation, render_prompt, target_text
from generation.schemas import LINE_CHARS, array, clip, obj, one_of, text
from generation.structured import AnswerInvalid, AnswerModel, ask, for_schema
from generation.types import ChatParams, Message, Usage
from memory.bank import Hit

KEY_WORDS = 40
KEY_CHARS, KEY_CONSTRAINTS = 120, 8
EXPERIENCE_CHARS = (20, 2000)


def _user(name: str, **values: object) -> list[Message]:
    return [{"role": "user", "content": render_prompt("memory", name, **values)}]


class TaskKey(AnswerModel):
    genre: str = Field(min_length=1, max_length=KEY_CHARS)
    audience: str = Field(max_length=KEY_CHARS)
    constraints: list[str] = Field(max_length=KEY_CONSTRAINTS)

    def line(self) -> str:
        constraints = [c for c in (clip(c, KEY_CHARS) for c in self.constraints) if c]
        parts = [f"genre: {clip(self.genre, KEY_CHARS) or 'writing'}",
                 f"audience: {clip(self.audience, KEY_CHARS) or 'general'}"]
        if constraints:
            parts.append("constraints: " + "; ".join(constraints))
        return " | ".join(parts)


KEY_SCHEMA: JsonSchema = obj({"genre": text(KEY_CHARS, 1), "audience": text(KEY_CHARS),
                              "constraints": array(text(KEY_CHARS), 0, KEY_CONSTRAINTS)})
SUMMARY_SCHEMA: JsonSchema = obj({"experience": text(EXPERIENCE_CHARS[1], EXPERIENCE_CHARS[0])})


class Choice(AnswerModel):
    number: int
    reason: str


class Selection(AnswerModel):
    selected: list[Choice] = Field(max_length=5)


class Summary(AnswerModel):
    experience: str = Field(min_length=EXPERIENCE_CHARS[0], max_length=EXPERIENCE_CHARS[1])


def selection_schema(hits: int, select_max: int) -> JsonSchema:
    """At most `select_max` choices, each the number of one of the `hits` listed."""
    choice = obj({"number": one_of(list(range(1, hits + 1))), "reason": text()})
    return obj({"selected": array(choice, 0, min(select_max, hits))})


@dataclass(frozen=True, slots=True)
class Keyed:
    key: str
    usage: Usage
    calls: int
    degraded: bool


@dataclass(frozen=True, slots=True)
class Selected:
    hit: Hit
    reason: str


async def task_key(backend: Backend, query: Sequence[Message], params: ChatParams,
                   retries: int = 1) -> Keyed:
    """What kind of task this is (genre, audience, constraints), not what it says."""
    answer = await ask(backend, _user("key", conversation=render_conversation(query)),
                       for_schema(params), TaskKey, lambda k: k.line(), retries=retries,
                       schema=KEY_SCHEMA)
    if answer.value is None:
        words = target_text(query).split()[:KEY_WORDS]
        return Keyed(" ".join(words), answer.usage, answer.calls, True)
    return Keyed(answer.value, answer.usage, answer.calls, False)


async def select(backend: Backend, query: Sequence[Message], hits: Sequence[Hit],
                 params: ChatParams, select_max: int = 2,
                 retries: int = 1) -> tuple[list[Selected], Usage, int]:
    """The LLM keeps at most `select_max` of the recalled experiences, with a reason each.

    It judges them against the conversation itself: no key is extracted first, so selection
    costs one call and fits inside the draft's time."""
    if not hits:
        return [], Usage(), 0
    listing = "\n\n".join(f"[{i}] task: {h.experience.key}\nlesson: {h.experience.text}"
                          for i, h in enumerate(hits, 1))

    def accept(out: Selection) -> list[Selected]:
        chosen: list[Selected] = []
        for choice in out.selected:
            if not 1 <= choice.number <= len(hits):
                raise AnswerInvalid(f"number {choice.number} is not one of 1..{len(hits)}")
            hit = hits[choice.number - 1]
            if all(c.hit is not hit for c in chosen):
                chosen.append(Selected(hit, clip(choice.reason, LINE_CHARS)))
        return chosen[:select_max]

    answer = await ask(backend, _user("select", conversation=render_conversation(query),
                                      select_max=select_max, experiences=listing),
                       for_schema(params), Selection, accept, retries=retries,
                       schema=selection_schema(len(hits), select_max))
    return answer.value or [], answer.usage, answer.calls


async def summarise(backend: Backend, key: str, trajectory: Sequence[float], rounds: str,
                    params: ChatParams, retries: int = 1) -> tuple[str | None, Usage, int]:
    """The experience text of a finished loop, or None when the model gave nothing usable.

    An answer that is blank apart from padding (all a schema's minLength can require) is
    replaced by the record of the rounds themselves: what was tried and how scores moved."""
    scores = " -> ".join(f"{s:.2f}" for s in trajectory)
    answer = await ask(backend, _user("summarise", key=key, rounds=rounds, trajectory=scores),
                       for_schema(params), Summary, lambda s: s.experience.strip(),
                       retries=retries, schema=SUMMARY_SCHEMA)
    text = answer.value
    if text is not None and len(text) < EXPERIENCE_CHARS[0]:
        text = f"For {key} (scores {scores}), these revisions were tried:\n{rounds}"
        text = text[:EXPERIENCE_CHARS[1]]
    return text, answer.usage, answer.calls

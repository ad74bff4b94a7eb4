"""The LLM side of the memory bank: the key of a task, choosing relevant experiences, and
summarising a finished loop into a new experience (Writer-R1 section 3.3.2).

Each is one schema-constrained call; a bad answer is retried, then degrades (no key: the
target text itself is the key; no valid choice: nothing selected; no summary: nothing
remembered). None of them raises on bad model output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

from pydantic import Field

from llm.base import Backend
from llm.structured import AnswerInvalid, AnswerModel, ask, for_schema
from llm.types import ChatParams, Message, Usage
from memory.bank import Hit
from rubrics.conversation import render_conversation, target_text

KEY_WORDS = 40


@cache
def _template(name: str) -> Template:
    return Template(resources.files("memory").joinpath("prompts", f"{name}.txt").read_text("utf-8"))


def _user(name: str, **values: object) -> list[Message]:
    return [{"role": "user", "content": _template(name).substitute(**values)}]


class TaskKey(AnswerModel):
    genre: str = Field(min_length=1, max_length=120)
    audience: str = Field(max_length=120)
    constraints: list[str] = Field(max_length=8)

    def line(self) -> str:
        parts = [f"genre: {self.genre.strip()}", f"audience: {self.audience.strip() or 'general'}"]
        if self.constraints:
            parts.append("constraints: " + "; ".join(c.strip() for c in self.constraints))
        return " | ".join(parts)


class Choice(AnswerModel):
    number: int
    reason: str


class Selection(AnswerModel):
    selected: list[Choice] = Field(max_length=5)


class Summary(AnswerModel):
    experience: str = Field(min_length=20, max_length=2000)


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
                       for_schema(params), TaskKey, lambda k: k.line(), retries=retries)
    if answer.value is None:
        words = target_text(query).split()[:KEY_WORDS]
        return Keyed(" ".join(words), answer.usage, answer.calls, True)
    return Keyed(answer.value, answer.usage, answer.calls, False)


async def select(backend: Backend, key: str, query: Sequence[Message], hits: Sequence[Hit],
                 params: ChatParams, select_max: int = 2,
                 retries: int = 1) -> tuple[list[Selected], Usage, int]:
    """The LLM keeps at most `select_max` of the recalled experiences, with a reason each."""
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
                chosen.append(Selected(hit, choice.reason.strip()))
        return chosen[:select_max]

    answer = await ask(backend, _user("select", key=key, conversation=render_conversation(query),
                                      select_max=select_max, experiences=listing),
                       for_schema(params), Selection, accept, retries=retries)
    return answer.value or [], answer.usage, answer.calls


async def summarise(backend: Backend, key: str, trajectory: Sequence[float], rounds: str,
                    params: ChatParams, retries: int = 1) -> tuple[str | None, Usage, int]:
    """The experience text of a finished loop, or None when the model gave nothing usable."""
    answer = await ask(backend, _user("summarise", key=key, rounds=rounds,
                                      trajectory=" -> ".join(f"{s:.2f}" for s in trajectory)),
                       for_schema(params), Summary, lambda s: s.experience.strip(),
                       retries=retries)
    return answer.value, answer.usage, answer.calls

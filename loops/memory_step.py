"""Algorithm 1, lines 7-11: recall experiences, keep the relevant ones, rewrite the draft with
them; and afterwards, remember what this loop learned.

Recall runs concurrently with the checklist and the draft and costs one call: the vector
search uses the embedding of the request itself, and the LLM selects among the hits by the
conversation. The task key (genre, audience, constraints) is only needed to store a new
experience, so it is extracted after the loop, off the critical path. When experiences are
selected, the draft is evaluated while it is being rewritten with them, so the memory's
score effect is measured at no cost in latency.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generation.base import Backend
from generation.conversation import target_text
from generation.types import ChatParams, Completion, Message, Usage
from loops.answer import clean_answer
from loops.prompting import template
from loops.rewrite import revision_messages
from loops.trace import LoopTrace
from memory.bank import Hit, MemoryBank
from memory.recollect import Selected, select, summarise, task_key
from store.records import ExperienceRecord

log = logging.getLogger(__name__)


RECALL_CHARS = 2000  # of the request's text, embedded to search the bank
RECALL_FLOOR = 0.3  # cosine; measured by bench.memory_floor for the bundled MiniLM


@dataclass(frozen=True, slots=True)
class Recalled:
    query: str  # the text whose embedding searched the bank
    hits: tuple[Hit, ...]
    selected: tuple[Selected, ...]
    usage: Usage
    calls: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "recalled": [{"id": h.experience.id, "score": round(h.score, 4),
                          "key": h.experience.key} for h in self.hits],
            "selected": [{"id": s.hit.experience.id, "reason": s.reason}
                         for s in self.selected],
        }


class MemoryStep:
    def __init__(self, bank: MemoryBank, judge: Backend, writer: Backend,
                 judge_params: ChatParams, *, k: int = 5, select_max: int = 2,
                 margin: float = 0.05, retries: int = 1, floor: float = RECALL_FLOOR) -> None:
        self.bank = bank
        self.judge = judge
        self.writer = writer
        self.judge_params = judge_params
        self.k = k
        self.select_max = select_max
        self.margin = margin
        self.retries = retries
        self.floor = floor

    async def recall(self, query: Sequence[Message], namespace: str) -> Recalled:
        text = recall_text(query)
        # An experience from a task this far from the request does not apply to it: it is
        # not offered to the selector (a small selector keeps whatever it is shown).
        hits = [h for h in await self.bank.recall(text, namespace, self.k, count=False)
                if h.score >= self.floor]
        # The counter write is no reason to keep the selection call waiting.
        (chosen, usage, calls), _ = await asyncio.gather(
            select(self.judge, query, hits, self.judge_params, self.select_max, self.retries),
            self.bank.count_recalled(hits))
        return Recalled(text, tuple(hits), tuple(chosen), usage, calls)

    async def revise(self, recalled: Recalled, query: Sequence[Message], draft: str,
                     params: ChatParams) -> tuple[str, Completion] | None:
        if not recalled.selected:
            return None
        lessons = "\n".join(f"- ({s.hit.experience.key}) {s.hit.experience.text}"
                            for s in recalled.selected)
        request = template("memory_rewrite").substitute(lessons=lessons)
        completion = await self.writer.chat(revision_messages(query, draft, request),
                                            params.with_(n=1))
        text = clean_answer(completion.text, draft.lstrip().startswith("```"))
        if replaces_task(text, draft, target_text(query)):
            log.info("memory rewrite dropped: it changed the task's form")
            return None
        return text, completion

    async def after_loop(self, trace: LoopTrace, namespace: str) -> ExperienceRecord | None:
        """Count the use of selected experiences; remember this loop if it taught something."""
        recalled: Recalled | None = trace.recalled
        if recalled is not None and recalled.selected:
            gain = trace.experiences.get("memory_gain")
            await self.bank.record_use([s.hit.experience.id for s in recalled.selected],
                                       selected=True, gain=gain)
        if not self.worth_remembering(trace):
            return None
        keyed = await task_key(self.judge, trace.query, self.judge_params, self.retries)
        key = keyed.key
        text, _, _ = await summarise(self.judge, key, trace.scores, rounds_text(trace),
                                     self.judge_params, self.retries)
        if text is None:
            return None
        remembered = await self.bank.remember(ExperienceRecord(
            namespace=namespace, key=key, text=text, embedding_model=self.bank.embedder.name,
            score_trajectory=tuple(round(s, 4) for s in trace.scores),
            source_loop_id=trace.loop_id))
        return remembered.experience

    def worth_remembering(self, trace: LoopTrace) -> bool:
        """Reflection gained at least the margin, or reached the threshold only after it."""
        scores = trace.scores
        if len(scores) < 2 or trace.answer.score is None or trace.answer.round == 0:
            return False
        gain = trace.answer.score - scores[0]
        return gain >= self.margin or (trace.stop_reason == "threshold" and gain > 0)


def replaces_task(text: str, draft: str, request: str) -> bool:
    """Whether a memory rewrite turned the answer into another kind of output: JSON where
    neither the draft nor the request has any (a lesson from a JSON task applied to prose).
    A lesson may change how the answer is written, never what it answers."""
    def json_like(s: str) -> bool:
        return s.lstrip().startswith(("{", "[", "```json"))
    return json_like(text) and not json_like(draft) and "json" not in request.lower()


def recall_text(query: Sequence[Message]) -> str:
    """What a new task is searched by: its target turn, whitespace folded, cut short."""
    return " ".join(target_text(query).split())[:RECALL_CHARS]


def rounds_text(trace: LoopTrace) -> str:
    """Each rewrite: the actions tried and how each dimension's score moved."""
    by_position = {c.position: c for c in trace.candidates}
    lines = []
    for cand in trace.candidates:
        parent = by_position.get(cand.parent) if cand.parent is not None else None
        if cand.reflection is None or parent is None or cand.evaluation is None \
                or parent.evaluation is None:
            continue
        before = {s.name: s.score for s in parent.evaluation.scores}
        moves = ", ".join(f"{s.name} {before.get(s.name, '?')}->{s.score}"
                          for s in cand.evaluation.scores if before.get(s.name) != s.score)
        actions = "; ".join(a for item in cand.reflection.items for a in item.actions)
        lines.append(f"round {cand.round}: actions: {actions}\n  effect: {moves or 'no change'}"
                     f" (total {parent.score or 0:.2f} -> {cand.score or 0:.2f})")
    return "\n".join(lines) or "(no rewrite was evaluated)"

"""What a loop did, kept whole: the answer, every candidate, usage and time by stage."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from generation.types import Usage
from loops.degradation import Degradation
from rubrics.checklist import Checklist, Evaluation
from rubrics.checks import CheckOutcome

Emit = Callable[[dict[str, Any]], Awaitable[None]]

STAGES = ("checklist", "draft", "memory", "evaluate", "reflect", "rewrite")


@dataclass(frozen=True, slots=True)
class ReflectionItem:
    dimension: str
    evidence: str
    objective: str
    actions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Reflection:
    """g = Phi(q, y, K): diagnosis-action pairs for the weak dimensions."""

    items: tuple[ReflectionItem, ...]
    summary: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary,
                "items": [{"dimension": i.dimension, "evidence": i.evidence,
                           "objective": i.objective, "actions": list(i.actions)}
                          for i in self.items]}


@dataclass(frozen=True, slots=True)
class Candidate:
    position: int
    round: int
    kind: str                      # draft | memory_rewrite | rewrite
    text: str
    parent: int | None = None
    evaluation: Evaluation | None = None
    score: float | None = None     # normalised, [0, 1]
    reflection: Reflection | None = None   # the reflection that produced this text
    critique: Reflection | None = None     # the reflection written about this text
    usage: Usage = Usage()
    latency_ms: float = 0.0
    finish_reason: str | None = None
    scaffolding: tuple[str, ...] = ()      # loop machinery the text repeats (loops.answer)
    checks: tuple[CheckOutcome, ...] = ()  # the checklist's checks run on the text, in order
    shrunk: bool = False                   # a rewrite that dropped most of the text it revised
    looping: bool = False                  # the text repeats itself (loops.answer.looping)
    # sentences or lines a rewrite says twice that its parent said once (loops.answer.padded)
    padded: tuple[str, ...] = ()
    # a rewrite written in another language than the text it revised (a Chinese request's
    # answer rewritten in English meets a Chinese length limit with no Chinese at all)
    off_language: bool = False
    # a rewrite that shares no content word with the request's task while its parent did
    # (rubrics.topic.off_topic): a check met by writing about something else
    off_topic: bool = False
    conformed: tuple[str, ...] = ()        # check kinds met in code on the model's text
    # The judge first gave this revision its parent's scores on every dimension although the
    # texts differ substantially; the evaluation kept is the one asked again with the
    # difference shown (loops.judges.assess.judged_alike).
    rejudged: bool = False
    # The same text as that earlier candidate (after the exact changes): its judgement is
    # reused, never asked again (one text, one score).
    same_as: int | None = None
    # The reviser first gave its parent back unchanged and was asked once more, firmer.
    retried: bool = False
    # The judge scored it above its parent without quoting the text: the gain is not
    # counted (its score is held at the parent's).
    unsupported: bool = False

    @property
    def checks_passed(self) -> int:
        return sum(o.passed for o in self.checks)


@dataclass
class Ledger:
    """Usage, call counts and seconds by stage; the loop's one mutable accumulator."""

    usage: dict[str, Usage] = field(default_factory=lambda: {s: Usage() for s in STAGES})
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def add(self, stage: str, usage: Usage, calls: int = 1, seconds: float = 0.0) -> None:
        self.usage[stage] = self.usage[stage] + usage
        self.calls[stage] += calls
        self.seconds[stage] += seconds

    @property
    def total(self) -> Usage:
        out = Usage()
        for usage in self.usage.values():
            out = out + usage
        return out

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


@dataclass(frozen=True, slots=True)
class LoopTrace:
    loop_id: str
    answer: Candidate
    candidates: tuple[Candidate, ...]
    checklist: Checklist
    checklist_source: str
    checklist_id: str
    stop_reason: str
    rounds: int
    ledger: Ledger
    elapsed: float
    experiences: dict[str, Any] = field(default_factory=dict)
    query: tuple[Any, ...] = ()
    recalled: Any = None  # loops.memory_step.Recalled, when the memory step ran
    degradations: tuple[Degradation, ...] = ()  # why a stage did less than asked
    # memory was on for this loop as it ran (a loop scored in code runs without it): only
    # such a loop may be remembered
    memory: bool = False

    @property
    def scores(self) -> list[float]:
        return [c.score for c in self.candidates if c.score is not None]

"""The state of one running loop, and how a candidate is scored in it: the exact changes
made first, one judgement per text, the judge asked again when it did not read a revision,
an unquoted gain held at the parent's score, and every failure's cause kept; and what the
loop may still spend.

Budgets: the absolute ones (tokens, seconds), and under `auto` budgets relative to what the
draft cost, with each round's cost forecast before the round starts. A revision repeats the
request and the current text and writes the text again: about twice the draft's tokens and the
reviser's instructions on top. Under a relative budget a round starts only when its forecast
fits what is left; when a revision does not fit but a new answer told the missed checks does
(no draft in its prompt), the round asks anew; when neither fits, the loop stops at `budget`
before spending. A judged loop under a relative budget starts its checklist and its judge
only when a judged round's forecast fits what the draft left; else the draft is the answer.
The absolute budgets are ceilings checked as spent."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from generation.conversation import message_text, target_text
from generation.errors import RedraftError
from generation.structured import for_schema
from generation.types import ChatParams, Message
from loops.answer import looping, shrank
from loops.degradation import OVER_BUDGET, Degradation, failed, invalid
from loops.judges.assess import (
    Assessment,
    Assessor,
    assess_schema,
    contrast_note,
    judged_alike,
    unsupported,
)
from loops.judges.holistic import HolisticAssessor
from loops.judges.requirements import ChecksAssessor
from loops.options import LoopOptions
from loops.reflection import assess_messages
from loops.rewrite import anew_messages, revision_messages
from loops.trace import Candidate, Emit, Ledger
from rubrics.budget import budgeted
from rubrics.checklist import Checklist
from rubrics.checks import Check, conform, run_checks
from rubrics.checks.base import bounds
from rubrics.checks.counts import count_cjk, count_words

log = logging.getLogger("loops.controller")


class Stop(Exception):
    """Ends the rounds with a stop reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass
class RunState:
    """The state of one loop while it runs."""

    query: Sequence[Message]
    params: ChatParams
    options: LoopOptions
    assessor: Assessor | HolisticAssessor | ChecksAssessor
    emit: Emit | None
    started: float
    ledger: Ledger
    checklist: Checklist | None = None     # what the judge scores: the dimensions only
    checks: tuple[Check, ...] = ()         # what code verifies on every candidate
    candidates: list[Candidate] | None = None
    degradations: list[Degradation] = field(default_factory=list)

    async def event(self, name: str, **fields: Any) -> None:
        if self.emit is not None:
            await self.emit({"event": name, **fields})

    def degrade(self, found: Degradation) -> None:
        """Keep why a stage did less than asked (once per stage and cause)."""
        if not any((d.stage, d.cause) == (found.stage, found.cause) for d in self.degradations):
            self.degradations.append(found)

    def judged_before(self, text: str) -> Candidate | None:
        """An evaluated candidate with this very text: one text, one score."""
        key = text.strip()
        return next((c for c in self.candidates or () if c.score is not None
                     and c.text.strip() == key), None)


class Scorer:
    """Scores candidates into a `RunState`."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    async def evaluate(self, run: RunState, cand: Candidate, want_reflection: bool,
                        slot: int | None = None) -> Candidate:
        """Score `cand` and add it to the loop's candidates (at `slot` when one was kept for
        it, so that concurrent evaluations keep their order). The checks an exact change
        meets are met first (`LoopOptions.conform`): the judge scores the text answered. A
        text already judged in this loop keeps that judgement (one text, one score)."""
        if run.options.conform and run.checks:
            text, met = conform(cand.text, run.checks)
            cand = replace(cand, text=text, conformed=met) if met else cand
        position = len(run.candidates) if slot is None else slot  # type: ignore[arg-type]
        same = run.judged_before(cand.text)
        if same is not None and (same.critique is not None or not want_reflection):
            cand = replace(cand, position=position, evaluation=same.evaluation,
                           score=same.score, critique=same.critique, checks=same.checks,
                           looping=same.looping, same_as=same.position,
                           unsupported=same.unsupported)
        else:
            cand = await self._judged(run, cand, want_reflection, position)
            if cand.score is None:
                return cand
        if slot is None:
            run.candidates.append(cand)  # type: ignore[union-attr]
        else:
            run.candidates[slot] = cand  # type: ignore[index]
        await run.event("evaluated", round=cand.round, candidate=position, score=cand.score,
                        checks_passed=cand.checks_passed, checks=len(cand.checks),
                        conformed=list(cand.conformed), rejudged=cand.rejudged,
                        same_as=cand.same_as)
        return cand

    async def _judged(self, run: RunState, cand: Candidate, want_reflection: bool,
                      position: int) -> Candidate:
        """`cand` scored by the judge (None score when no usable judgement came back: the
        cause is kept). A rewrite's gain that the judge's evidence does not quote from the
        text (`unsupported`) is not counted: its score is held at its parent's."""
        t0 = self.clock()
        try:
            a = await run.assessor.assess(run.query, cand.text, run.checklist, want_reflection)  # type: ignore[arg-type]
        except RedraftError as exc:
            run.degrade(failed("evaluate", exc))
            raise Stop("degraded") from None
        run.ledger.add("evaluate", a.usage, a.calls, self.clock() - t0)
        if a.compact:
            run.degrade(Degradation("evaluate", "context_overflow", "the judge's prompt did not "
                                    "fit the model's context", "judged without the rubric's "
                                    "band descriptions"))
        if a.evaluation is None:
            run.degrade(invalid("evaluate", a.calls, a.error))
            return replace(cand, position=position)
        a, rejudged = await self._rejudge_alike(run, cand, a, want_reflection)
        score = a.score(run.checklist)  # type: ignore[arg-type]
        parent = run.candidates[cand.parent] if cand.parent is not None else None  # type: ignore[index]
        held = parent is not None and parent.score is not None and score is not None \
            and score > parent.score and unsupported(a.evaluation)
        if held:
            score = parent.score  # type: ignore[union-attr]
        checks = run_checks(cand.text, run.checks)
        shrunk = parent is not None and shrank(cand.text, parent.text, target_text(run.query),
                                               run.checks)
        return replace(cand, position=position, evaluation=a.evaluation, score=score,
                       critique=a.critique, checks=checks, shrunk=shrunk, rejudged=rejudged,
                       looping=looping(cand.text), unsupported=held)

    async def _rejudge_alike(self, run: RunState, cand: Candidate, a: Assessment,
                             want_reflection: bool) -> tuple[Assessment, bool]:
        """A judge that gives a revision its parent's scores on every dimension although
        the two texts differ substantially (`judged_alike`) is asked once more, told the
        earlier scores and what differs (`contrast_note`), and that second judgement is
        kept (the first one, if the second fails). Pointwise rather than pairwise, so the
        re-asked scores stay on the scale every other candidate was scored on."""
        if cand.parent is None or not run.candidates:
            return a, False
        parent = run.candidates[cand.parent]
        if not judged_alike(parent.evaluation, a.evaluation, parent.text, cand.text):
            return a, False
        t0 = self.clock()
        note = contrast_note(parent.text, parent.evaluation, cand.text)  # type: ignore[arg-type]
        try:
            again = await run.assessor.assess(run.query, cand.text, run.checklist,  # type: ignore[arg-type]
                                              want_reflection, contrast=note)
        except RedraftError as exc:
            run.degrade(failed("evaluate", exc, "kept the first judgement"))
            return a, False
        run.ledger.add("evaluate", again.usage, again.calls, self.clock() - t0)
        log.info("judge gave a differing revision its parent's scores; asked again")
        return (again if again.evaluation is not None else a), True


# -- budgets ------------------------------------------------------------------------------

REVISE, ANEW = "revise", "anew"


def token_budget(run: RunState) -> float | None:
    """The loop's token budget: the absolute one, or the draft's tokens times the ratio when
    that is less."""
    budget = run.options.token_budget
    ratio = run.options.token_budget_ratio
    draft = run.ledger.usage["draft"].total_tokens
    if ratio is not None and draft:
        return min(budget or math.inf, ratio * draft)
    return budget


def check_spent(run: RunState) -> None:
    """Stop at `budget` once the loop has spent its token budget."""
    budget = token_budget(run)
    if budget is not None and run.ledger.total.total_tokens >= budget:
        raise Stop("budget")


# the length kinds whose reach a completion limit bounds
_LENGTHS = {"word_count": count_words, "char_count": count_cjk}
# a rewrite may be written a little denser than the text it revises
_DENSER = 1.25


def check_reachable(run: RunState, current: Candidate) -> None:
    """Stop at `max_tokens` when a round cannot pay under `checks`: every check `current`
    fails asks for more words or characters than the completion limit holds (at the rate
    `current` was written; a text the limit cut is all it holds), which no rewrite under that
    limit can write."""
    if run.options.evaluation != "checks":
        return
    failed = [check for check, outcome in zip(run.checks, current.checks, strict=False)
              if not outcome.passed]
    if failed and all(check.kind in _LENGTHS and _reach(run, current, check.kind) < bounds(
            check.params["relation"], int(check.params["n"]), check.params.get("upper"))[0]
                      for check in failed):
        raise Stop("max_tokens")


def _reach(run: RunState, current: Candidate, kind: str) -> float:
    """How many units of `kind` a text written as `current` was can hold within the
    completion limit (infinite without one)."""
    have = _LENGTHS[kind](current.text)
    if current.finish_reason == "length":
        return have
    limit, wrote = run.params.max_tokens, current.usage.completion_tokens
    if not limit or not wrote:
        return math.inf
    return have * limit / wrote * _DENSER


def round_form(run: RunState, current: Candidate, request: str, k: int = 1) -> str:
    """How the next round's `k` rewrites of `current` are asked under a relative token budget:
    `REVISE` when revising fits what is left, `ANEW` when only a new answer told the missed
    checks fits; Stop at `budget` when neither does. Without a relative budget: `REVISE`.
    (A text short of its length alone is revised too: asked anew instead, the 1.5B model
    answered a 40-60 字 request it had met in 12 characters in 3.)"""
    if run.options.token_budget_ratio is None or not run.ledger.usage["draft"].total_tokens:
        return REVISE
    left = budget_left(run)
    writes = _completion_tokens(current, run.ledger)
    revising = _prompt_tokens(run, revision_messages(run.query, current.text, request),
                              current.text, writes)
    if k * (revising + writes) <= left:
        return REVISE
    if any(not o.passed for o in current.checks):
        if k * (_prompt_tokens(run, anew_messages(run.query, current.checks)) + writes) <= left:
            return ANEW
    raise Stop("budget")


def judged_round_tokens(run: RunState, text: str, checklist: Checklist,
                        agents: Sequence[str], judge_tokens: int) -> int:
    """A judged round's tokens, forecast once the draft `text` is in and before any judge
    call: the checklist's agent calls (`agents`, each one's instructions; none when the
    checklist is cached), each reading the request and writing up to `judge_tokens`; the
    draft's evaluation and its rewrite's, each the judge's prompt with `checklist` and the
    text, answered in up to `judge_tokens`; and the rewrite, a revision of the draft."""
    drafted = run.ledger.usage["draft"]
    writes = drafted.completion_tokens
    agent_calls = sum(drafted.prompt_tokens + math.ceil(len(a) / _INSTRUCTION_CHARS_PER_TOKEN)
                      + judge_tokens for a in agents)
    evaluation = _prompt_tokens(run, assess_messages(run.query, text, checklist), text,
                                writes) + judge_tokens
    revision = _prompt_tokens(run, revision_messages(run.query, text, ""), text, writes)
    return agent_calls + 2 * evaluation + revision + writes


def judged_over_budget(run: RunState, text: str, checklist: Checklist, agents: Sequence[str],
                       judge_params: ChatParams) -> Degradation | None:
    """Why a judged round does not fit what the draft `text` left of the budget (its
    forecast, `judged_round_tokens`, the judge writing up to its evaluation schema's
    budget), or None when it fits."""
    judge_tokens = budgeted(for_schema(judge_params), assess_schema(checklist)).max_tokens
    forecast = judged_round_tokens(run, text, checklist, agents, judge_tokens or 0)
    left = budget_left(run)
    if forecast <= left:
        return None
    return Degradation("evaluate", OVER_BUDGET, f"a judged round is forecast at {forecast} "
                       f"tokens; the loop's budget leaves {left:.0f} "
                       f"({run.options.token_budget_ratio:g}x the draft's)",
                       "answered the draft")


def budget_left(run: RunState) -> float:
    """Tokens the loop may still spend (infinite without a token budget)."""
    return (token_budget(run) or math.inf) - run.ledger.total.total_tokens


def _completion_tokens(current: Candidate, ledger: Ledger) -> int:
    """What a rewrite of `current` is expected to write: as many tokens as `current` took."""
    if current.usage is not None and current.usage.completion_tokens:
        return current.usage.completion_tokens
    return ledger.usage["draft"].completion_tokens


# characters per token of the loop's own instructions (English prose on common tokenizers)
_INSTRUCTION_CHARS_PER_TOKEN = 4.0


def _prompt_tokens(run: RunState, messages: Sequence[Message], quoted: str = "",
                   quoted_tokens: int = 0) -> int:
    """A prompt's tokens, forecast from the draft's call: its prompt tokens (the request with
    its chat template), a quoted text at the tokens it took to write, and the loop's
    instructions around them at English prose's rate."""
    added = _chars(messages) - _chars(run.query) - len(quoted)
    return (run.ledger.usage["draft"].prompt_tokens + quoted_tokens
            + max(0, math.ceil(added / _INSTRUCTION_CHARS_PER_TOKEN)))


def _chars(messages: Sequence[Message]) -> int:
    return sum(len(message_text(m)) for m in messages)


@contextlib.asynccontextmanager
async def time_limit(run: RunState, clock: Callable[[], float]) -> AsyncIterator[None]:
    """The rounds within what is left of the loop's time budget (the absolute one, or the
    draft's seconds times the ratio when that is less); Stop at `budget` past it."""
    budget = run.options.time_budget
    ratio = run.options.time_budget_ratio
    drafted = run.ledger.seconds["draft"]
    if ratio is not None and drafted > 0:
        budget = min(budget or math.inf, ratio * drafted)
    if budget is None:
        yield
        return
    remaining = budget - (clock() - run.started)
    try:
        if remaining <= 0:
            raise TimeoutError
        async with asyncio.timeout(remaining):
            yield
    except TimeoutError:
        if not any(c.score is not None for c in run.candidates or ()):
            # cut before any text was scored: the loop did not run, and says so
            run.degrade(Degradation("evaluate", "timeout", f"the loop's time budget of "
                                    f"{budget:g} s ran out before the draft was scored", ""))
        raise Stop("budget") from None

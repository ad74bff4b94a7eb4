"""The LLM-as-a-Judge baseline of Writer-R1's Table 3: a holistic critique instead of a checklist.

    y0 <- pi(q); (c0, s0) <- judge(q, y0)       one critique and one overall score, no rubric
    while S* < tau and t < T:                   (and within the token/time budget)
        k candidates y' <- rewrite(q, y, c); judge each
        y <- the best of this round; y* <- argmax score over everything judged
    return y*

Same rounds, threshold, budgets and trace as the MRPO loop (`loops.controller`), so the two
compare like for like; the judgement is recorded as a one-dimension checklist, "Overall
quality" on 1..10, with `checklist_source` "none" (no checklist was used).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field

from llm.base import Backend, JsonSchema
from llm.errors import RedraftError
from llm.structured import AnswerModel, ask, for_schema
from llm.types import ChatParams, Message, Usage
from loops.options import LoopOptions
from loops.prompting import Attempt, language_rule, template
from loops.rewrite import rewrite
from loops.trace import Candidate, Emit, Ledger, LoopTrace, Reflection, ReflectionItem
from rubrics.checklist import Checklist, Evaluation
from rubrics.conversation import render_conversation, target_text
from store.ids import new_id

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
    """The tightest schema `HolisticOut` validates: an integer score on 1..10, all required."""
    return {"type": "object", "additionalProperties": False,
            "required": ["critique", "actions", "score"],
            "properties": {
                "critique": {"type": "string", "minLength": 1},
                "actions": {"type": "array", "items": {"type": "string", "minLength": 1},
                            "minItems": 1, "maxItems": MAX_ACTIONS},
                "score": {"type": "integer", "minimum": LOW, "maximum": HIGH}}}


@dataclass(frozen=True, slots=True)
class Judgement:
    score: int
    critique: Reflection


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass
class _Run:
    query: Sequence[Message]
    params: ChatParams
    options: LoopOptions
    emit: Emit | None
    started: float
    ledger: Ledger
    candidates: list[Candidate]

    async def event(self, name: str, **fields: Any) -> None:
        if self.emit is not None:
            await self.emit({"event": name, **fields})


class HolisticLoop:
    def __init__(self, writer: Backend, judge: Backend, *, judge_params: ChatParams,
                 clock: Callable[[], float] = time.monotonic, retries: int = 2) -> None:
        self.writer = writer
        self.judge = judge
        self.judge_params = for_schema(judge_params)
        self.clock = clock
        self.retries = retries

    async def run(self, query: Sequence[Message], params: ChatParams, options: LoopOptions, *,
                  emit: Emit | None = None) -> LoopTrace:
        run = _Run(query, params.with_(n=1), options, emit, self.clock(), Ledger(), [])
        t0 = self.clock()
        completion = await self.writer.chat(run.query, run.params)
        run.ledger.add("draft", completion.usage, seconds=self.clock() - t0)
        draft = Candidate(0, 0, "draft", completion.text, usage=completion.usage,
                          latency_ms=(self.clock() - t0) * 1000,
                          finish_reason=completion.finish_reason)
        await run.event("checklist", source="none", dimensions=0)
        await run.event("drafted", tokens=completion.usage.completion_tokens)
        stop, rounds = await self._rounds(run, draft)
        if not run.candidates:
            run.candidates.append(draft)
        best = _best(run.candidates)
        await run.event("stopped", reason=stop, rounds=rounds, score=best.score)
        return LoopTrace(new_id(), best, tuple(run.candidates), SCALE, "none", None, stop, rounds,  # type: ignore[arg-type]
                         run.ledger, self.clock() - run.started, {}, tuple(query), None)

    async def _rounds(self, run: _Run, draft: Candidate) -> tuple[str, int]:
        opts = run.options
        try:
            async with asyncio.timeout(_remaining(opts, self.clock() - run.started)):
                current = await self._judge(run, draft)
                if current.score is None:
                    return "degraded", 0
                history: list[Attempt] = []
                for t in range(1, opts.max_rounds + 1):
                    if _reached(run):
                        return "threshold", t - 1
                    if opts.token_budget is not None \
                            and run.ledger.total.total_tokens >= opts.token_budget:
                        raise _Stop("budget")
                    newest = await self._round(run, t, current, history)
                    if newest is None:
                        return "degraded", t
                    history.append(Attempt(t, (current.critique.summary if current.critique
                                              else "")[:200], current.score or 0.0,
                                           newest.score or 0.0))
                    current = newest
                return ("threshold" if _reached(run) else "max_rounds"), opts.max_rounds
        except TimeoutError:
            return "budget", max(c.round for c in run.candidates or [draft])
        except _Stop as stop:
            return stop.reason, max(c.round for c in run.candidates or [draft])
        except RedraftError:  # an upstream failure mid-loop: the best text so far stands
            return "degraded", max(c.round for c in run.candidates or [draft])

    async def _round(self, run: _Run, t: int, current: Candidate,
                     history: list[Attempt]) -> Candidate | None:
        critique = current.critique
        assert critique is not None
        await run.event("reflected", round=t, dimensions=[OVERALL])
        results = await asyncio.gather(*(self._child(run, t, current, critique, history)
                                         for _ in range(run.options.candidates)),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, RedraftError):
                raise result
        scored = [c for c in results if isinstance(c, Candidate) and c.score is not None]
        return _best(scored) if scored else None

    async def _child(self, run: _Run, t: int, parent: Candidate, critique: Reflection,
                     history: list[Attempt]) -> Candidate:
        t0 = self.clock()
        text, completion = await rewrite(self.writer, run.query, parent.text, critique,
                                         run.params, list(history))
        run.ledger.add("rewrite", completion.usage, seconds=self.clock() - t0)
        child = Candidate(0, t, "rewrite", text, parent=parent.position, reflection=critique,
                          usage=completion.usage, latency_ms=(self.clock() - t0) * 1000,
                          finish_reason=completion.finish_reason)
        await run.event("rewritten", round=t)
        return await self._judge(run, child)

    async def _judge(self, run: _Run, cand: Candidate) -> Candidate:
        t0 = self.clock()
        judgement, usage, calls = await judge_holistically(
            self.judge, run.query, cand.text, self.judge_params, self.retries)
        run.ledger.add("evaluate", usage, calls, self.clock() - t0)
        position = len(run.candidates)
        if judgement is None:
            cand = replace(cand, position=position)
        else:
            evaluation = Evaluation(scores=(SCALE.dimensions[0].scored(
                judgement.score, judgement.critique.summary[:1000]),))
            cand = replace(cand, position=position, evaluation=evaluation,
                           score=evaluation.normalised(SCALE), critique=judgement.critique)
        run.candidates.append(cand)
        await run.event("evaluated", round=cand.round, candidate=position, score=cand.score)
        return cand


async def judge_holistically(judge: Backend, query: Sequence[Message], text: str,
                             params: ChatParams, retries: int
                             ) -> tuple[Judgement | None, Usage, int]:
    """One critique and one overall score of `text`; None when the judge never answered well."""
    prompt = template("holistic").substitute(
        conversation=render_conversation(query), text=text, low=LOW, high=HIGH,
        language_rule=language_rule(target_text(query)))
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]

    def accept(out: HolisticOut) -> Judgement:
        item = ReflectionItem(OVERALL, "", out.critique, tuple(out.actions))
        return Judgement(out.score, Reflection(items=(item,), summary=out.critique))

    answer = await ask(judge, messages, params, HolisticOut, accept, retries=retries,
                       schema=holistic_schema())
    return answer.value, answer.usage, answer.calls


def _remaining(options: LoopOptions, elapsed: float) -> float | None:
    return None if options.time_budget is None else max(0.0, options.time_budget - elapsed)


def _reached(run: _Run) -> bool:
    best = _best(run.candidates)
    return best.score is not None and best.score >= run.options.threshold


def _best(candidates: Sequence[Candidate]) -> Candidate:
    """The highest-scoring judged candidate; the earliest wins a tie."""
    best = candidates[0]
    for cand in candidates[1:]:
        if cand.score is not None and (best.score is None or cand.score > best.score):
            best = cand
    return best

"""Algorithm 1 of Writer-R1 (MRPO): the reflection loop.

    K <- checklist(q)  ||  y0 <- pi(q)          (concurrently)
    y0 <- memory rewrite of y0 when experiences are selected (hook, see `MemoryStep`)
    S0 <- evaluate(y0, K); y* <- y0; y <- y0
    while S* < tau and t < T:                   (and within the token/time budget)
        g <- reflect(q, y, K)                   (fused with the evaluation of y by default)
        k candidates y' <- rewrite(q, y, g); evaluate each
        y <- the best of this round (the current text follows the newest candidate, unless
             it dropped most of the text it revised: see loops.answer)
        y* <- argmax score over everything evaluated
    return y*
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from generation.base import Backend
from generation.conversation import target_text
from generation.errors import RedraftError
from generation.types import ChatParams, Completion, Message
from loops.answer import best as _best
from loops.answer import finished, off_language, padded, scaffolding, unlooped
from loops.checklists import ChecklistProvider, ChecklistSpec, Resolved
from loops.degradation import OVER_BUDGET, Degradation, failed, with_outcome
from loops.judges.assess import Assessor
from loops.judges.calibration import JudgeStatus
from loops.judges.holistic import RESOLVED as HOLISTIC
from loops.judges.holistic import HolisticAssessor
from loops.judges.requirements import ChecksAssessor, resolved_for, stated_checks
from loops.options import LoopOptions
from loops.probes.reviser import ReviserStatus
from loops.prompting import Attempt, measured_change
from loops.reflection import with_checks
from loops.rewrite import UNCHANGED_NOTE, answer_anew, revision_request, rewrite, varied
from loops.scoring import (
    ANEW,
    RunState,
    Scorer,
    Stop,
    check_reachable,
    check_spent,
    judged_over_budget,
    round_form,
    time_limit,
)
from loops.trace import Candidate, Emit, Ledger, LoopTrace
from rubrics.agents import agent_instructions
from rubrics.checks import conform
from rubrics.topic import off_topic
from store.records import new_id

log = logging.getLogger(__name__)


class MemoryStep(Protocol):
    """Algorithm 1, lines 7-11 (`loops.memory_step` implements it): recall runs concurrently
    with the checklist and the draft; `revise` rewrites the draft with selected experiences."""

    async def recall(self, query: Sequence[Message], namespace: str) -> Any: ...

    async def revise(self, recalled: Any, query: Sequence[Message], draft: str,
                     params: ChatParams) -> tuple[str, Completion] | None: ...


class ReflectionLoop:
    def __init__(self, writer: Backend, judge: Backend, checklists: ChecklistProvider, *,
                 judge_params: ChatParams, memory: MemoryStep | None = None,
                 clock: Callable[[], float] = time.monotonic, retries: int = 2,
                 judge_status: JudgeStatus | None = None,
                 reviser_status: ReviserStatus | None = None) -> None:
        self.writer = writer
        self.judge = judge
        # what `auto` asks before it calls the judge; None: the judge is taken as usable
        self.judge_status = judge_status
        # what `auto` asks before it asks the writer for a revision of a text scored in code;
        # None: the writer is taken as a usable reviser
        self.reviser_status = reviser_status
        self.checklists = checklists
        self.judge_params = judge_params
        self.memory = memory
        self.clock = clock
        self.scorer = Scorer(clock)
        self.retries = retries

    async def run(self, query: Sequence[Message], params: ChatParams, options: LoopOptions, *,
                  namespace: str, spec: ChecklistSpec | None = None,
                  emit: Emit | None = None) -> LoopTrace:
        assessor: Assessor | HolisticAssessor | ChecksAssessor
        fixed: Resolved | None = None
        unjudged: Degradation | None = None
        unrevised: Degradation | None = None
        judge_ok = self.judge_status is None or self.judge_status.usable
        reviser_ok = self.reviser_status is None or self.reviser_status.usable
        if options.evaluation == "auto" and spec is not None and judge_ok:
            # a request that chose its checklist asks for its dimensions to be judged
            options = replace(options, evaluation="joint", token_budget_ratio=None,
                              time_budget_ratio=None)
        if options.evaluation in ("checks", "auto"):
            # The request's own requirements decide (those of the checklist it chose, or those
            # its words state); one that has none is judged (under `auto`, only by a judge
            # that passed its probe; else its draft is the answer).
            chosen = await self.checklists.fixed(spec, namespace) if spec else None
            stated = chosen.checklist.checks if chosen is not None else ()
            stated = stated or await asyncio.to_thread(stated_checks, query)
            if stated:
                fixed, assessor = resolved_for(stated, chosen), ChecksAssessor(stated)
                if options.evaluation == "auto" and not reviser_ok:
                    # a writer that has not shown it can revise is asked for no revision:
                    # the draft with the exact changes made in code is the answer
                    unrevised = Degradation(
                        "rewrite", "reviser_unusable", self.reviser_status.line(),  # type: ignore[union-attr]
                        "answered the draft, with the exact changes made in code")
                    options = replace(options, max_rounds=0)
                options = replace(options, memory=False, evaluation="checks")
            elif options.evaluation == "auto" and not judge_ok:
                unjudged = Degradation("evaluate", "judge_unusable", self.judge_status.line(),
                                       "answered the draft: the request states no check "
                                       "code can run")
                # nothing is scored: the draft is all the loop asks for
                fixed, assessor = chosen or HOLISTIC, ChecksAssessor(())
                options = replace(options, memory=False, max_rounds=0, evaluation="checks")
            else:
                # judged: under `auto` within the budgets relative to the draft (its judge
                # is asked only when a judged round's forecast fits), else as `joint` is
                fixed, options = chosen, replace(options, evaluation="joint")
        if options.evaluation == "holistic":
            # The LLM-as-a-Judge baseline: one overall critique per text, no checklist, no memory.
            fixed = HOLISTIC
            assessor = HolisticAssessor(self.judge, self.judge_params, self.retries)
            options = replace(options, memory=False)
        elif options.evaluation != "checks":
            if fixed is None:
                fixed = await self.checklists.fixed(spec, namespace) if spec else None
            assessor = Assessor(self.judge, self.judge_params, options.evaluation,  # type: ignore[arg-type]
                                options.fuse_reflection, self.retries)
        run = RunState(query, params.with_(n=1), options, assessor, emit, self.clock(), Ledger(),
                   candidates=[])
        resolved, y0, recalled, revising = await self._first_draft(run, fixed, namespace)
        if isinstance(resolved, Degradation):
            # no judged round fits the budget the draft left: the draft is the answer
            resolved, unjudged = HOLISTIC, resolved
        if resolved.degradation is not None:
            run.degrade(resolved.degradation)
        # The judge never sees the checks (they are run in code), and a checklist without
        # them is the same rubric for the judge prompts' caches.
        run.checks = resolved.checklist.checks
        run.checklist = resolved.checklist.model_copy(update={"checks": ()})
        await run.event("checklist", source=resolved.source,
                        dimensions=len(resolved.checklist.dimensions))
        experiences: dict[str, Any] = recalled.as_dict() if recalled is not None else {}
        first, evaluated = y0, False
        if unjudged is not None:
            run.degrade(unjudged)
            stop, rounds = ("budget" if unjudged.cause == OVER_BUDGET else "unjudged"), 0
        else:
            if revising is not None:
                first, evaluated = await self._apply_memory(run, revising, y0, experiences)
            stop, rounds = await self._rounds(run, first, evaluated)
            if unrevised is not None and stop == "max_rounds":
                # the draft misses a check and no revision was asked
                run.degrade(unrevised)
                stop = "unrevised"
        if not run.candidates:
            run.candidates = [y0]
        strict = options.evaluation == "checks"
        best = _best(run.candidates or [], strict=strict)
        revised = next((c for c in run.candidates if c.kind == "memory_rewrite"), None)
        if revised is not None and revised.score is not None \
                and experiences.get("draft_score") is not None:
            experiences["memory_gain"] = round(revised.score - experiences["draft_score"], 4)
        loop_id = new_id()
        degradations = with_outcome(run.degradations, _answered(best))
        if degradations:
            log.warning("loop %s degraded: %s", loop_id,
                        " | ".join(d.line() for d in degradations))
        await run.event("stopped", reason=stop, rounds=rounds,
                        score=best.score if best.score is not None else None)
        return LoopTrace(loop_id, best, tuple(run.candidates or []), resolved.checklist,
                         resolved.source, resolved.id, stop, rounds, run.ledger,
                         self.clock() - run.started, experiences, tuple(query), recalled,
                         degradations, memory=self.memory is not None and options.memory)

    async def _first_draft(self, run: RunState, fixed: Resolved | None, namespace: str,
                           ) -> tuple[Resolved | Degradation, Candidate, Any,
                                      asyncio.Future[Any] | None]:
        """Checklist, draft and memory recall, all concurrently; the memory rewrite of the
        draft starts as soon as the draft and the selection are in, while a checklist still
        being generated goes on. A judged loop under a relative budget builds its checklist
        only after the draft, once a judged round's forecast fits what is left; when none
        does, the Degradation that says so stands for the checklist."""
        t0 = self.clock()
        checklist_task = None
        bounded = fixed is None and run.options.token_budget_ratio is not None
        if fixed is None and not bounded:
            checklist_task = asyncio.ensure_future(self.checklists.build(
                run.query, run.params.model or "", namespace, run.options.checklist_mode))
        recall_task = None
        if self.memory is not None and run.options.memory:
            recall_task = asyncio.ensure_future(self.memory.recall(run.query, namespace))
        revising: asyncio.Future[Any] | None = None
        try:
            completion = await self.writer.chat(run.query, run.params)
            run.ledger.add("draft", completion.usage, seconds=self.clock() - t0)
            text, finish_reason = unlooped(completion.text or "", completion.finish_reason)
            draft = Candidate(0, 0, "draft", text, usage=completion.usage,
                              latency_ms=(self.clock() - t0) * 1000,
                              finish_reason=finish_reason)
            await run.event("drafted", tokens=completion.usage.completion_tokens)
            recalled = await self._recalled(run, recall_task, t0)
            if recalled is not None and recalled.selected:
                revising = asyncio.ensure_future(self._revise(run, recalled, draft))
            if bounded:
                over = await self._over_budget(run, draft)
                if over is not None:
                    if revising is not None:
                        revising.cancel()
                    return over, draft, recalled, None
                checklist_task = asyncio.ensure_future(self.checklists.build(
                    run.query, run.params.model or "", namespace, run.options.checklist_mode))
            resolved = fixed or await self._checklist_in_time(run, checklist_task, namespace)  # type: ignore[arg-type]
        except BaseException:
            for task in (checklist_task, recall_task, revising):
                if task is not None:
                    task.cancel()
            raise
        if fixed is None:
            run.ledger.add("checklist", resolved.usage, resolved.calls, self.clock() - t0)
        return resolved, draft, recalled, revising

    async def _over_budget(self, run: RunState, draft: Candidate) -> Degradation | None:
        """Why no judged round fits the budget the draft left, or None when one does: the
        checklist it would be judged on is the cached one, or one of the generic's size that
        the agents would write."""
        mode = run.options.checklist_mode
        cached = await self.checklists.cached(run.query, run.params.model or "", mode)
        checklist = cached if cached is not None else self.checklists.generic(run.query)
        agents = () if cached is not None else agent_instructions(mode)
        return judged_over_budget(run, draft.text, checklist, agents, self.judge_params)

    async def _checklist_in_time(self, run: RunState, task: asyncio.Future[Resolved],
                                 namespace: str) -> Resolved:
        """The checklist being built, within what is left of the loop's time budget; past
        it, the generic checklist (with the pre-pass's checks), and the cause kept."""
        budget = run.options.time_budget
        if budget is None:
            return await task
        remaining = budget - (self.clock() - run.started)
        try:
            return await asyncio.wait_for(task, max(0.0, remaining))
        except TimeoutError:
            cause = Degradation("checklist", "timeout", f"the loop's time budget of {budget:g} s "
                                "ran out while the checklist was being built",
                                "used the generic checklist")
            return await self.checklists.fallback(run.query, namespace, cause)

    async def _recalled(self, run: RunState, task: asyncio.Future[Any] | None, t0: float) -> Any:
        if task is None:
            return None
        try:
            recalled = await task
        except RedraftError as exc:  # memory is a help, never a reason to fail the answer
            log.warning("memory recall failed: %s", exc.message)
            run.degrade(failed("memory", exc, "went on without memory"))
            return None
        run.ledger.add("memory", recalled.usage, recalled.calls, self.clock() - t0)
        await run.event("recalled", recalled=len(recalled.hits), selected=len(recalled.selected))
        return recalled

    async def _revise(self, run: RunState, recalled: Any, y0: Candidate) -> Candidate | None:
        """The draft rewritten with the selected experiences (not yet evaluated)."""
        t0 = self.clock()
        try:
            revised = await self.memory.revise(  # type: ignore[union-attr]
                recalled, run.query, y0.text, run.params)
        except RedraftError as exc:
            log.warning("memory rewrite failed: %s", exc.message)
            run.degrade(failed("memory", exc, "went on from the draft"))
            return None
        if revised is None:
            return None
        text, completion = revised
        text, finish_reason = unlooped(text, completion.finish_reason)
        run.ledger.add("memory", completion.usage, seconds=self.clock() - t0)
        lessons = "\n".join(s.hit.experience.text for s in recalled.selected)
        leaks = tuple(scaffolding(text, f"{target_text(run.query)}\n{y0.text}", lessons))
        return Candidate(0, 0, "memory_rewrite", text, usage=completion.usage,
                         latency_ms=(self.clock() - t0) * 1000,
                         finish_reason=finish_reason, scaffolding=leaks)

    async def _apply_memory(self, run: RunState, revising: asyncio.Future[Any], y0: Candidate,
                            experiences: dict[str, Any]) -> tuple[Candidate, bool]:
        """Evaluate the draft while it is (still) being rewritten with the experiences, and
        the rewrite (with the reflection for round 1) alongside the draft's evaluation."""
        run.candidates.append(y0)  # type: ignore[union-attr]  # slot 0, scored below
        tasks = [asyncio.ensure_future(self.scorer.evaluate(run, y0, False, slot=0))]
        try:
            revised = await revising
            if revised is not None:
                revised = replace(revised, parent=0)
                run.candidates.append(revised)  # type: ignore[union-attr]
                tasks.append(asyncio.ensure_future(self.scorer.evaluate(
                    run, revised, run.options.max_rounds > 0, slot=1)))
            done = await asyncio.gather(*tasks)
        except Stop:
            # the draft's or the rewrite's evaluation failed (its cause is kept): the rounds
            # see an unscored draft and stop there
            return y0, True
        except BaseException:
            for task in tasks:
                task.cancel()
            raise
        experiences["draft_score"] = done[0].score
        # A memory rewrite that dropped most of the draft is not followed either.
        return (done[0] if done[-1].shrunk else done[-1]), True

    async def _rounds(self, run: RunState, first: Candidate, evaluated: bool) -> tuple[str, int]:
        opts = run.options
        strict = opts.evaluation == "checks"
        try:
            async with time_limit(run, self.clock):
                current = first if evaluated else await self.scorer.evaluate(
                    run, first, want_reflection=opts.max_rounds > 0)
                if current.score is None:
                    return "degraded", 0
                history: list[Attempt] = []
                for t in range(1, opts.max_rounds + 1):
                    if finished(_best(run.candidates or [], strict=strict), opts.threshold):
                        return "threshold", t - 1
                    check_spent(run)
                    check_reachable(run, current)
                    parent = current
                    current = await self._round(run, t, current, history)
                    if current is None:
                        return "degraded", t
                    if opts.token_budget_ratio is not None and not gained(parent, current) \
                            and not finished(_best(run.candidates or [], strict=strict),
                                             opts.threshold):
                        # under a relative budget a round that moved nothing is not followed:
                        # the next one would mostly ask the same again
                        return "no_gain", t
                if finished(_best(run.candidates or [], strict=strict), opts.threshold):
                    return "threshold", opts.max_rounds
                return "max_rounds", opts.max_rounds
        except Stop as stop:
            return stop.reason, max((c.round for c in run.candidates or []), default=0)
        except RedraftError as exc:
            # An upstream failure mid-loop: the best text so far is still a good answer.
            run.degrade(failed("loop", exc))
            return "degraded", max((c.round for c in run.candidates or []), default=0)

    async def _round(self, run: RunState, t: int, current: Candidate,
                     history: list[Attempt]) -> Candidate | None:
        critique = current.critique
        if critique is None:
            t0 = self.clock()
            try:
                reflected = await run.assessor.reflect(
                    run.query, current.text, run.checklist, current.evaluation,  # type: ignore[arg-type]
                    history, current.checks)
            except RedraftError as exc:
                run.degrade(failed("reflect", exc))
                raise Stop("degraded") from None
            run.ledger.add("reflect", reflected.usage, reflected.calls, self.clock() - t0)
            critique = reflected.reflection
        # Failed checks are measured, not judged: they enter the reflection as items first.
        critique = with_checks(critique, current.checks)
        await run.event("reflected", round=t, dimensions=[i.dimension for i in critique.items])
        more = t < run.options.max_rounds
        k = run.options.candidates
        request = revision_request(critique, list(history), current.checks,
                                   _cut_text(current))
        anew = round_form(run, current, request, k) == ANEW
        results = await asyncio.gather(*(
            self._child(run, t, current, critique, request, more, i, k, anew=anew)
            for i in range(k)), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, RedraftError):
                raise result
        scored = [c for c in results if isinstance(c, Candidate) and c.score is not None]
        if not scored:
            return None
        if all(c.same_as == current.position for c in scored):
            # Asked twice, the reviser gave the text back unchanged: another round would
            # only ask the same again.
            raise Stop("unchanged")
        newest = _best(scored)
        if newest.shrunk:
            # A rewrite that dropped most of the text is not followed: the next round revises
            # the whole text again, told what happened.
            history.append(Attempt(t, f"{critique.summary} (set aside: the rewrite dropped "
                                      "most of the text; keep all of it)".strip(),
                                   current.score or 0.0, current.score or 0.0))
            return current
        # Under `checks` the summary only restates the failed checks; what the revision did
        # to them says more.
        summary = "" if run.options.evaluation == "checks" else critique.summary
        history.append(Attempt(t, summary, current.score or 0.0, newest.score or 0.0,
                               measured_change(current.checks, newest.checks)))
        return newest

    async def _child(self, run: RunState, t: int, parent: Candidate, critique: Any,
                     request: str, want_reflection: bool, index: int = 0,
                     k: int = 1, anew: bool = False) -> Candidate:
        """The `index`-th of `k` rewrites of `parent`, evaluated: the first sampled as the
        request asks, the others varied (`loops.rewrite.varied`). A rewrite that gives the
        text back unchanged (once the exact changes are made) is asked once more, varied too:
        where `parent` fails checks, as a new answer to the request with those checks stated
        and no draft to copy (`loops.rewrite.answer_anew`); otherwise with a firmer
        instruction. The candidate says so (`retried`). `anew`: asked as a new answer from
        the start (a revision would not fit the loop's relative budget). `request`: what the
        reviser is asked (`loops.rewrite.revision_request`)."""
        t0 = self.clock()
        text, completion, met, cut = await self._rewritten(run, parent, request,
                                                           varied(run.params, index), anew=anew)
        retried = False
        if text.strip() == parent.text.strip():
            retried = True
            await run.event("unchanged", round=t)
            anew = any(not o.passed for o in parent.checks)
            firmer = request if anew else f"{request.rstrip()}\n\n{UNCHANGED_NOTE}"
            text, completion, met, cut = await self._rewritten(
                run, parent, firmer, varied(run.params, index + k), anew=anew)
        asked = target_text(run.query)
        leaks = tuple(scaffolding(text, f"{asked}\n{parent.text}", request))
        child = Candidate(0, t, "rewrite", text, parent=parent.position, reflection=critique,
                          usage=completion.usage, latency_ms=(self.clock() - t0) * 1000,
                          finish_reason=cut, scaffolding=leaks,
                          conformed=met, retried=retried,
                          padded=padded(text, parent.text, _draft(run, parent).text),
                          off_language=off_language(text, parent.text, asked),
                          off_topic=(off_topic(text, asked, run.checks)
                                     and not off_topic(parent.text, asked, run.checks)))
        await run.event("rewritten", round=t, scaffolding=len(leaks), padded=len(child.padded))
        return await self.scorer.evaluate(run, child, want_reflection)

    async def _rewritten(self, run: RunState, parent: Candidate, request: str,
                         params: ChatParams, anew: bool = False,
                         ) -> tuple[str, Completion, tuple[str, ...], str | None]:
        """The reviser's text, asked with `request` (`anew`: a new answer told the checks
        `parent` failed; `request` unused), with a looping tail cut and the exact changes
        made; its completion, the kinds met, its finish reason."""
        t0 = self.clock()
        try:
            if anew:
                text, completion = await answer_anew(self.writer, run.query, parent.checks,
                                                     params)
            else:
                text, completion = await rewrite(self.writer, run.query, parent.text, request,
                                                 params)
        except RedraftError as exc:
            run.degrade(failed("rewrite", exc))
            raise
        run.ledger.add("rewrite", completion.usage, seconds=self.clock() - t0)
        text, finish_reason = unlooped(text, completion.finish_reason)
        met: tuple[str, ...] = ()
        if run.options.conform and run.checks:
            text, met = conform(text, run.checks)
        return text, completion, met, finish_reason


def gained(parent: Candidate, child: Candidate) -> bool:
    """Did a round move anything: a higher score, or more checks passed?"""
    passed = sum(o.passed for o in child.checks) > sum(o.passed for o in parent.checks)
    return passed or (child.score or 0.0) > (parent.score or 0.0)


def _cut_text(candidate: Candidate) -> str | None:
    """The candidate's text when the length limit cut it (the reviser is told so)."""
    return candidate.text if candidate.finish_reason == "length" else None


def _draft(run: RunState, parent: Candidate) -> Candidate:
    """The text the loop started from (slot 0), or `parent` before there is one."""
    return run.candidates[0] if run.candidates else parent


def _answered(best: Candidate) -> str:
    """What the user got, in words."""
    if best.kind == "draft":
        return "answered the draft"
    return f"answered the {best.kind.replace('_', ' ')} of round {best.round}"

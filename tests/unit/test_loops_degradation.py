"""A loop never degrades silently and never counts a gain it did not make: one text gets one
judgement, a reviser that gives the text back unchanged is asked once more and then the loop
ends, a judgement whose quotes are not in the text raises no score, a stage that fails names
its cause in the trace and the record, and a hidden call that does not fit the model's
context carries less or is skipped (the user's request is not refused for it)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from generation.errors import ContextOverflow, UpstreamTimeout
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from loops.record import RETRIED_KEY, SAME_AS_KEY, to_record
from loops.rewrite import UNCHANGED_NOTE, VARIED_TEMPERATURE
from tests.unit.test_loops_checks import Script
from tests.unit.test_loops_controller import CHECKLIST, DIMS, QUERY, FixedProvider, answer_of

DRAFT = "The kettle boils water quietly and keeps it warm for an hour."
BETTER = "This kettle boils a litre in three minutes, quietly, and keeps it warm for an hour."


def _loop(writer: ScriptedBackend, judge: ScriptedBackend) -> ReflectionLoop:
    return ReflectionLoop(writer, judge, FixedProvider(CHECKLIST),
                          judge_params=ChatParams(model="judge"))


def _run(loop: ReflectionLoop, **opts: Any):
    options = LoopOptions(**{"memory": False, **opts})
    return asyncio.run(loop.run(QUERY, ChatParams(), options, namespace="d"))


def test_a_text_already_judged_keeps_its_judgement():
    # the rewrite gives back the draft's text: the judge is asked about it once, not twice
    script = Script([DRAFT, DRAFT + " ", BETTER], {DRAFT: 3, BETTER: 6})
    trace = script.run((), max_rounds=1, threshold=1.0)
    judged = [answer_of(c.messages[-1]["content"]) for c in script.judge.calls]
    assert judged == [DRAFT, BETTER]
    assert trace.candidates[1].same_as is None and trace.candidates[1].retried
    assert trace.answer.text == BETTER


def test_a_reviser_that_twice_gives_the_text_back_ends_the_loop():
    script = Script([DRAFT, DRAFT, DRAFT], {DRAFT: 3})
    trace = script.run((), max_rounds=3, threshold=1.0)
    assert trace.stop_reason == "unchanged" and trace.rounds == 1
    second = script.writer.calls[2].messages[-1]["content"]
    assert UNCHANGED_NOTE in second and UNCHANGED_NOTE not in \
        script.writer.calls[1].messages[-1]["content"]
    rewrite = trace.candidates[1]
    assert rewrite.retried and rewrite.same_as == 0 and rewrite.score == trace.candidates[0].score
    assert len(script.judge.calls) == 1  # the draft's judgement only
    assert trace.answer.position == 0  # no gain: the draft is the answer
    stored = to_record(trace, namespace="d", request={}, model="m", backend="b")
    assert stored.candidates[1].scores[SAME_AS_KEY] == 0 and stored.candidates[1].scores[
        RETRIED_KEY] is True
    assert stored.score_gain == 0


def test_the_retry_of_an_unchanged_rewrite_is_sampled_not_greedy_again():
    # asked again at temperature 0 a model answers what it answered: the retry is varied
    script = Script([DRAFT, DRAFT, BETTER], {DRAFT: 3, BETTER: 6})
    script.run((), max_rounds=1, threshold=1.0)
    draft, first, retry = (c.params for c in script.writer.calls)
    assert draft.temperature is None and first.temperature is None and first.seed is None
    assert retry.temperature == VARIED_TEMPERATURE and retry.seed == 1


def test_k_candidates_are_the_request_sampling_then_varied_each_with_its_own_seed():
    script = Script([DRAFT, BETTER, DRAFT + " Quietly."], {DRAFT: 3, BETTER: 6,
                                                           DRAFT + " Quietly.": 4})
    trace = script.run((), max_rounds=1, threshold=1.0, candidates=2)
    rewrites = [c.params for c in script.writer.calls[1:]]
    assert sorted((p.temperature or 0.0, p.seed) for p in rewrites) == \
        [(0.0, None), (VARIED_TEMPERATURE, 1)]
    assert trace.answer.text == BETTER


def _judge_quoting(quotes: dict[str, str], scores: dict[str, int]):
    def reply(messages, params, schema) -> str:
        text = answer_of(messages[1]["content"])  # asked again: retries follow the prompt
        said = {n: {"evidence": quotes[text], "score": scores[text]} for n in DIMS}
        return json.dumps({"scores": said, "summary": "tighten", "items": [
            {"dimension": "Clarity", "evidence": "x", "objective": "clearer",
             "actions": ["cut"]}]})
    return reply


def test_a_higher_score_whose_evidence_is_not_in_the_text_counts_no_gain():
    made_up = "the kettle has a whistle shaped like a swan neck"
    quotes = {DRAFT: "boils water quietly and keeps", BETTER: made_up}
    replies = iter([DRAFT, BETTER])
    writer = ScriptedBackend(default=lambda m, p, s: next(replies), model="w")
    judge = ScriptedBackend(default=_judge_quoting(quotes, {DRAFT: 3, BETTER: 9}), model="j")
    trace = _run(_loop(writer, judge), max_rounds=1, threshold=1.0)
    draft, rewrite = trace.candidates
    assert rewrite.unsupported and rewrite.score == draft.score
    assert trace.answer.position == 0  # the earliest wins the tie


def test_a_failed_evaluation_names_its_cause_and_the_user_gets_the_draft():
    writer = ScriptedBackend(default=lambda m, p, s: DRAFT, model="w")
    judge = ScriptedBackend(model="j")
    judge.enqueue(UpstreamTimeout("the upstream did not answer within 600 s"))
    trace = _run(_loop(writer, judge), max_rounds=2)
    assert trace.stop_reason == "degraded" and trace.answer.text == DRAFT
    (found,) = trace.degradations
    assert (found.stage, found.cause) == ("evaluate", "timeout")
    assert "600 s" in found.detail and found.outcome == "answered the draft"
    stored = to_record(trace, namespace="d", request={}, model="m", backend="b")
    assert stored.degradations == ({"stage": "evaluate", "cause": "timeout",
                                    "detail": "the upstream did not answer within 600 s",
                                    "outcome": "answered the draft"},)


def test_answers_that_never_parse_name_the_tries_and_the_error():
    writer = ScriptedBackend(default=lambda m, p, s: DRAFT, model="w")
    judge = ScriptedBackend(default=lambda m, p, s: "I think it is good.", model="j")
    trace = _run(_loop(writer, judge), max_rounds=1)
    (found,) = trace.degradations
    assert trace.stop_reason == "degraded"
    assert (found.stage, found.cause) == ("evaluate", "invalid_output")
    assert found.detail.startswith("no usable answer after 3 tries: ")


def test_a_judge_prompt_over_the_context_is_sent_without_the_bands():
    def judge(messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        if "strong" in prompt:  # a band description: the full rubric does not fit
            raise ContextOverflow("the prompt is 4452 tokens; the model's context is 2048")
        text = answer_of(prompt)
        said = {n: {"evidence": "q", "score": 6 if text == DRAFT else 8} for n in DIMS}
        return json.dumps({"scores": said, "summary": "s", "items": [
            {"dimension": "Clarity", "evidence": "x", "objective": "o", "actions": ["a"]}]})

    replies = iter([DRAFT, BETTER])
    writer = ScriptedBackend(default=lambda m, p, s: next(replies), model="w")
    trace = _run(_loop(writer, ScriptedBackend(default=judge, model="j")), max_rounds=1,
                 threshold=1.0)
    assert trace.stop_reason == "max_rounds" and trace.answer.text == BETTER
    assert [c.evaluation.scores[0].band for c in trace.candidates] == [1, 2]  # own bands
    (found,) = trace.degradations
    assert (found.stage, found.cause) == ("evaluate", "context_overflow")
    assert "band descriptions" in found.outcome


def test_a_judge_that_cannot_fit_at_all_degrades_the_loop_not_the_request():
    def judge(messages, params, schema) -> str:
        raise ContextOverflow("the prompt is 4452 tokens; the model's context is 2048")

    writer = ScriptedBackend(default=lambda m, p, s: DRAFT, model="w")
    trace = _run(_loop(writer, ScriptedBackend(default=judge, model="j")), max_rounds=1)
    assert trace.stop_reason == "degraded" and trace.answer.text == DRAFT
    assert [(d.stage, d.cause) for d in trace.degradations] == [("evaluate",
                                                                  "context_overflow")]


def test_a_checklist_past_the_time_budget_gives_way_to_the_generic_one_and_says_so():
    from loops.checklists import Resolved

    class Slow(FixedProvider):
        async def build(self, query, model, namespace, mode):
            await asyncio.sleep(30)

        async def fallback(self, query, namespace, cause):
            return Resolved(CHECKLIST, "pack", "generic", degraded=True, degradation=cause)

    writer = ScriptedBackend(default=lambda m, p, s: DRAFT, model="w")
    loop = ReflectionLoop(writer, ScriptedBackend(model="j"), Slow(),
                          judge_params=ChatParams(model="judge"))
    options = LoopOptions(memory=False, time_budget=0.3, max_rounds=2)
    trace = asyncio.run(asyncio.wait_for(loop.run(QUERY, ChatParams(), options,
                                                  namespace="d"), 10))
    assert trace.stop_reason == "budget" and trace.answer.text == DRAFT
    assert trace.checklist_source == "pack"
    assert [(d.stage, d.cause) for d in trace.degradations] == [("checklist", "timeout"),
                                                                ("evaluate", "timeout")]
    assert "time budget of 0.3 s" in trace.degradations[0].detail

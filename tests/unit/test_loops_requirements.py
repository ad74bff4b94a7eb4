"""Evaluation `checks`: the request's own requirements score every candidate in code, the
failed ones are the reflection, no judge is asked, and a rewrite that breaks a requirement the
draft met is never the answer. A request that states none is judged as under `joint`."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from loops.rewrite import VARIED_TEMPERATURE
from tests.unit.test_loops_controller import CHECKLIST, DIMS, FixedProvider

ASK = [{"role": "user", "content": "Describe a lighthouse in at most 8 words. Do not use any "
                                   "commas."}]
LONG = "A tall white tower that guides the ships home at night"
SHORT = "A white tower guiding ships home at night"
SHORT_COMMA = "A white tower, guiding ships home"


def _run(texts: list[str], query=ASK, judge: ScriptedBackend | None = None, **opts):
    replies = iter(texts)
    writer = ScriptedBackend(default=lambda m, p, s: next(replies), model="w")
    judge = judge or ScriptedBackend(model="j")  # nothing queued: any call would fail
    loop = ReflectionLoop(writer, judge, FixedProvider(CHECKLIST),
                          judge_params=ChatParams(model="j"))
    options = LoopOptions(**{"memory": False, "evaluation": "checks", "threshold": 1.0,
                             "conform": False, **opts})
    return asyncio.run(loop.run(query, ChatParams(), options, namespace="d")), writer, judge


def test_the_requirements_decide_without_a_judge():
    trace, writer, judge = _run([LONG, SHORT], max_rounds=2)
    assert trace.answer.text == SHORT and trace.stop_reason == "threshold"
    assert trace.checklist_source == "checks" and not judge.calls
    assert trace.ledger.calls["evaluate"] == 0 and trace.ledger.calls["checklist"] == 0
    assert [c.score for c in trace.candidates] == [0.5, 1.0]
    request = writer.calls[1].messages[-1]["content"]
    assert "- It has 11 words; it must have at most 8 words." in request
    assert "Keep what it already meets: no commas." in request


def test_the_next_round_is_told_what_the_last_revision_measured_not_a_score():
    MID = "A tall white tower that guides the ships home"
    trace, writer, _ = _run([LONG, MID, SHORT], max_rounds=2)
    assert trace.answer.text == SHORT
    second = writer.calls[2].messages[-1]["content"]
    assert ("Earlier rounds:\n- round 1: the revision went from 11 words to 9 words (needs at "
            "most 8 words)") in second
    assert "score 0.50" not in second


class CutDraft(ScriptedBackend):
    """The first answer (the draft) ends at the length limit, as a real upstream reports it."""

    async def chat(self, messages, params, schema=None):
        completion = await super().chat(messages, params, schema)
        if len(self.calls) == 1:
            choice = replace(completion.choices[0], finish_reason="length")
            return replace(completion, choices=(choice,))
        return completion


def test_a_draft_cut_by_the_length_limit_is_asked_back_shorter_and_complete():
    replies = iter([LONG, SHORT])
    writer = CutDraft(default=lambda m, p, s: next(replies), model="w")
    loop = ReflectionLoop(writer, ScriptedBackend(model="j"), FixedProvider(CHECKLIST),
                          judge_params=ChatParams(model="j"))
    options = LoopOptions(memory=False, evaluation="checks", threshold=1.0, max_rounds=1)
    trace = asyncio.run(loop.run(ASK, ChatParams(), options, namespace="d"))
    assert trace.candidates[0].finish_reason == "length" and trace.answer.text == SHORT
    request = writer.calls[1].messages[-1]["content"]
    assert ("The draft was cut off by the length limit after 11 words, before it ended: write "
            "a complete answer of at most about 6 words.") in request
    assert request.index("cut off") < request.index("It has 11 words")


def test_a_reviser_giving_the_draft_back_is_asked_for_a_new_answer_without_the_draft():
    trace, writer, _ = _run([LONG, LONG, SHORT], max_rounds=1)
    assert trace.answer.text == SHORT and trace.candidates[1].retried
    (retry,) = writer.calls[2].messages
    assert retry["role"] == "user" and LONG not in retry["content"]
    assert retry["content"].startswith(ASK[0]["content"])
    assert "- it had 11 words; the request asks for at most 8 words." in retry["content"]
    assert writer.calls[2].params.temperature == VARIED_TEMPERATURE


def test_a_rewrite_that_breaks_a_requirement_the_draft_met_is_never_the_answer():
    trace, _, _ = _run([LONG, SHORT_COMMA], max_rounds=1)
    draft, rewrite = trace.candidates
    assert rewrite.checks_passed == draft.checks_passed == 1
    assert trace.answer.position == 0 and trace.stop_reason == "max_rounds"


def test_a_request_stating_no_requirement_is_judged():
    def judge(messages, params, schema) -> str:
        said = {n: {"evidence": "q", "score": 9} for n in DIMS}
        return json.dumps({"scores": said, "summary": "fine", "items": [
            {"dimension": "Clarity", "evidence": "x", "objective": "o", "actions": ["a"]}]})

    plain = [{"role": "user", "content": "Describe a lighthouse."}]
    trace, _, judged = _run([LONG], query=plain, max_rounds=1, threshold=0.8,
                            judge=ScriptedBackend(default=judge, model="j"))
    assert trace.checklist_source == "generated" and judged.calls
    assert trace.stop_reason == "threshold"


def test_checks_attached_to_the_request_are_used_not_read_again():
    from loops.checklists import ChecklistSpec, _inline
    from rubrics.checks import Check

    inline = {"checks": [{"kind": "ends_with", "params": {"phrase": "Goodnight."}}]}
    attached = _inline(inline)
    assert [c.kind for c in attached.checks] == ["ends_with"]
    replies = iter([LONG])
    writer = ScriptedBackend(default=lambda m, p, s: next(replies), model="w")
    loop = ReflectionLoop(writer, ScriptedBackend(model="j"), FixedProvider(attached),
                          judge_params=ChatParams(model="j"))
    options = LoopOptions(memory=False, evaluation="checks", threshold=1.0, max_rounds=1)
    trace = asyncio.run(loop.run(ASK, ChatParams(), options, namespace="d",
                                 spec=ChecklistSpec(inline=inline)))
    # the word limit and the commas the words state are not this loop's checks
    assert [o.kind for o in trace.answer.checks] == ["ends_with"]
    assert trace.answer.text.endswith("Goodnight.") and trace.stop_reason == "threshold"
    assert trace.checklist.checks == (Check(kind="ends_with", params={"phrase": "Goodnight."},
                                            source="user"),)


def test_an_inline_checklist_of_no_checks_is_refused():
    import pytest

    from loops.checklists import _inline
    from rubrics.checklist import ChecklistInvalid

    with pytest.raises(ChecklistInvalid, match="at least one check"):
        _inline({"checks": []})

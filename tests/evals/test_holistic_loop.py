"""The holistic (LLM-as-a-Judge) loop: one critique and one overall score per text, no checklist."""

from __future__ import annotations

from collections.abc import Sequence

import jsonschema
import pytest

from bench.fakes.writer import WriterResponder
from generation.base import JsonSchema, schema_response_format
from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from generation.types import ChatParams, Message
from loops.controller import ReflectionLoop
from loops.judges.holistic import HolisticOut, holistic_schema
from loops.options import LoopOptions

QUERY = [{"role": "user", "content": "Write a short product brief for a quiet kettle."}]


def writer_model(responder: WriterResponder):
    def reply(messages: Sequence[Message], params: ChatParams, schema: JsonSchema | None) -> str:
        body = {"messages": list(messages)}
        if schema is not None:
            body["response_format"] = schema_response_format(schema)
        out = responder(body)
        assert out is not None, "the fake writer did not recognise the call"
        return out
    return reply


class NoChecklists:
    """The holistic baseline must never build or look up a checklist."""

    def __getattr__(self, name: str):
        raise AssertionError(f"the holistic loop used the checklist provider ({name})")


def loop_with(writer: ScriptedBackend, judge: ScriptedBackend) -> ReflectionLoop:
    return ReflectionLoop(writer, judge, NoChecklists(),  # type: ignore[arg-type]
                          judge_params=ChatParams(model="judge"), retries=1)


async def test_loop_rewrites_until_the_judge_score_reaches_the_threshold() -> None:
    responder = WriterResponder()
    writer = ScriptedBackend(default=writer_model(responder))
    judge = ScriptedBackend(default=writer_model(responder))
    trace = await loop_with(writer, judge).run(
        QUERY, ChatParams(model="w"), LoopOptions(max_rounds=5, threshold=0.9,
                                                  evaluation="holistic"), namespace="t")
    assert trace.stop_reason == "threshold"
    assert trace.rounds == 2  # 6/10 -> 8/10 -> 10/10 on the fake's quality ladder
    assert trace.scores == pytest.approx([5 / 9, 7 / 9, 1.0])
    assert trace.checklist_source == "none"
    assert trace.answer.text.count("(rev. ") == 2
    assert trace.ledger.calls == {"checklist": 0, "draft": 1, "memory": 0, "evaluate": 3,
                                  "reflect": 0, "rewrite": 2}
    # Every judge call asked for the holistic schema and nothing else (no checklist calls).
    assert [c.schema for c in judge.calls] == [holistic_schema()] * 3
    rewrite_prompt = "\n".join(str(m["content"]) for m in writer.calls[1].messages)
    assert "Overall quality" in rewrite_prompt and "Add one sentence" in rewrite_prompt


def test_schema_is_tight_and_agrees_with_the_validator() -> None:
    schema = holistic_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["score"] == {"type": "integer", "minimum": 1, "maximum": 10}
    assert set(schema["required"]) == set(HolisticOut.model_fields)
    good = {"critique": "Too generic.", "actions": ["Add an example."], "score": 7}
    jsonschema.validate(good, schema)
    HolisticOut.model_validate(good)
    for bad in ({**good, "score": 11}, {**good, "score": 6.5}, {**good, "actions": []},
                {"critique": "x", "score": 3}, {**good, "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


async def test_judge_that_never_answers_well_degrades_to_the_draft() -> None:
    writer = ScriptedBackend(default=writer_model(WriterResponder()))
    judge = ScriptedBackend(default='{"critique": "fine", "actions": [], "score": 42}')
    trace = await loop_with(writer, judge).run(
        QUERY, ChatParams(), LoopOptions(max_rounds=3, evaluation="holistic"), namespace="t")
    assert trace.stop_reason == "degraded" and trace.rounds == 0
    assert trace.answer.kind == "draft" and trace.answer.score is None
    assert len(judge.calls) == 2  # first try and one retry


async def test_upstream_failure_mid_loop_keeps_the_best_text() -> None:
    responder = WriterResponder()
    writer = ScriptedBackend([writer_model(responder)], default=UpstreamUnavailable("down"))
    judge = ScriptedBackend(default=writer_model(responder))
    trace = await loop_with(writer, judge).run(
        QUERY, ChatParams(), LoopOptions(max_rounds=3, evaluation="holistic"), namespace="t")
    assert trace.stop_reason == "degraded"
    assert trace.answer.kind == "draft" and trace.answer.score == pytest.approx(5 / 9)

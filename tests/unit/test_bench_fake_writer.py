"""The fake writer answers redraft's real hidden calls well enough for real loops to converge.

The responder is driven through redraft's own agents, judges and controller (a scripted
backend hands each call to it as the request body the openai backend would send), and
through the fake upstream over HTTP, in a thread and as a subprocess run by path.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from bench.fakes.replies import instance
from bench.fakes.upstream import FakeUpstream, make_responder, run_in_thread, run_subprocess
from bench.fakes.writer import REVISION_MARK, WriterResponder
from generation.base import schema_response_format
from generation.openai import OpenAIBackend
from generation.scripted import ScriptedBackend
from generation.types import ChatParams, Message
from loops.checklists import ChecklistSpec, Resolved
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from rubrics.agents import build_checklist
from rubrics.evaluate import evaluate

QUERY = [{"role": "system", "content": "You write for a small bike shop."},
         {"role": "user", "content": "Write a short announcement of our spring opening hours."}]
ZH_QUERY = [{"role": "user", "content": "请为我们的自行车店写一则春季营业时间的简短公告。"}]


def backend(responder: WriterResponder) -> ScriptedBackend:
    """A backend whose every call is answered by `responder`, as the fake upstream would."""
    def reply(messages: Sequence[Message], params: ChatParams, schema: Any) -> str:
        body: dict[str, Any] = {"messages": list(messages)}
        if schema is not None:
            body["response_format"] = schema_response_format(schema)
        answer = responder(body, 0)
        assert answer is not None, "the writer did not recognise a hidden call"
        return answer

    return ScriptedBackend(default=reply, model="fake-model")


class Provider:
    """The real three coding agents, without the store and cache around them."""

    def __init__(self, judge: ScriptedBackend) -> None:
        self.judge = judge

    async def fixed(self, spec: ChecklistSpec, namespace: str) -> Resolved:
        raise AssertionError("no fixed checklist in these tests")

    async def build(self, query, model, namespace, mode) -> Resolved:  # type: ignore[no-untyped-def]
        built = await build_checklist(self.judge, query, ChatParams(), mode=mode)
        assert not built.degraded, built.error
        return Resolved(built.checklist, "generated", "id", built.usage, built.calls)


async def run_loop(responder: WriterResponder, options: LoopOptions):  # type: ignore[no-untyped-def]
    model = backend(responder)
    loop = ReflectionLoop(model, model, Provider(model), judge_params=ChatParams())  # type: ignore[arg-type]
    return await loop.run(QUERY, ChatParams(), options, namespace="default")


async def test_three_agents_build_a_valid_banded_checklist_in_three_calls() -> None:
    responder = WriterResponder()
    built = await build_checklist(backend(responder), QUERY, ChatParams())
    assert not built.degraded and built.calls == 3
    dims = built.checklist.dimensions
    assert 4 <= len(dims) <= 8
    assert {len(d.bands) for d in dims} == {3, 4, 5}  # an adaptive number of bands
    assert dims[0].bands[0].description.startswith("Severely missing")
    assert dims[0].bands[-1].description.startswith("Fully satisfied")
    assert dict(responder.counts) == {"open_coding": 1, "axial_coding": 1, "selective_coding": 1}


async def test_fused_coding_builds_the_checklist_in_one_call() -> None:
    built = await build_checklist(backend(WriterResponder()), QUERY, ChatParams(), mode="fused")
    assert not built.degraded and built.calls == 1
    assert 4 <= len(built.checklist.dimensions) <= 8


async def test_a_chinese_request_gets_a_chinese_checklist() -> None:
    built = await build_checklist(backend(WriterResponder()), ZH_QUERY, ChatParams())
    assert not built.degraded
    assert built.checklist.dimensions[0].name == "任务完成度"


@pytest.mark.parametrize("mode", ["joint", "per_dimension"])
async def test_the_judge_scores_a_revised_text_higher_and_quotes_it(mode: str) -> None:
    responder = WriterResponder(draft_score=0.5, step=0.2)
    judge = backend(responder)
    checklist = (await build_checklist(judge, QUERY, ChatParams())).checklist
    draft = "Spring hours start Monday. We open at nine."
    revised = f"{draft}\n\nOn task fulfilment: more detail {REVISION_MARK}1)."
    first = await evaluate(judge, QUERY, draft, checklist, ChatParams(), mode=mode)
    second = await evaluate(judge, QUERY, revised, checklist, ChatParams(), mode=mode)
    assert not first.degraded and not second.degraded
    assert 0.5 <= first.normalised < second.normalised
    assert all(s.evidence == "Spring hours start Monday." for s in first.evaluation.scores)


async def test_a_default_loop_improves_each_round_and_stops_at_the_threshold() -> None:
    responder = WriterResponder(draft_score=0.5, step=0.2)
    trace = await run_loop(responder, LoopOptions(max_rounds=5, threshold=0.9, memory=False))
    assert trace.stop_reason == "threshold" and trace.rounds == 2
    assert trace.scores == sorted(trace.scores) and len(set(trace.scores)) == 3
    assert trace.scores[-1] >= 0.9
    draft, answer = trace.candidates[0].text, trace.answer.text
    assert answer.startswith(draft) and answer.count(REVISION_MARK) == 2


async def test_a_one_round_loop_makes_the_calls_of_the_critical_path() -> None:
    responder = WriterResponder()
    trace = await run_loop(responder, LoopOptions(max_rounds=1, threshold=1.0, memory=False))
    assert trace.stop_reason == "max_rounds" and trace.rounds == 1
    assert dict(responder.counts) == {"open_coding": 1, "axial_coding": 1,
                                      "selective_coding": 1, "draft": 1, "assess": 1,
                                      "rewrite": 1, "judge_joint": 1}


async def test_per_dimension_loops_reflect_separately_and_still_converge() -> None:
    responder = WriterResponder(draft_score=0.6, step=0.3)
    trace = await run_loop(responder, LoopOptions(max_rounds=3, evaluation="per_dimension",
                                                  memory=False))
    assert trace.stop_reason == "threshold" and trace.rounds == 1
    assert responder.counts["reflect"] == 1 and responder.counts["judge_dimension"] >= 8


def test_an_unknown_schema_or_json_object_is_left_to_the_default_reply() -> None:
    responder = WriterResponder()
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}}
    body = {"messages": [{"role": "user", "content": "hi"}],
            "response_format": schema_response_format(schema)}
    assert responder(body, 0) is None
    assert responder({**body, "response_format": {"type": "json_object"}}, 0) is None
    assert responder.counts["unknown"] == 1


async def test_the_fake_upstream_answers_with_the_writer_over_http() -> None:
    params = ChatParams(model="fake-model")
    schema = {"type": "object", "properties": {"evidence": {"type": "string"},
                                               "score": {"type": "integer", "minimum": 1,
                                                         "maximum": 10}}}
    prompt = [{"role": "user", "content": "<response>\nGood text. More.\n</response>"}]
    with run_in_thread(responder="writer") as (url, fake):
        client = OpenAIBackend([url], model="fake-model", retries=0)
        await client.start()
        try:
            judged = orjson.loads((await client.chat(prompt, params, schema=schema)).text)
            drafted = (await client.chat(QUERY, params)).text
        finally:
            await client.aclose()
    assert judged == {"evidence": "Good text.", "score": 6}  # 1 + ceil(0.5 * 9)
    assert drafted.startswith("Write a short announcement of our spring opening hours")
    assert dict(fake.responder.counts) == {"judge_dimension": 1, "draft": 1}  # type: ignore[union-attr]


async def test_the_default_fake_is_unchanged() -> None:
    schema = {"type": "object", "properties": {"evidence": {"type": "string"},
                                               "score": {"type": "integer", "minimum": 1}}}
    with run_in_thread(FakeUpstream()) as (url, _):
        client = OpenAIBackend([url], model="fake-model", retries=0)
        await client.start()
        try:
            text = (await client.chat(QUERY, ChatParams(), schema=schema)).text
        finally:
            await client.aclose()
    assert orjson.loads(text) == instance(schema) == {"evidence": "", "score": 1}


def test_unknown_responder_names_are_refused() -> None:
    assert make_responder("default") is None
    with pytest.raises(ValueError, match="unknown responder"):
        make_responder("poet")


def test_the_subprocess_fake_loads_the_writer_when_run_by_path_with_its_flags() -> None:
    schema = {"type": "object", "properties": {"evidence": {"type": "string"},
                                               "score": {"type": "integer", "minimum": 1,
                                                         "maximum": 10}}}
    body = {"model": "fake-model", "response_format": schema_response_format(schema),
            "messages": [{"role": "user", "content": "<response>\nFine.\n</response>"}]}
    with run_subprocess(responder="writer", args=["--draft-score", "1.0"]) as fake:
        request = urllib.request.Request(f"{fake.base_url}/chat/completions",
                                         data=orjson.dumps(body))
        with urllib.request.urlopen(request, timeout=5) as resp:
            reply = orjson.loads(resp.read())
        stats = fake.stats()
    assert orjson.loads(reply["choices"][0]["message"]["content"])["score"] == 10
    assert stats["calls_by_kind"] == {"judge_dimension": 1}

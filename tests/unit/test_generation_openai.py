"""The openai backend against the fake upstream (in-process): replies, streams, body mapping."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import orjson
import pytest

from bench.fakes.upstream import FakeUpstream, run_in_thread
from generation.base import Backend, schema_response_format
from generation.errors import UpstreamError
from generation.openai import OpenAIBackend
from generation.openai.wire import SSEParser
from generation.types import ChatParams, Usage

USER = [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Write about autumn leaves"}]
# The fake counts whitespace words: 2 + 4 prompt tokens; its reply is
# "This is a deterministic fake reply about: Write about autumn leaves" (11 words).
REPLY = "This is a deterministic fake reply about: Write about autumn leaves"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, FakeUpstream]]:
    with run_in_thread() as pair:
        yield pair


@pytest.fixture
def fake(served: tuple[str, FakeUpstream]) -> FakeUpstream:
    fake = served[1]
    fake.reset()
    fake.latency = fake.chunk_delay = 0.0
    return fake


@pytest.fixture
async def backend(fake: FakeUpstream) -> AsyncIterator[OpenAIBackend]:
    backend = OpenAIBackend([fake.base_url or ""], model="fake-model", retries=2, backoff=0.01)
    await backend.start()
    yield backend
    await backend.aclose()


async def test_is_a_backend(backend: OpenAIBackend) -> None:
    assert isinstance(backend, Backend)


async def test_chat_returns_the_upstream_answer_with_exact_usage(backend: OpenAIBackend) -> None:
    completion = await backend.chat(USER, ChatParams())
    assert completion.text == REPLY
    assert completion.finish_reason == "stop"
    assert completion.usage == Usage(6, 11)
    assert completion.model == "fake-model"
    assert completion.id and completion.id.startswith("chatcmpl-")
    assert isinstance(completion.created, int)
    assert completion.system_fingerprint == "fp_fake"


async def test_n_returns_every_choice(backend: OpenAIBackend) -> None:
    completion = await backend.chat(USER, ChatParams(n=2))
    assert [c.index for c in completion.choices] == [0, 1]
    assert completion.choices[0].text == REPLY
    assert completion.choices[1].text == "Variant 1: " + REPLY
    assert completion.usage.completion_tokens == 11 + 13


async def test_max_tokens_is_sent_and_length_reported(backend: OpenAIBackend,
                                                      fake: FakeUpstream) -> None:
    completion = await backend.chat(USER, ChatParams(max_tokens=3))
    assert fake.bodies[-1]["max_tokens"] == 3
    assert completion.text == "This is a"
    assert completion.finish_reason == "length"


async def test_stream_yields_chunks_as_sent_and_exact_usage_last(backend: OpenAIBackend,
                                                                 fake: FakeUpstream) -> None:
    chunks = [c async for c in backend.stream(USER, ChatParams(model="writer"))]
    content = [c.choices[0].content for c in chunks if c.choices and c.choices[0].content]
    assert len(content) == 11
    assert "".join(content) == REPLY
    assert chunks[0].choices[0].role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == () and chunks[-1].usage == Usage(6, 11)
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1].model == "writer"
    assert fake.bodies[-1]["stream"] is True
    assert fake.bodies[-1]["stream_options"] == {"include_usage": True}


async def test_stream_is_not_buffered(backend: OpenAIBackend, fake: FakeUpstream) -> None:
    fake.chunk_delay = 0.05  # 14 chunks: the whole stream takes > 0.6 s
    started = time.perf_counter()
    stream = backend.stream(USER, ChatParams())
    first = await anext(stream)
    first_at = time.perf_counter() - started
    rest = [c async for c in stream]
    assert first.choices[0].role == "assistant"
    assert first_at < 0.3 < time.perf_counter() - started
    assert rest[-1].usage == Usage(6, 11)


async def test_stream_with_two_choices(backend: OpenAIBackend) -> None:
    chunks = [c async for c in backend.stream(USER, ChatParams(n=2))]
    texts = {0: "", 1: ""}
    for chunk in chunks:
        for choice in chunk.choices:
            texts[choice.index] += choice.content or ""
    assert texts == {0: REPLY, 1: "Variant 1: " + REPLY}
    assert chunks[-1].usage == Usage(6, 24)


async def test_params_and_extra_body_reach_the_upstream_verbatim(backend: OpenAIBackend,
                                                                 fake: FakeUpstream) -> None:
    extra = {"top_k": 20, "repetition_penalty": 1.05,
             "chat_template_kwargs": {"enable_thinking": False}}
    params = ChatParams(model="m1", temperature=0.2, top_p=0.9, stop=("END", "\n\n"), seed=7,
                        presence_penalty=0.1, frequency_penalty=0.3, user="u1", extra=extra)
    await backend.chat(USER, params)
    body = fake.bodies[-1]
    assert body["messages"] == USER
    assert {k: body[k] for k in extra} == extra
    assert body["model"] == "m1" and body["temperature"] == 0.2 and body["top_p"] == 0.9
    assert body["stop"] == ["END", "\n\n"]
    assert body["seed"] == 7 and body["user"] == "u1"
    assert body["presence_penalty"] == 0.1 and body["frequency_penalty"] == 0.3
    # Unset options stay out, so the upstream applies its own defaults.
    assert not {"max_tokens", "n", "tools", "logprobs", "response_format", "stream"} & set(body)


async def test_typed_fields_win_over_extra(backend: OpenAIBackend, fake: FakeUpstream) -> None:
    await backend.chat(USER, ChatParams(temperature=0.5, extra={"temperature": 1.5, "min_p": 0.1}))
    assert fake.bodies[-1]["temperature"] == 0.5
    assert fake.bodies[-1]["min_p"] == 0.1


async def test_schema_is_sent_as_response_format(backend: OpenAIBackend,
                                                 fake: FakeUpstream) -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string"},
                                               "score": {"type": "integer", "minimum": 1}},
              "required": ["title", "score"], "additionalProperties": False}
    completion = await backend.chat(USER, ChatParams(), schema=schema)
    assert fake.bodies[-1]["response_format"] == schema_response_format(schema)
    assert orjson.loads(completion.text) == {"title": "", "score": 1}


async def test_tool_calls_and_logprobs_come_back(backend: OpenAIBackend) -> None:
    tools = [{"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    params = ChatParams(tools=tools, tool_choice={"type": "function",
                                                  "function": {"name": "get_weather"}})
    completion = await backend.chat(USER, params)
    call = completion.choices[0].tool_calls[0]  # type: ignore[index]
    assert call["function"]["name"] == "get_weather"
    assert orjson.loads(call["function"]["arguments"]) == {"city": ""}
    assert completion.finish_reason == "tool_calls"

    completion = await backend.chat(USER, ChatParams(logprobs=True, top_logprobs=2))
    tokens = completion.logprobs["content"]  # type: ignore[index]
    assert "".join(t["token"] for t in tokens) == REPLY
    assert len(tokens[0]["top_logprobs"]) == 2


async def test_stream_tool_call_deltas(backend: OpenAIBackend) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    chunks = [c async for c in backend.stream(USER, ChatParams(tools=tools,
                                                                tool_choice="required"))]
    deltas = [d for c in chunks for ch in c.choices for d in ch.tool_calls or ()]
    assert deltas[0]["function"]["name"] == "f"
    assert "".join(d["function"].get("arguments", "") for d in deltas) == "{}"


async def test_models_and_ready(backend: OpenAIBackend, fake: FakeUpstream) -> None:
    assert await backend.models() == ["fake-model"]
    assert await backend.models() == ["fake-model"]
    assert fake.requests["/v1/models"] == 1  # cached
    assert await backend.ready() is True


async def test_malformed_json_is_a_bad_gateway(backend: OpenAIBackend, fake: FakeUpstream) -> None:
    fake.garbage()
    with pytest.raises(UpstreamError) as caught:
        await backend.chat(USER, ChatParams())
    assert caught.value.status == 502


async def test_on_call_hook_sees_duration_and_usage(fake: FakeUpstream) -> None:
    calls = []
    backend = OpenAIBackend([fake.base_url or ""], model="fake-model",
                            on_call=lambda *a: calls.append(a))
    try:
        await backend.chat(USER, ChatParams())
        _ = [c async for c in backend.stream(USER, ChatParams())]
        stream = backend.stream(USER, ChatParams())
        await anext(stream)
        await stream.aclose()  # the reader gave up half-way
    finally:
        await backend.aclose()
    assert [(ok, kind, usage) for _, ok, kind, usage in calls] == [
        (True, None, Usage(6, 11)), (True, None, Usage(6, 11)), (False, "cancelled", None)]
    assert all(duration > 0 for duration, *_ in calls)
    assert backend.stats.calls == 3 and backend.stats.completion_tokens == 22
    assert backend.stats.errors == {"cancelled": 1}


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 50])
def test_sse_parser_reassembles_events_split_anywhere(cut: int) -> None:
    stream = (b": comment\r\ndata: {\"a\": 1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\n"
              b"data:[DONE]\n\n")
    parser = SSEParser()
    events = []
    for i in range(0, len(stream), cut):
        events += parser.feed(stream[i:i + cut])
    assert events == [b'{"a": 1}', b"line1\nline2", b"[DONE]"]

"""Passthrough through the official `openai` SDK: what reaches the user is the upstream's answer."""

from __future__ import annotations

import json

import httpx
from openai import OpenAI

from tests.e2e.conftest import MODEL, Fake, Server

QUESTION = "Name three colours of the sea at dusk"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]
# The fake quotes the question; it counts one prompt token per word of every message and one
# completion token per word of its reply.
ANSWER = f"This is a deterministic fake reply about: {QUESTION}"
PROMPT_TOKENS = len("Be brief.".split()) + len(QUESTION.split())
COMPLETION_TOKENS = len(ANSWER.split(" "))


def test_plain_completion_is_the_upstream_answer_with_exact_usage(client: OpenAI) -> None:
    resp = client.chat.completions.create(model=MODEL, messages=MESSAGES)

    assert resp.object == "chat.completion"
    assert resp.model == MODEL
    assert len(resp.choices) == 1
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].message.content == ANSWER
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage is not None
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (
        PROMPT_TOKENS, COMPLETION_TOKENS)
    assert resp.usage.total_tokens == PROMPT_TOKENS + COMPLETION_TOKENS
    assert resp.model_extra["reflection"] == {"skipped": "disabled"}


def test_max_tokens_truncates_with_finish_reason_length(client: OpenAI) -> None:
    resp = client.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=3)

    assert resp.choices[0].message.content == "This is a"
    assert resp.choices[0].finish_reason == "length"
    assert resp.usage.completion_tokens == 3


def test_content_parts_are_accepted(client: OpenAI) -> None:
    resp = client.chat.completions.create(model=MODEL, messages=[
        {"role": "user", "content": [{"type": "text", "text": "tell me"},
                                     {"type": "text", "text": "about tides"}]}])

    assert resp.choices[0].message.content == (
        "This is a deterministic fake reply about: tell me about tides")


def test_stream_concatenates_to_the_plain_answer(client: OpenAI) -> None:
    plain = client.chat.completions.create(model=MODEL, messages=MESSAGES)
    chunks = list(client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True))

    pieces = [c.choices[0].delta.content for c in chunks
              if c.choices and c.choices[0].delta.content]
    assert len(pieces) >= 5  # real token streaming, not one blob
    assert "".join(pieces) == plain.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert all(c.usage is None for c in chunks)  # usage only when asked for


def test_stream_include_usage_ends_with_a_usage_chunk(client: OpenAI) -> None:
    chunks = list(client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, stream_options={"include_usage": True}))

    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (
        PROMPT_TOKENS, COMPLETION_TOKENS, PROMPT_TOKENS + COMPLETION_TOKENS)
    assert all(c.usage is None for c in chunks[:-1])


def test_n_2_returns_two_distinct_choices(client: OpenAI) -> None:
    resp = client.chat.completions.create(model=MODEL, messages=MESSAGES, n=2)

    assert [c.index for c in resp.choices] == [0, 1]
    assert resp.choices[0].message.content == ANSWER
    assert resp.choices[1].message.content == "Variant 1: " + ANSWER
    assert resp.usage.prompt_tokens == PROMPT_TOKENS
    assert resp.usage.completion_tokens == COMPLETION_TOKENS + len(("Variant 1: " + ANSWER).split())
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


def test_n_2_streamed_interleaves_both_choices(client: OpenAI) -> None:
    texts = {0: "", 1: ""}
    for chunk in client.chat.completions.create(model=MODEL, messages=MESSAGES, n=2, stream=True):
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""

    assert texts == {0: ANSWER, 1: "Variant 1: " + ANSWER}


def test_unmodelled_fields_reach_the_upstream_but_reflection_does_not(
        client: OpenAI, fake: Fake) -> None:
    client.chat.completions.create(
        model=MODEL, messages=MESSAGES, temperature=0.3, seed=7,
        extra_body={"top_k": 5, "repetition_penalty": 1.1,
                    "reflection": {"enabled": False}})

    [body] = fake.bodies()
    assert body["top_k"] == 5
    assert body["repetition_penalty"] == 1.1
    assert body["temperature"] == 0.3
    assert body["seed"] == 7
    assert body["messages"] == MESSAGES
    assert "reflection" not in body


def test_models_list_names_the_upstream_models(client: OpenAI) -> None:
    models = client.models.list()

    assert [m.id for m in models.data] == [MODEL]
    assert all(m.object == "model" for m in models.data)


def test_health_and_ready(passthrough: Server) -> None:
    health = httpx.get(passthrough.root + "/health").json()
    assert health["status"] == "ok"
    assert health["structured"]["writer"]["dialect"]["form"] == "json_schema"
    ready = httpx.get(passthrough.root + "/ready")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"database": True, "upstream": True}


LOOKUP = {"type": "function", "function": {
    "name": "lookup_tide", "description": "Tide times for a harbour",
    "parameters": {"type": "object", "properties": {"harbour": {"type": "string"},
                                                    "days": {"type": "integer", "minimum": 1}},
                   "required": ["harbour", "days"]}}}


def test_forced_tool_call_comes_back_as_tool_calls(client: OpenAI) -> None:
    resp = client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=[LOOKUP],
                                          tool_choice="required")

    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls
    assert call.function.name == "lookup_tide"
    assert json.loads(call.function.arguments) == {"harbour": "", "days": 1}


def test_streamed_tool_call_reassembles(client: OpenAI) -> None:
    name, arguments, finish = "", "", None
    for chunk in client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=[LOOKUP],
                                                tool_choice="required", stream=True):
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                name += call.function.name or ""
                arguments += call.function.arguments or ""
            finish = choice.finish_reason or finish

    assert (name, json.loads(arguments), finish) == (
        "lookup_tide", {"harbour": "", "days": 1}, "tool_calls")


def test_json_schema_response_format_reaches_the_upstream(client: OpenAI) -> None:
    schema = {"type": "object", "properties": {"colour": {"type": "string", "minLength": 3}},
              "required": ["colour"], "additionalProperties": False}
    resp = client.chat.completions.create(
        model=MODEL, messages=MESSAGES,
        response_format={"type": "json_schema",
                         "json_schema": {"name": "colour", "schema": schema, "strict": True}})

    assert json.loads(resp.choices[0].message.content) == {"colour": "xxx"}


def test_logprobs_pass_through(client: OpenAI) -> None:
    resp = client.chat.completions.create(model=MODEL, messages=MESSAGES, logprobs=True,
                                          top_logprobs=2, max_tokens=4)

    tokens = resp.choices[0].logprobs.content
    assert "".join(t.token for t in tokens) == "This is a deterministic"
    assert all(len(t.top_logprobs) == 2 for t in tokens)

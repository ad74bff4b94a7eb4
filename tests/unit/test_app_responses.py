"""The Responses API's conversions and stream events, in process: chat messages from items,
typed events from chunks (validated against OpenAI's components), and the request checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.openai.responses.checks import check_request, check_schema
from app.openai.responses.convert import Answer, to_chat, to_response
from app.openai.responses.events import ResponseEvents
from app.openai.responses.items import check_conversation, normalise
from app.openai.responses.wire import MessageItem, ResponseCreateRequest
from generation.errors import InvalidRequest
from generation.types import Chunk, ChunkChoice, Usage
from tests.openai_schema import assert_valid, problems


def request(**fields: Any) -> ResponseCreateRequest:
    return ResponseCreateRequest.model_validate({"input": "hi", **fields})


def events_of(data: list[bytes]) -> list[dict[str, Any]]:
    out = []
    for raw in data:
        name, payload = raw.decode().split("\n")[:2]
        event = json.loads(payload.removeprefix("data: "))
        assert name == "event: " + event["type"]
        assert_valid("ResponseStreamEvent", event)
        out.append(event)
    return out


def test_items_become_chat_messages_with_calls_folded_into_the_assistant_turn() -> None:
    items = [
        normalise(MessageItem(role="developer", content="Be terse.")),
        normalise(MessageItem.model_validate({"role": "user", "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": "https://x.test/a.png"}]})),
        normalise(MessageItem(role="assistant", content="Let me look it up.")),
        {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "look",
         "arguments": "{}", "status": "completed"},
        {"id": "fc_2", "type": "function_call", "call_id": "c2", "name": "look",
         "arguments": "{\"q\": 1}", "status": "completed"},
        {"id": "fco_1", "type": "function_call_output", "call_id": "c1", "output": "a"},
        {"id": "fco_2", "type": "function_call_output", "call_id": "c2", "output": "b"},
    ]
    messages, params = to_chat(request(instructions="You help.", max_output_tokens=32,
                                       tools=[{"type": "function", "name": "look"}],
                                       tool_choice={"type": "function", "name": "look"},
                                       parallel_tool_calls=False), items, "m")

    assert [m["role"] for m in messages] == ["system", "system", "user", "assistant", "tool",
                                            "tool"]
    assert messages[2]["content"][1] == {"type": "image_url", "image_url": {
        "url": "https://x.test/a.png", "detail": "auto"}}
    assert messages[3]["content"] == "Let me look it up."
    assert [c["id"] for c in messages[3]["tool_calls"]] == ["c1", "c2"]
    assert messages[4] == {"role": "tool", "tool_call_id": "c1", "content": "a"}
    assert (params.model, params.max_tokens, params.extra) == ("m", 32,
                                                               {"parallel_tool_calls": False})
    assert params.tool_choice == {"type": "function", "function": {"name": "look"}}
    assert params.tools == [{"type": "function", "function": {"name": "look"}}]


def test_text_then_a_streamed_call_become_two_items_in_order() -> None:
    events = ResponseEvents()
    call = {"index": 0, "id": "call_9", "type": "function",
            "function": {"name": "look", "arguments": ""}}

    def arguments(piece: str) -> Chunk:
        return Chunk((ChunkChoice(0, tool_calls=[{"index": 0,
                                                  "function": {"arguments": piece}}]),))

    chunks = [Chunk((ChunkChoice(0, content="", role="assistant"),)),
              Chunk((ChunkChoice(0, content="Checking"),)),
              Chunk((ChunkChoice(0, tool_calls=[call]),)),
              arguments("{\"q\""), arguments(": 1}"),
              Chunk((ChunkChoice(0, finish_reason="tool_calls"),)),
              Chunk((), usage=Usage(7, 3))]
    data = [b for c in chunks for b in events.feed(c)] + events.finish()
    kinds = [e["type"] for e in events_of(data)]

    assert kinds == [
        "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done"]
    answer = events.answer()
    assert answer.text == "Checking" and answer.usage == Usage(7, 3)
    assert answer.tool_calls[0]["function"] == {"name": "look", "arguments": "{\"q\": 1}"}
    body = to_response(request(), answer, response_id="resp_1", created_at=1, model="m",
                       output=events.output)
    assert_valid("Response", body)
    assert [i["type"] for i in body["output"]] == ["message", "function_call"]
    assert body["output"][1]["call_id"] == "call_9"


def test_a_cut_answer_is_incomplete_and_an_empty_one_still_has_a_message() -> None:
    events = ResponseEvents()
    data = events.feed(Chunk((ChunkChoice(0, finish_reason="length"),))) + events.finish()
    kinds = [e["type"] for e in events_of(data)]
    assert kinds[0] == "response.output_item.added" and kinds[-1] == "response.output_item.done"
    body = to_response(request(max_output_tokens=16), events.answer(), response_id="resp_1",
                       created_at=1, model="m", output=events.output)
    assert (body["status"], body["incomplete_details"]) == ("incomplete",
                                                            {"reason": "max_output_tokens"})
    assert body["output"][0]["status"] == "incomplete"
    assert_valid("Response", body)


def test_in_progress_and_failed_responses_validate() -> None:
    started = to_response(request(), None, response_id="resp_1", created_at=1, model="m")
    assert started["status"] == "in_progress" and "usage" not in started
    failed = to_response(request(), None, response_id="resp_1", created_at=1, model="m",
                         error={"code": "server_error", "message": "upstream gone"})
    assert failed["status"] == "failed"
    for body in (started, failed):
        assert_valid("Response", body)
    plain = to_response(request(), Answer("hi", usage=Usage(2, 1)), response_id="resp_1",
                        created_at=1, model="m")
    assert problems("Response", {**plain, "service_tier": "default"})  # not vendored: refused


def test_a_function_call_output_needs_its_call_and_every_call_its_output() -> None:
    call = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
            "arguments": "{}"}
    output = {"id": "fco_1", "type": "function_call_output", "call_id": "c1", "output": "x"}
    check_conversation([call], [output])
    check_conversation([], [call, output])
    with pytest.raises(InvalidRequest) as caught:
        check_conversation([], [output])
    assert caught.value.param == "input[0].call_id"
    with pytest.raises(InvalidRequest) as caught:
        check_conversation([call], [])
    assert caught.value.param == "input"


@pytest.mark.parametrize("fields", [
    {"include": []}, {"background": False}, {"truncation": "disabled"},
    {"reasoning": {"effort": None}}, {"service_tier": "auto"}, {"top_logprobs": 0},
    {"prompt_cache_key": "k", "safety_identifier": "u1", "max_tool_calls": 3},
])
def test_the_off_value_of_an_unsupported_feature_passes(fields: dict[str, Any]) -> None:
    check_request(request(**fields))


@pytest.mark.parametrize(("fields", "param"), [
    ({"include": ["message.output_text.logprobs"]}, "include"),
    ({"background": True}, "background"), ({"truncation": "auto"}, "truncation"),
    ({"reasoning": {"effort": "low"}}, "reasoning"), ({"service_tier": "flex"}, "service_tier"),
    ({"top_logprobs": 2}, "top_logprobs"), ({"prompt": {"id": "p"}}, "prompt"),
    ({"text": {"verbosity": "low"}}, "text.verbosity"),
    ({"stream_options": {"include_obfuscation": False}}, "stream_options"),
    ({"tools": [{"type": "function", "name": "f"}, {"type": "function", "name": "f"}]},
     "tools"),
])
def test_an_unsupported_feature_is_refused_with_its_name(fields: dict[str, Any],
                                                         param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        check_request(request(**fields))
    assert caught.value.param == param


@pytest.mark.parametrize(("schema", "param"), [
    ([], "s"), ({"type": "banana"}, "s.type"), ({"type": []}, "s.type"),
    ({"properties": {"a": {"type": 5}}}, "s.properties.a.type"),
    ({"items": {"anyOf": []}}, "s.items.anyOf"), ({"enum": []}, "s.enum"),
    ({"required": [1]}, "s.required"),
])
def test_a_bad_json_schema_is_refused_where_it_is_bad(schema: Any, param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        check_schema(schema, "s")
    assert caught.value.param == param


def test_a_good_json_schema_passes() -> None:
    check_schema({"type": "object", "properties": {"a": {"type": ["string", "null"]},
                                                   "b": {"type": "array", "items": True}},
                  "required": ["a"], "additionalProperties": False,
                  "$defs": {"x": {"enum": [1, 2]}}}, "s")

"""The Responses API end to end with the official `openai` client: plain and streamed, chained
with previous_response_id, a function tool round trip, JSON output, the reflection loop, and the
stored responses (retrieve, input items, delete, cancel). Every body, event and error the server
sends here is also validated against OpenAI's published components (tests/data/openai/)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.e2e.conftest import (
    ADMIN_KEY,
    API_KEY,
    MODEL,
    OTHER_KEY,
    UPSTREAM_RETRIES,
    Fake,
    Server,
)
from tests.openai_schema import assert_valid

WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False},
           "strict": True}
REPLY = "This is a deterministic fake reply about: "
ONE_ROUND = {"max_rounds": 1, "threshold": 1.0}
STAGES = ("checklist", "draft", "memory", "evaluate", "reflect", "rewrite")


def post(server: Server, body: dict[str, Any], key: str = API_KEY) -> httpx.Response:
    return httpx.post(server.base_url + "/responses", json=body, timeout=60,
                      headers={"Authorization": f"Bearer {key}"})


def stream_lines(server: Server, body: dict[str, Any]) -> list[str]:
    with httpx.stream("POST", server.base_url + "/responses", json={**body, "stream": True},
                      headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("text/event-stream")
        return [line for line in resp.iter_lines() if line]


def events_of(lines: list[str]) -> list[dict[str, Any]]:
    """The events of a Responses stream, each checked against its `event:` line and OpenAI's
    components; sequence numbers count up from 0 without gaps."""
    events, named = [], None
    for line in lines:
        if line.startswith("event: "):
            named = line.removeprefix("event: ")
        elif line.startswith("data: "):
            event = json.loads(line.removeprefix("data: "))
            assert event["type"] == named
            assert_valid("ResponseStreamEvent", event)
            events.append(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    for event in events:
        if "response" in event:
            assert_valid("Response", event["response"])
    return events


def upstream_messages(fake: Fake) -> list[dict[str, Any]]:
    return fake.bodies()[-1]["messages"]


@pytest.fixture
def sdk(passthrough: Server) -> Any:
    with passthrough.client() as c:
        yield c


@pytest.fixture
def loop_sdk(looping: Server) -> Any:
    with looping.client() as c:
        yield c


# -- create -----------------------------------------------------------------------------------

def test_plain_create_answers_in_openai_shape(sdk: OpenAI, passthrough: Server,
                                              fake: Fake) -> None:
    resp = sdk.responses.create(model=MODEL, input="Name three rivers",
                                instructions="Answer briefly.", metadata={"team": "geo"},
                                max_output_tokens=64, temperature=0.3)

    assert resp.id.startswith("resp_") and resp.object == "response"
    assert resp.status == "completed"
    assert resp.output_text == REPLY + "Name three rivers"
    assert resp.usage.total_tokens == resp.usage.input_tokens + resp.usage.output_tokens > 0
    assert resp.usage.input_tokens_details.cached_tokens == 0
    assert resp.metadata == {"team": "geo"} and resp.instructions == "Answer briefly."
    assert resp.model_extra["reflection"] == {"skipped": "disabled"}
    sent = fake.bodies()[-1]
    assert sent["messages"] == [{"role": "system", "content": "Answer briefly."},
                                {"role": "user", "content": "Name three rivers"}]
    assert (sent["max_tokens"], sent["temperature"]) == (64, 0.3)

    raw = post(passthrough, {"model": MODEL, "input": "Name three rivers"})
    assert raw.status_code == 200
    assert_valid("Response", raw.json())


def test_streamed_events_come_in_order_and_add_up_to_the_answer(sdk: OpenAI,
                                                                passthrough: Server,
                                                                fake: Fake) -> None:
    with sdk.responses.stream(model=MODEL, input="Describe a lighthouse") as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()

    assert types[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    deltas = [t for t in types if t == "response.output_text.delta"]
    assert len(deltas) > 1
    assert types[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    assert final.output_text == REPLY + "Describe a lighthouse"
    assert final.usage.output_tokens > 0

    streamed = sdk.responses.create(model=MODEL, input="Describe a lighthouse", stream=True)
    text = "".join(e.delta for e in streamed if e.type == "response.output_text.delta")
    assert text == final.output_text

    events = events_of(stream_lines(passthrough, {"model": MODEL, "input": "Describe a bay"}))
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == REPLY + "Describe a bay"


def test_three_turns_chain_through_previous_response_id(sdk: OpenAI, fake: Fake) -> None:
    first = sdk.responses.create(model=MODEL, input="My cat is called Miso.",
                                 instructions="You are a pet sitter.")
    second = sdk.responses.create(model=MODEL, input="She likes tuna.",
                                  previous_response_id=first.id)
    third = sdk.responses.create(model=MODEL, input="What is her name?",
                                 previous_response_id=second.id)

    sent = upstream_messages(fake)
    assert [(m["role"], m["content"]) for m in sent] == [
        ("user", "My cat is called Miso."), ("assistant", first.output_text),
        ("user", "She likes tuna."), ("assistant", second.output_text),
        ("user", "What is her name?")]  # instructions are not carried over, as on OpenAI
    assert third.previous_response_id == second.id
    items = sdk.responses.input_items.list(third.id, order="asc")
    assert [(i.type, i.role) for i in items.data] == [("message", "user"),
                                                      ("message", "assistant")] * 2 + [
        ("message", "user")]
    assert items.data[1].id == first.output[0].id  # the same item, not a copy with a new id


def test_a_function_tool_round_trip(sdk: OpenAI, passthrough: Server, fake: Fake) -> None:
    question = "Use get_weather to tell me if I need an umbrella in Lisbon"
    first = sdk.responses.create(model=MODEL, input=question, tools=[WEATHER])

    [call] = first.output
    assert (call.type, call.name, json.loads(call.arguments)) == (
        "function_call", "get_weather", {"city": ""})
    assert first.model_extra["reflection"]["skipped"] == "disabled"
    sent = fake.bodies()[-1]
    assert sent["tools"][0]["function"]["name"] == "get_weather"

    followed = sdk.responses.create(model=MODEL, tools=[WEATHER], input=[
        {"role": "user", "content": question}, call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "rain, 14 C"}])
    assert followed.output_text.startswith(REPLY)
    messages = upstream_messages(fake)
    assert messages[1]["tool_calls"][0]["id"] == call.call_id
    assert messages[2] == {"role": "tool", "tool_call_id": call.call_id, "content": "rain, 14 C"}

    chained = sdk.responses.create(model=MODEL, tools=[WEATHER], previous_response_id=first.id,
                                   input=[{"type": "function_call_output",
                                           "call_id": call.call_id, "output": "dry"}])
    assert chained.status == "completed"
    assert upstream_messages(fake)[-1] == {"role": "tool", "tool_call_id": call.call_id,
                                           "content": "dry"}

    events = events_of(stream_lines(passthrough, {"model": MODEL, "input": question,
                                                  "tools": [WEATHER]}))
    kinds = [e["type"] for e in events]
    assert "response.function_call_arguments.delta" in kinds
    [done] = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert (done["name"], json.loads(done["arguments"])) == ("get_weather", {"city": ""})
    assert events[-1]["response"]["output"][0]["type"] == "function_call"


def test_json_schema_text_format(sdk: OpenAI, loop_sdk: OpenAI, fake: Fake,
                                 writer: Fake) -> None:
    schema = {"type": "object", "properties": {"colour": {"type": "string", "minLength": 3}},
              "required": ["colour"], "additionalProperties": False}
    fmt = {"format": {"type": "json_schema", "name": "colour", "schema": schema, "strict": True}}
    resp = sdk.responses.create(model=MODEL, input="Pick a colour", text=fmt)

    assert json.loads(resp.output_text) == {"colour": "xxx"}
    assert fake.bodies()[-1]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "colour", "schema": schema,
                                               "strict": True}}
    assert resp.text.format.type == "json_schema"

    looped = loop_sdk.responses.create(model=MODEL, input="Pick a colour", text=fmt)
    assert "JSON text.format" in looped.model_extra["reflection"]["skipped"]
    assert writer.chat_requests() == 1


# -- the reflection loop -----------------------------------------------------------------------

def test_reflection_through_extra_body(loop_sdk: OpenAI, looping: Server,
                                       writer: Fake) -> None:
    resp = loop_sdk.responses.create(model=MODEL, input="Write a short toast for a retirement",
                                     extra_body={"reflection": {**ONE_ROUND,
                                                                "return_trace": True}})

    summary = resp.model_extra["reflection"]
    assert summary["rounds"] == 1 and len(summary["scores"]) == 2
    assert summary["stop_reason"] == "max_rounds"
    assert "(rev. 1)" in resp.output_text  # the rewrite scored higher and is the answer
    by_stage = summary["usage"]
    assert resp.usage.input_tokens == sum(by_stage[s]["prompt_tokens"] for s in STAGES)
    assert resp.usage.output_tokens == sum(by_stage[s]["completion_tokens"] for s in STAGES)
    assert sum(by_stage[s]["calls"] for s in STAGES) == writer.chat_requests()
    assert summary["trace"]["candidates"][-1]["text"] == resp.output_text

    record = httpx.get(f"{looping.root}/admin/loops/{summary['loop_id']}", timeout=10,
                       headers={"Authorization": f"Bearer {ADMIN_KEY}"}).json()
    assert record["request"]["messages"] == [
        {"role": "user", "content": "Write a short toast for a retirement"}]
    assert record["request"]["reflection"] == {**ONE_ROUND, "return_trace": True}
    assert record["request"]["response_id"] == resp.id


def test_streamed_loop_sends_progress_before_the_first_output_event(
        loop_sdk: OpenAI, looping: Server, writer: Fake) -> None:
    body = {"model": MODEL, "input": "Write a haiku about a harbour", "reflection": ONE_ROUND}
    plain = loop_sdk.responses.create(model=MODEL, input=body["input"],
                                      extra_body={"reflection": ONE_ROUND})
    lines = stream_lines(looping, body)

    comments = [i for i, line in enumerate(lines) if line.startswith(": ")]
    first_output = next(i for i, line in enumerate(lines)
                        if line == "event: response.output_item.added")
    in_progress = lines.index("event: response.in_progress")
    assert comments and in_progress < min(comments) and max(comments) < first_output
    progress = [json.loads(lines[i][2:])["event"] for i in comments]
    assert "evaluated" in progress
    events = events_of(lines)
    final = events[-1]["response"]
    assert final["output"][0]["content"][0]["text"] == plain.output_text
    assert final["reflection"]["rounds"] == 1
    assert final["usage"]["input_tokens"] == sum(
        final["reflection"]["usage"][s]["prompt_tokens"] for s in STAGES)

    with loop_sdk.responses.stream(model=MODEL, input=body["input"],
                                   extra_body={"reflection": ONE_ROUND}) as stream:
        assert stream.get_final_response().output_text == plain.output_text


def test_tools_skip_the_loop_and_say_why(loop_sdk: OpenAI, writer: Fake) -> None:
    resp = loop_sdk.responses.create(model=MODEL, input="Tell me a riddle", tools=[WEATHER],
                                     extra_body={"reflection": ONE_ROUND})
    assert resp.model_extra["reflection"]["skipped"].startswith("tools requested")
    assert writer.chat_requests() == 1


# -- stored responses -------------------------------------------------------------------------

def test_retrieve_list_input_items_and_delete(sdk: OpenAI, passthrough: Server) -> None:
    first = sdk.responses.create(model=MODEL, input=[
        {"role": "developer", "content": "Be terse."},
        {"role": "user", "content": [{"type": "input_text", "text": "Hello"}]}])
    resp = sdk.responses.create(model=MODEL, input="And again", previous_response_id=first.id)

    got = sdk.responses.retrieve(resp.id)
    assert got.model_dump() == resp.model_dump()
    raw = httpx.get(f"{passthrough.base_url}/responses/{resp.id}", timeout=10,
                    headers={"Authorization": f"Bearer {API_KEY}"})
    assert_valid("Response", raw.json())

    newest_first = [i.id for i in sdk.responses.input_items.list(resp.id, limit=2)]
    page = sdk.responses.input_items.list(resp.id, limit=2)
    assert len(page.data) == 2 and page.has_more
    assert len(newest_first) == 4  # the SDK pages through after= until has_more is false
    oldest_first = [i.id for i in sdk.responses.input_items.list(resp.id, order="asc")]
    assert oldest_first == newest_first[::-1]
    listed = httpx.get(f"{passthrough.base_url}/responses/{resp.id}/input_items", timeout=10,
                       params={"limit": 3, "after": oldest_first[0], "order": "asc"},
                       headers={"Authorization": f"Bearer {API_KEY}"}).json()
    assert_valid("ResponseItemList", listed)
    assert [i["id"] for i in listed["data"]] == oldest_first[1:]
    assert (listed["first_id"], listed["last_id"], listed["has_more"]) == (
        oldest_first[1], oldest_first[3], False)

    sdk.responses.delete(resp.id)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.retrieve(resp.id)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.delete(resp.id)
    assert sdk.responses.retrieve(first.id).id == first.id  # the chain's start is untouched


def test_another_keys_responses_are_not_found(sdk: OpenAI, passthrough: Server,
                                              fake: Fake) -> None:
    mine = sdk.responses.create(model=MODEL, input="A secret: the code is 4711")
    with passthrough.client(api_key=OTHER_KEY) as other:
        for call in (lambda: other.responses.retrieve(mine.id),
                     lambda: other.responses.input_items.list(mine.id),
                     lambda: other.responses.delete(mine.id)):
            with pytest.raises(openai.NotFoundError):
                call()
        calls = fake.chat_requests()
        with pytest.raises(openai.NotFoundError) as caught:
            other.responses.create(model=MODEL, input="What was the code?",
                                   previous_response_id=mine.id)
    assert caught.value.body["param"] == "previous_response_id"
    assert "4711" not in caught.value.message
    assert fake.chat_requests() == calls  # nothing reached the upstream
    assert sdk.responses.retrieve(mine.id).id == mine.id


def test_store_false_keeps_nothing(sdk: OpenAI) -> None:
    resp = sdk.responses.create(model=MODEL, input="Forget this", store=False)
    assert resp.store is False and resp.status == "completed"
    with pytest.raises(openai.NotFoundError):
        sdk.responses.retrieve(resp.id)


def test_cancel_says_background_mode_is_not_supported(sdk: OpenAI) -> None:
    resp = sdk.responses.create(model=MODEL, input="Quick one")
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.responses.cancel(resp.id)
    assert "background" in caught.value.message
    with pytest.raises(openai.NotFoundError):
        sdk.responses.cancel("resp_" + "0" * 32)
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.responses.create(model=MODEL, input="Later", background=True)
    assert caught.value.body["param"] == "background"


# -- failures ---------------------------------------------------------------------------------

def test_errors_validate_and_carry_their_status(passthrough: Server, fake: Fake) -> None:
    missing = httpx.get(f"{passthrough.base_url}/responses/resp_nope", timeout=10,
                        headers={"Authorization": f"Bearer {API_KEY}"})
    fake.fail(503, times=1 + UPSTREAM_RETRIES)
    down = post(passthrough, {"model": MODEL, "input": "hi"})
    for status, resp in ((400, post(passthrough, {"model": MODEL, "input": []})),
                         (401, post(passthrough, {"model": MODEL, "input": "hi"}, key="nope")),
                         (404, missing), (503, down)):
        assert resp.status_code == status, resp.text
        assert_valid("ErrorResponse", resp.json())


def test_upstream_down_before_the_stream_starts_is_a_real_status(sdk: OpenAI,
                                                                 fake: Fake) -> None:
    fake.fail(503, times=1 + UPSTREAM_RETRIES)
    with pytest.raises(openai.InternalServerError) as caught:
        sdk.responses.create(model=MODEL, input="hi", stream=True)
    assert caught.value.status_code == 503


def test_a_mid_stream_drop_is_an_error_event_then_response_failed(passthrough: Server,
                                                                  fake: Fake) -> None:
    fake.control("config", {"chunk_delay": 0.02})
    fake.drop(1 + UPSTREAM_RETRIES, after_chunks=3)
    events = events_of(stream_lines(passthrough, {"model": MODEL, "input": "hi", "store": True}))

    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    assert events[-2]["code"] == "bad_gateway"
    failed = events[-1]["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "server_error"
    resp = httpx.get(f"{passthrough.base_url}/responses/{failed['id']}", timeout=10,
                     headers={"Authorization": f"Bearer {API_KEY}"})
    assert resp.status_code == 404  # a failed response is not kept


# A client that goes away mid-passthrough: tests/e2e/test_e2e_errors.py, for both routes.
def test_client_disconnect_cancels_the_loop(looping: Server, writer: Fake) -> None:
    writer.control("config", {"latency": 0.3})
    body = {"model": MODEL, "input": "Write a story about a clever fox", "stream": True,
            "reflection": {"max_rounds": 3, "threshold": 1.0}}
    with httpx.stream("POST", looping.base_url + "/responses", json=body,
                      headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30) as resp:
        comment = next(line for line in resp.iter_lines() if line.startswith(": "))
    assert json.loads(comment[2:])["event"]  # the loop was under way when the client left

    writer.wait_for(lambda s: s["in_flight"] == 0)
    settled = writer.chat_requests()
    time.sleep(0.9)  # three more calls' worth of latency
    assert writer.chat_requests() == settled
    assert settled < 5  # a whole loop makes about 8 calls

"""Every body the server sends validates against OpenAI's published components.

The components are vendored from openai/openai-openapi (tests/data/openai/, MIT); the glue
is tests/openai_schema.py. Bodies come from the real server over HTTP: passthrough and
loop, plain and streamed (every chunk, the usage chunk included), n=2, logprobs, tools,
return_trace, a mid-stream error event, each error status the API answers, and the model list.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import (
    API_KEY,
    MAX_BODY_BYTES,
    MODEL,
    UPSTREAM_RETRIES,
    Fake,
    Server,
    data_events,
    sse_lines,
)
from tests.openai_schema import assert_valid

HELLO = [{"role": "user", "content": "Write two sentences about the sea at dusk."}]
LOOKUP = {"type": "function", "function": {
    "name": "lookup_tide", "description": "Tide times for a harbour",
    "parameters": {"type": "object", "properties": {"harbour": {"type": "string"},
                                                    "days": {"type": "integer"}},
                   "required": ["harbour", "days"]}}}
ONE_ROUND = {"max_rounds": 1, "threshold": 1.0}


def post(server: Server, body: dict[str, Any], key: str | None = API_KEY,
         path: str = "/chat/completions", **kw: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(server.base_url + path, json=body, headers=headers, timeout=60, **kw)


def check_stream(server: Server, body: dict[str, Any]) -> list[dict[str, Any]]:
    events = data_events(sse_lines(server, {**body, "stream": True}))
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    for chunk in chunks:
        assert_valid("CreateChatCompletionStreamResponse", chunk)
    return chunks


@pytest.mark.parametrize("extra", [
    {},
    {"n": 2},
    {"logprobs": True, "top_logprobs": 2, "max_tokens": 4},
    {"tools": [LOOKUP], "tool_choice": "required"},
], ids=["plain", "n2", "logprobs", "tools"])
def test_passthrough_bodies_validate(passthrough: Server, fake: Fake, extra: dict) -> None:
    body = {"model": MODEL, "messages": HELLO, **extra}
    resp = post(passthrough, body)
    assert resp.status_code == 200, resp.text
    assert_valid("CreateChatCompletionResponse", resp.json())
    if "logprobs" in extra:
        assert resp.json()["choices"][0]["logprobs"]["refusal"] is None

    chunks = check_stream(passthrough, {**body, "stream_options": {"include_usage": True}})
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    assert all("system_fingerprint" not in c for c in chunks)


@pytest.mark.parametrize("options", [ONE_ROUND, {**ONE_ROUND, "return_trace": True}],
                         ids=["loop", "return_trace"])
@pytest.mark.parametrize("n", [1, 2])
def test_loop_bodies_validate(looping: Server, writer: Fake, options: dict, n: int) -> None:
    body = {"model": MODEL, "messages": HELLO, "n": n, "reflection": options}
    resp = post(looping, body)
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert_valid("CreateChatCompletionResponse", data)
    assert "system_fingerprint" not in data
    assert len(data["choices"]) == n and data["reflection"]["rounds"] == 1

    chunks = check_stream(looping, {**body, "stream_options": {"include_usage": True}})
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    finished = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finished) == n and all("reflection" in c for c in finished)


def test_mid_stream_error_event_is_an_error_response(passthrough: Server, fake: Fake) -> None:
    fake.drop(1 + UPSTREAM_RETRIES, after_chunks=2)
    events = data_events(sse_lines(passthrough, {"model": MODEL, "messages": HELLO,
                                                 "stream": True}))
    [error] = [e for e in events if isinstance(e, dict) and "error" in e]
    assert_valid("ErrorResponse", error)
    for chunk in events:
        if isinstance(chunk, dict) and "choices" in chunk:
            assert_valid("CreateChatCompletionStreamResponse", chunk)


def _error_bodies(server: Server, fake: Fake) -> dict[int, httpx.Response]:
    out = {
        400: post(server, {"model": MODEL, "messages": HELLO, "temperature": 3}),
        401: post(server, {"model": MODEL, "messages": HELLO}, key=None),
        403: httpx.get(server.root + "/admin/loops", timeout=10,
                       headers={"Authorization": f"Bearer {API_KEY}"}),
        404: httpx.get(server.base_url + "/nowhere", timeout=10,
                       headers={"Authorization": f"Bearer {API_KEY}"}),
        405: httpx.get(server.base_url + "/chat/completions", timeout=10,
                       headers={"Authorization": f"Bearer {API_KEY}"}),
        413: post(server, {"model": MODEL, "messages": [
            {"role": "user", "content": "x" * (MAX_BODY_BYTES + 1)}]}),
    }
    fake.fail(500, times=1 + UPSTREAM_RETRIES)
    out[502] = post(server, {"model": MODEL, "messages": HELLO})
    fake.fail(503, times=1 + UPSTREAM_RETRIES)
    out[503] = post(server, {"model": MODEL, "messages": HELLO})
    fake.fail(429, times=1 + UPSTREAM_RETRIES, retry_after=0)
    out[429] = post(server, {"model": MODEL, "messages": HELLO})
    return out


def test_every_error_status_is_an_error_response(passthrough: Server, fake: Fake) -> None:
    for status, resp in _error_bodies(passthrough, fake).items():
        assert resp.status_code == status, (status, resp.text)
        assert_valid("ErrorResponse", resp.json())


def test_model_list_validates(passthrough: Server) -> None:
    resp = httpx.get(passthrough.base_url + "/models", timeout=10,
                     headers={"Authorization": f"Bearer {API_KEY}"})
    assert resp.status_code == 200
    assert_valid("ListModelsResponse", resp.json())
    assert [m["id"] for m in resp.json()["data"]] == [MODEL]

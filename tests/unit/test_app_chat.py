"""The chat route in-process, on the scripted backend: shapes, streaming, errors."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.factory import create_app
from app.settings import load_settings
from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend

URL = "/v1/chat/completions"
MSG = [{"role": "user", "content": "Write a haiku about rain."}]


@pytest.fixture
def backend():
    return ScriptedBackend(model="tiny")


@pytest.fixture
def client(tmp_path, backend, monkeypatch):
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL"):
        monkeypatch.delenv(key, raising=False)
    settings = load_settings(data={"dir": tmp_path}, api={"keys": "sk-test"}, model="tiny",
                             reflection={"enabled": False}, memory={"enabled": False})
    app = create_app(settings, backend=backend)
    with TestClient(app, headers={"Authorization": "Bearer sk-test"}) as c:
        yield c


def sse_events(text: str) -> list[str]:
    return [line[6:] for line in text.splitlines() if line.startswith("data: ")]


def test_plain_completion_has_openai_shape_and_exact_usage(client, backend):
    backend.enqueue("Soft rain on the roof")
    r = client.post(URL, json={"model": "tiny", "messages": MSG, "temperature": 0.2})
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["choices"][0]["message"] == {"role": "assistant",
                                             "content": "Soft rain on the roof", "refusal": None}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
    assert backend.calls[0].params.temperature == 0.2


def test_unmodelled_fields_are_forwarded_as_extra_body(client, backend):
    backend.enqueue("ok")
    r = client.post(URL, json={"messages": MSG, "top_k": 5, "max_completion_tokens": 7,
                               "stop": "END", "repetition_penalty": 1.1})
    assert r.status_code == 200
    params = backend.calls[0].params
    assert params.extra == {"top_k": 5, "repetition_penalty": 1.1}
    assert params.max_tokens == 7 and params.stop == ("END",) and params.model == "tiny"


def test_n_choices(client, backend):
    backend.enqueue("one", "two")
    r = client.post(URL, json={"messages": MSG, "n": 2})
    assert [c["message"]["content"] for c in r.json()["choices"]] == ["one", "two"]


def test_stream_sends_chunks_usage_then_done(client, backend):
    backend.enqueue("a b c d")
    r = client.post(URL, json={"messages": MSG, "stream": True,
                               "stream_options": {"include_usage": True}})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "a b c d"
    assert sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")) == 4
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 4
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)


def test_stream_without_include_usage_sends_no_usage(client, backend):
    backend.enqueue("x y")
    events = sse_events(client.post(URL, json={"messages": MSG, "stream": True}).text)
    assert all("usage" not in json.loads(e) for e in events[:-1])


def test_failure_before_first_chunk_is_a_real_status(client, backend):
    backend.enqueue(UpstreamUnavailable("upstream down"))
    r = client.post(URL, json={"messages": MSG, "stream": True})
    assert r.status_code == 503
    assert r.json()["error"]["code"] == "upstream_unavailable"


def test_failure_mid_stream_sends_one_error_event_then_done(client, backend, monkeypatch):
    async def broken(messages, params, schema=None):
        from generation.types import Chunk, ChunkChoice

        yield Chunk((ChunkChoice(0, content="par", role="assistant"),))
        raise UpstreamUnavailable("upstream went away")

    monkeypatch.setattr(backend, "stream", broken)
    events = sse_events(client.post(URL, json={"messages": MSG, "stream": True}).text)
    assert events[-1] == "[DONE]"
    errors = [json.loads(e) for e in events[:-1] if "error" in json.loads(e)]
    assert len(errors) == 1 and errors[0]["error"]["message"] == "upstream went away"


@pytest.mark.parametrize(
    ("payload", "param"),
    [
        ({"messages": []}, "messages"),
        ({"messages": MSG, "temperature": 3}, "temperature"),
        ({"messages": MSG, "n": 0}, "n"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"messages": MSG, "top_logprobs": 3}, "top_logprobs"),
        ({"messages": MSG, "stream_options": {"include_usage": True}}, "stream_options"),
        ({"messages": MSG, "tool_choice": "required"}, "tool_choice"),
        ({"messages": MSG, "stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({}, "messages"),
    ],
)
def test_bad_input_is_400_naming_the_field(client, payload, param):
    r = client.post(URL, json=payload)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert error["message"]


def test_malformed_json_is_400(client):
    r = client.post(URL, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert "not valid JSON" in r.json()["error"]["message"]


def test_missing_or_wrong_key_is_401(client):
    r = client.post(URL, json={"messages": MSG}, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "invalid_api_key"


def test_unknown_route_is_openai_404(client):
    r = client.get("/v1/nothing")
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found_error"


def test_models_lists_the_backend_model(client):
    r = client.get("/v1/models")
    assert r.json()["data"][0]["id"] == "tiny"


def test_health_ready_metrics(client, backend):
    backend.enqueue("hi there")
    client.post(URL, json={"messages": MSG})
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200 and ready.json()["checks"] == {"database": True,
                                                                     "upstream": True}
    metrics = client.get("/metrics").text
    assert 'redraft_requests_total{method="POST",route="/v1/chat/completions",status="200"}' \
        in metrics
    assert "redraft_tokens_total" in metrics

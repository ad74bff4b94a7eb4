"""Malformed chat requests, sent raw: each gets an OpenAI error object that names the field
(`param`), a 4xx status, and never reaches the upstream. Nothing malformed is a 5xx."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import API_KEY, MODEL, Fake, Server

HI = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}

# (request body, the field `param` must name or start with); None: the body itself is at fault
CASES: list[tuple[Any, str | None]] = [
    ({"model": MODEL, "messages": "hi"}, "messages"),
    ({"model": MODEL, "messages": ["hi"]}, "messages[0]"),
    ({"model": MODEL, "messages": []}, "messages"),
    ({"model": MODEL, "messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
    ({"model": MODEL, "messages": [{"content": "hi"}]}, "messages[0]"),
    ({"model": MODEL, "messages": [{"role": "user", "content": 5}]}, "messages[0]"),
    ({"model": MODEL, "messages": [{"role": "user", "content": None}]}, "messages[0]"),
    ({"model": MODEL, "messages": [{"role": "tool", "content": "x"}]}, "messages[0]"),
    ({"model": MODEL, "messages": HI, "temperature": "hot"}, "temperature"),
    ({"model": MODEL, "messages": HI, "temperature": -1}, "temperature"),
    ({"model": MODEL, "messages": HI, "top_p": 2}, "top_p"),
    ({"model": MODEL, "messages": HI, "n": 0}, "n"),
    ({"model": MODEL, "messages": HI, "n": "two"}, "n"),
    ({"model": MODEL, "messages": HI, "max_tokens": 0}, "max_tokens"),
    ({"model": MODEL, "messages": HI, "max_tokens": 1.5}, "max_tokens"),
    ({"model": MODEL, "messages": HI, "stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"model": MODEL, "messages": HI, "presence_penalty": 3}, "presence_penalty"),
    ({"model": MODEL, "messages": HI, "stream": "sometimes"}, "stream"),
    ({"model": MODEL, "messages": HI, "tools": TOOL}, "tools"),
    ({"model": MODEL, "messages": HI, "tools": [{"type": "retrieval"}]}, "tools[0]"),
    ({"model": MODEL, "messages": HI, "tools": [TOOL], "tool_choice": "always"}, "tool_choice"),
    ({"model": MODEL, "messages": HI, "tool_choice": "required"}, "tool_choice"),
    ({"model": MODEL, "messages": HI, "response_format": {"type": "xml"}}, "response_format"),
    ({"model": MODEL, "messages": HI, "top_logprobs": 21, "logprobs": True}, "top_logprobs"),
    ({"model": MODEL, "messages": HI, "reflection": {"max_rounds": "many"}},
     "reflection.max_rounds"),
    ({"model": MODEL, "messages": HI, "reflection": "on"}, "reflection"),
    ({"model": MODEL, "messages": HI, "reflection": {"threshold": -0.5}}, "reflection.threshold"),
    ([{"model": MODEL, "messages": HI}], None),  # JSON, but not an object
]
RAW: list[tuple[bytes, int]] = [
    (b"{not json", 400),
    (b"", 400),
    (b'{"model": "m", "messages": [' + b"x" * (5 * 1024 * 1024) + b"]}", 413),  # 5 MB
]


def check_error(resp: httpx.Response, statuses: tuple[int, ...]) -> dict[str, Any]:
    assert resp.status_code < 500, resp.text[:300]
    assert resp.status_code in statuses, (resp.status_code, resp.text[:300])
    error = resp.json()["error"]
    assert set(error) >= {"message", "type", "param", "code"}
    assert error["message"]
    return error


@pytest.mark.parametrize(("body", "param"), CASES, ids=[str(p) for _, p in CASES])
def test_malformed_body_is_a_400_naming_the_field(passthrough: Server, fake: Fake, body: Any,
                                                  param: str | None) -> None:
    resp = httpx.post(passthrough.base_url + "/chat/completions", json=body, timeout=10,
                      headers={"Authorization": f"Bearer {API_KEY}"})
    error = check_error(resp, (400,))
    assert error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] is not None and error["param"].startswith(param), error
    assert fake.chat_requests() == 0


@pytest.mark.parametrize("path", ["/chat/completions", "/responses"])
@pytest.mark.parametrize(("raw", "status"), RAW, ids=["not-json", "empty", "5MB"])
def test_unreadable_body_is_an_error_object(passthrough: Server, fake: Fake, raw: bytes,
                                            status: int, path: str) -> None:
    resp = httpx.post(passthrough.base_url + path, content=raw, timeout=30,
                      headers={"Authorization": f"Bearer {API_KEY}",
                               "Content-Type": "application/json"})
    check_error(resp, (status,))
    assert fake.chat_requests() == 0


def test_there_are_at_least_25_malformed_cases() -> None:
    assert len(CASES) + len(RAW) >= 25

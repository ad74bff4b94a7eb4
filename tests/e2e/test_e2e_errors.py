"""The SDK exception a user gets for each bad input, bad key, limit and upstream failure."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.e2e.conftest import (
    ADMIN_KEY,
    API_KEY,
    MAX_BODY_BYTES,
    MODEL,
    OTHER_KEY,
    THIRD_KEY,
    UPSTREAM_RETRIES,
    Fake,
    Server,
    data_events,
    sse_lines,
)

HELLO = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(("kwargs", "param"), [
    ({"messages": HELLO, "temperature": 3}, "temperature"),
    ({"messages": HELLO, "top_p": 1.5}, "top_p"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
    ({"messages": HELLO, "n": 0}, "n"),
    ({"messages": HELLO, "top_logprobs": 3}, "top_logprobs"),
    ({"messages": HELLO, "extra_body": {"reflection": {"max_rounds": 11}}},
     "reflection.max_rounds"),
    ({"messages": HELLO, "extra_body": {"reflection": {"threshold": 2}}}, "reflection.threshold"),
    ({"messages": HELLO, "extra_body": {"reflection": {"candidates": 0}}},
     "reflection.candidates"),
    ({"messages": HELLO, "extra_body": {"reflection": {"rounds": 3}}}, "reflection.rounds"),
    ({"messages": HELLO, "extra_body": {"reflection": {"evaluation": "vibes"}}},
     "reflection.evaluation"),
])
def test_bad_input_is_a_400_naming_the_field(client: OpenAI, fake: Fake, kwargs: dict[str, Any],
                                             param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, **kwargs)

    err = caught.value
    assert err.status_code == 400
    assert err.body["type"] == "invalid_request_error"
    assert err.body["param"] == param
    assert err.param == param
    assert param in err.body["message"]
    assert fake.chat_requests() == 0  # refused before any upstream call


def test_bad_input_on_a_stream_is_a_400_too(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO, stream=True, temperature=-1)

    assert caught.value.body["param"] == "temperature"


def test_body_that_is_not_json_is_a_400(passthrough: Server) -> None:
    resp = httpx.post(passthrough.base_url + "/chat/completions", content=b"{not json",
                      headers={"Authorization": f"Bearer {API_KEY}",
                               "Content-Type": "application/json"})

    assert resp.status_code == 400
    assert resp.json()["error"]["type"] == "invalid_request_error"


def test_wrong_key_is_an_authentication_error(passthrough: Server) -> None:
    with passthrough.client(api_key="not-a-key") as bad, \
            pytest.raises(openai.AuthenticationError) as caught:
        bad.chat.completions.create(model=MODEL, messages=HELLO)

    assert caught.value.status_code == 401
    assert caught.value.body["type"] == "authentication_error"
    assert caught.value.body["code"] == "invalid_api_key"


def test_missing_key_is_a_401(passthrough: Server) -> None:
    resp = httpx.post(passthrough.base_url + "/chat/completions",
                      json={"model": MODEL, "messages": HELLO})

    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "invalid_api_key"


def test_user_key_on_the_admin_api_is_permission_denied(client: OpenAI,
                                                        passthrough: Server) -> None:
    with pytest.raises(openai.PermissionDeniedError) as caught:
        client.get(passthrough.root + "/admin/loops", cast_to=object)

    assert caught.value.status_code == 403
    with passthrough.client(api_key=ADMIN_KEY) as admin:
        assert admin.get(passthrough.root + "/admin/loops", cast_to=object)["object"] == "list"


def test_unknown_route_is_not_found(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.get("/no/such/route", cast_to=object)

    assert caught.value.status_code == 404
    assert caught.value.body["type"] == "not_found_error"


def test_body_over_the_limit_is_a_413(client: OpenAI, fake: Fake) -> None:
    huge = [{"role": "user", "content": "x" * (MAX_BODY_BYTES + 1)}]
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model=MODEL, messages=huge)

    assert caught.value.status_code == 413
    assert caught.value.body["code"] == "request_too_large"
    assert "REDRAFT_SERVER_MAX_BODY_BYTES" in caught.value.body["message"]
    assert fake.chat_requests() == 0


def test_chunked_body_over_the_limit_is_a_413(passthrough: Server, fake: Fake) -> None:
    def body():  # no Content-Length: the server must count as the body streams in
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(MAX_BODY_BYTES // 1000 + 1):
            yield b"x" * 1000
        yield b'"}]}'

    resp = httpx.post(passthrough.base_url + "/chat/completions", content=body(),
                      headers={"Authorization": f"Bearer {API_KEY}",
                               "Content-Type": "application/json"})

    assert resp.status_code == 413
    assert resp.json()["error"]["code"] == "request_too_large"
    assert fake.chat_requests() == 0


def test_wrong_method_is_a_405_error_object(passthrough: Server) -> None:
    resp = httpx.get(passthrough.base_url + "/chat/completions",
                     headers={"Authorization": f"Bearer {API_KEY}"})

    assert resp.status_code == 405
    assert resp.json()["error"]["type"] == "invalid_request_error"


def test_stream_options_without_stream_is_a_400(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO,
                                       stream_options={"include_usage": True})

    assert caught.value.body["param"] == "stream_options"


def test_rate_limit_is_a_429_with_retry_after(limited: Server, fake: Fake) -> None:
    with limited.client() as c:
        for _ in range(2):  # the limit is 2 a minute
            c.chat.completions.create(model=MODEL, messages=HELLO)
        with pytest.raises(openai.RateLimitError) as caught:
            c.chat.completions.create(model=MODEL, messages=HELLO)

    err = caught.value
    assert err.status_code == 429
    assert err.body["type"] == "rate_limit_error"
    assert err.body["code"] == "rate_limit_exceeded"
    # GCRA at 2/min: the next slot opens 30 s after the first request.
    assert 1 <= int(err.response.headers["retry-after"]) <= 30
    assert fake.chat_requests() == 2


def test_concurrency_limit_and_upstream_timeout(limited: Server, fake: Fake) -> None:
    """One request of OTHER_KEY hangs upstream: a second one at the same time is refused; the
    hanging one ends as a 504 when the 1 s upstream timeout passes."""
    fake.hang(1)
    outcome: list[BaseException] = []

    def hanging() -> None:
        with limited.client(api_key=OTHER_KEY) as c:
            try:
                c.chat.completions.create(model=MODEL, messages=HELLO)
            except openai.APIError as exc:
                outcome.append(exc)

    thread = threading.Thread(target=hanging)
    thread.start()
    assert fake.wait_for(lambda s: s["in_flight"] == 1)["in_flight"] == 1
    with limited.client(api_key=OTHER_KEY) as c:
        with pytest.raises(openai.RateLimitError) as caught:
            c.chat.completions.create(model=MODEL, messages=HELLO)
        assert caught.value.response.headers["retry-after"] == "1"
        assert "in flight" in caught.value.body["message"]
        thread.join(timeout=10)
        [timeout] = outcome
        assert isinstance(timeout, openai.InternalServerError)
        assert timeout.status_code == 504
        assert timeout.body["code"] == "upstream_timeout"
        # the permit came back: the same key may call again
        assert c.chat.completions.create(model=MODEL, messages=HELLO).choices


def test_closing_a_stream_early_gives_the_permit_back(limited: Server, fake: Fake) -> None:
    """With 1 request in flight per key, a stream the client abandons must not hold its slot
    until the upstream finishes (about 4 s at 0.3 s a chunk)."""
    fake.control("config", {"chunk_delay": 0.3})
    with limited.client(api_key=THIRD_KEY) as c:
        stream = c.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
        chunks = iter(stream)
        next(chunks), next(chunks)
        stream.close()
        closed = time.monotonic()
        fake.control("config", {"chunk_delay": 0})
        while True:
            try:
                resp = c.chat.completions.create(model=MODEL, messages=HELLO)
                break
            except openai.RateLimitError as exc:  # still in flight: costs no rate token
                assert "in flight" in exc.body["message"]
                assert time.monotonic() - closed < 2, "the abandoned stream kept its permit"
                time.sleep(0.05)

    assert resp.choices[0].message.content == "This is a deterministic fake reply about: hello"


def test_upstream_503_beyond_the_retries_is_a_503(client: OpenAI, fake: Fake) -> None:
    fake.fail(503, times=UPSTREAM_RETRIES + 1)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO)

    assert caught.value.status_code == 503
    assert caught.value.body["type"] == "upstream_error"
    assert caught.value.body["code"] == "upstream_unavailable"
    assert fake.chat_requests() == UPSTREAM_RETRIES + 1


def test_upstream_503_within_the_retries_is_invisible(client: OpenAI, fake: Fake) -> None:
    fake.fail(503, times=UPSTREAM_RETRIES)
    resp = client.chat.completions.create(model=MODEL, messages=HELLO)

    assert resp.choices[0].message.content == "This is a deterministic fake reply about: hello"
    assert fake.chat_requests() == UPSTREAM_RETRIES + 1


def test_upstream_500_is_a_bad_gateway(client: OpenAI, fake: Fake) -> None:
    fake.fail(500, times=UPSTREAM_RETRIES + 1)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO)

    assert caught.value.status_code == 502
    assert caught.value.body["code"] == "bad_gateway"


def test_upstream_400_is_relayed_with_its_param_and_not_retried(client: OpenAI,
                                                                fake: Fake) -> None:
    fake.fail(400, message="top_k must be positive", param="top_k")
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO, extra_body={"top_k": -1})

    assert caught.value.body["param"] == "top_k"
    assert "top_k must be positive" in caught.value.body["message"]
    assert fake.chat_requests() == 1


def test_upstream_429_beyond_the_retries_is_a_429(client: OpenAI, fake: Fake) -> None:
    fake.fail(429, times=UPSTREAM_RETRIES + 1, retry_after=0)
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO)

    assert caught.value.status_code == 429
    assert int(caught.value.response.headers["retry-after"]) >= 1


def test_upstream_garbage_is_a_bad_gateway(client: OpenAI, fake: Fake) -> None:
    fake.control("faults", {"kind": "garbage", "times": 1})
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO)

    assert caught.value.status_code == 502
    assert caught.value.body["type"] == "upstream_error"


def test_upstream_connection_lost_mid_answer_is_retried(client: OpenAI, fake: Fake) -> None:
    fake.drop(1)  # half of the JSON body, then the connection closes
    resp = client.chat.completions.create(model=MODEL, messages=HELLO)

    assert resp.choices[0].message.content == "This is a deterministic fake reply about: hello"
    assert fake.chat_requests() == 2


def test_upstream_failure_before_a_stream_starts_is_a_real_status(client: OpenAI,
                                                                  fake: Fake) -> None:
    fake.fail(503, times=UPSTREAM_RETRIES + 1)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)

    assert caught.value.status_code == 503


def _drop_after_this_is(fake: Fake) -> None:
    """The next stream sends its role chunk, "This" and " is", then the connection breaks.

    The last chunk and the break reach redraft together, and aiohttp then drops the bytes it
    had not handed over yet: " is" may be lost. A pause between chunks keeps the first two.
    """
    fake.control("config", {"chunk_delay": 0.02})
    fake.drop(1, after_chunks=3)


def test_mid_stream_drop_raises_in_the_sdk_after_the_first_chunks(client: OpenAI,
                                                                  fake: Fake) -> None:
    _drop_after_this_is(fake)
    received: list[str] = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in client.chat.completions.create(model=MODEL, messages=HELLO, stream=True):
            received += [c.delta.content or "" for c in chunk.choices]

    assert "".join(received) in ("This", "This is")
    assert "upstream" in caught.value.message
    assert caught.value.body["type"] == "upstream_error"


def test_mid_stream_drop_sends_one_error_event_then_done(passthrough: Server,
                                                         fake: Fake) -> None:
    _drop_after_this_is(fake)
    lines = sse_lines(passthrough, {"model": MODEL, "messages": HELLO, "stream": True})

    events = data_events(lines)
    errors = [e for e in events if isinstance(e, dict) and "error" in e]
    assert len(errors) == 1
    assert events[-2] is errors[0]
    assert events[-1] == "[DONE]"
    assert errors[0]["error"]["code"] == "bad_gateway"
    assert [e["choices"][0]["delta"].get("content") for e in events[:-2]] in (
        ["", "This"], ["", "This", " is"])


@pytest.mark.parametrize("route", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
def test_client_disconnect_cancels_the_upstream_call(passthrough: Server, fake: Fake,
                                                     stream: bool, route: str) -> None:
    fake.hang(1)
    started = time.monotonic()
    with passthrough.client(timeout=0.5) as c, pytest.raises(openai.APITimeoutError):
        if route == "chat":
            c.chat.completions.create(model=MODEL, messages=HELLO, stream=stream)
        else:
            c.responses.create(model=MODEL, input=HELLO[0]["content"], stream=stream)

    stats = fake.wait_for(lambda s: s["disconnects"] == 1 and s["in_flight"] == 0)
    assert stats["disconnects"] == 1
    assert stats["in_flight"] == 0
    # the upstream timeout is 10 s: only the client going away can have ended it this soon
    assert time.monotonic() - started < 5
    assert fake.chat_requests() == 1  # a cancelled call is not retried

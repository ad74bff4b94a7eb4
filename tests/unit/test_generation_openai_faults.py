"""The openai backend when upstreams fail: retries, error mapping, balancing, cancellation."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from bench.fakes.upstream import FakeUpstream, run_in_thread
from generation.balancer import Balancer
from generation.errors import (
    InvalidRequest,
    NotFound,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from generation.openai import OpenAIBackend
from generation.types import ChatParams

USER = [{"role": "user", "content": "Write a haiku"}]


@pytest.fixture(scope="module")
def two_fakes() -> Iterator[tuple[FakeUpstream, FakeUpstream]]:
    with run_in_thread() as (_, first), run_in_thread() as (_, second):
        yield first, second


@pytest.fixture
def fakes(two_fakes: tuple[FakeUpstream, FakeUpstream]) -> tuple[FakeUpstream, FakeUpstream]:
    for fake in two_fakes:
        fake.reset()
        fake.latency = fake.chunk_delay = 0.0
    return two_fakes


@pytest.fixture
def fake(fakes: tuple[FakeUpstream, FakeUpstream]) -> FakeUpstream:
    return fakes[0]


def dead_url() -> str:
    """A loopback port nobody listens on: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
async def make() -> AsyncIterator:
    made: list[OpenAIBackend] = []

    def build(urls: list[str], **kw) -> OpenAIBackend:
        kw.setdefault("retries", 2)
        kw.setdefault("backoff", 0.01)
        backend = OpenAIBackend(urls, model="fake-model", **kw)
        made.append(backend)
        return backend

    yield build
    for backend in made:
        await backend.aclose()


async def test_503_is_retried_until_success(make, fake: FakeUpstream) -> None:
    fake.fail(503, times=2)
    backend = make([fake.base_url])
    completion = await backend.chat(USER, ChatParams())
    assert completion.text.startswith("This is")
    assert fake.chat_requests == 3
    assert backend.stats.retries == 2


async def test_stream_is_retried_before_its_body_starts(make, fake: FakeUpstream) -> None:
    fake.fail(500)
    chunks = [c async for c in make([fake.base_url]).stream(USER, ChatParams())]
    assert chunks[-1].usage is not None
    assert fake.chat_requests == 2


async def test_5xx_after_retries_is_a_bad_gateway(make, fake: FakeUpstream) -> None:
    fake.fail(500, times=3)
    with pytest.raises(UpstreamError) as caught:
        await make([fake.base_url]).chat(USER, ChatParams())
    assert caught.value.status == 502
    assert fake.chat_requests == 3  # one call + two retries

    fake.fail(503, times=3)
    with pytest.raises(UpstreamUnavailable) as unavailable:
        await make([fake.base_url]).chat(USER, ChatParams())
    assert unavailable.value.status == 503


async def test_429_retry_after_is_honoured(make, fake: FakeUpstream) -> None:
    fake.fail(429, retry_after=0.4)
    started = time.perf_counter()
    completion = await make([fake.base_url], backoff=0.0).chat(USER, ChatParams())
    assert time.perf_counter() - started >= 0.4
    assert completion.text
    assert fake.chat_requests == 2


async def test_429_after_retries_passes_through_with_retry_after(make, fake: FakeUpstream) -> None:
    fake.fail(429, times=3, retry_after=0.01, message="slow down")
    with pytest.raises(RateLimited) as caught:
        await make([fake.base_url]).chat(USER, ChatParams())
    assert caught.value.status == 429
    assert caught.value.message == "slow down"
    assert caught.value.headers["Retry-After"] == "1"


async def test_long_retry_after_is_relayed_at_once(make, fake: FakeUpstream) -> None:
    fake.fail(429, retry_after=120)
    started = time.perf_counter()
    with pytest.raises(RateLimited) as caught:
        await make([fake.base_url], max_backoff=5).chat(USER, ChatParams())
    assert time.perf_counter() - started < 1
    assert caught.value.headers["Retry-After"] == "120"
    assert fake.chat_requests == 1


async def test_connect_error_is_503_after_retries(make) -> None:
    calls = []
    backend = make([dead_url()], on_call=lambda *a: calls.append(a))
    with pytest.raises(UpstreamUnavailable) as caught:
        await backend.chat(USER, ChatParams())
    assert caught.value.status == 503
    assert backend.stats.retries == 2
    assert [(ok, kind) for _, ok, kind, _ in calls] == [(False, "unavailable")]
    assert await backend.ready() is False
    with pytest.raises(UpstreamUnavailable):
        await backend.models()


async def test_refusing_upstream_is_avoided(make, fake: FakeUpstream) -> None:
    backend = make([dead_url(), fake.base_url], avoid_seconds=60)
    for _ in range(6):
        await backend.chat(USER, ChatParams())
    assert fake.chat_requests == 6
    assert backend.stats.retries <= 1  # only the first call met the dead one
    assert await backend.ready() is True


async def test_timeout_is_504_and_not_retried(make, fake: FakeUpstream) -> None:
    fake.hang()
    with pytest.raises(UpstreamTimeout) as caught:
        await make([fake.base_url], timeout=0.3).chat(USER, ChatParams())
    assert caught.value.status == 504
    assert fake.chat_requests == 1


@pytest.mark.parametrize(("status", "kind", "type_"), [
    (400, InvalidRequest, "invalid_request_error"),
    (422, InvalidRequest, "invalid_request_error"),
    (404, NotFound, "not_found_error"),
])
async def test_4xx_is_relayed_with_status_message_and_param(make, fake: FakeUpstream, status: int,
                                                            kind: type, type_: str) -> None:
    fake.fail(status, message="temperature must be <= 2", param="temperature",
              code="invalid_value")
    with pytest.raises(kind) as caught:
        await make([fake.base_url]).chat(USER, ChatParams())
    err = caught.value
    assert (err.status, err.type, err.message, err.param, err.code) == (
        status, type_, "temperature must be <= 2", "temperature", "invalid_value")
    assert fake.chat_requests == 1  # a client error is never retried


async def test_drop_mid_stream_is_a_bad_gateway_after_the_first_chunks(make,
                                                                        fake: FakeUpstream) -> None:
    fake.drop(after_chunks=3)
    received = []
    with pytest.raises(UpstreamError) as caught:
        async for chunk in make([fake.base_url]).stream(USER, ChatParams()):
            received.append(chunk)
    assert caught.value.status == 502
    assert len(received) == 3
    assert fake.chat_requests == 1  # the body had started: no retry


async def test_drop_before_a_whole_answer_is_retried(make, fake: FakeUpstream) -> None:
    fake.drop()
    completion = await make([fake.base_url]).chat(USER, ChatParams())
    assert completion.text.startswith("This is")
    assert fake.chat_requests == 2


async def test_least_outstanding_sends_more_to_the_fast_upstream(make, fakes) -> None:
    slow, fast = fakes
    slow.latency = 0.2
    backend = make([slow.base_url, fast.base_url])
    gate = asyncio.Semaphore(4)

    async def one() -> None:
        async with gate:
            await backend.chat(USER, ChatParams())

    await asyncio.gather(*(one() for _ in range(40)))
    assert slow.chat_requests + fast.chat_requests == 40
    assert slow.chat_requests <= 6 < 30 <= fast.chat_requests


async def test_idle_upstreams_share_requests_in_turn(make, fakes) -> None:
    first, second = fakes
    backend = make([first.base_url, second.base_url])
    for _ in range(10):
        await backend.chat(USER, ChatParams())
    assert (first.chat_requests, second.chat_requests) == (5, 5)


async def test_cancelling_the_caller_stops_the_upstream_call(make, fake: FakeUpstream) -> None:
    fake.hang()
    calls = []
    backend = make([fake.base_url], on_call=lambda *a: calls.append(a))
    task = asyncio.create_task(backend.chat(USER, ChatParams()))
    await until(lambda: fake.in_flight == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: fake.disconnects == 1)  # the upstream saw the connection close
    await asyncio.sleep(0.05)
    assert fake.chat_requests == 1 and backend.stats.retries == 0
    assert [(ok, kind) for _, ok, kind, _ in calls] == [(False, "cancelled")]
    assert backend.balancer.upstreams[0].outstanding == 0


async def test_cancelling_a_stream_stops_the_upstream_call(make, fake: FakeUpstream) -> None:
    fake.hang()
    backend = make([fake.base_url])

    async def consume() -> None:
        async for _ in backend.stream(USER, ChatParams()):
            pass

    task = asyncio.create_task(consume())
    await until(lambda: fake.in_flight == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: fake.disconnects == 1)
    assert fake.chat_requests == 1


def test_balancer_falls_back_when_every_upstream_is_avoided() -> None:
    balancer = Balancer(["http://a/v1", "http://b/v1"], avoid_seconds=60)
    a, b = balancer.upstreams
    balancer.avoid(a)
    assert {balancer.acquire().url for _ in range(3)} == {"http://b/v1"}
    balancer.avoid(b)
    picked = balancer.acquire()  # all avoided: still pick, the least busy
    assert picked is a and a.outstanding == 1


async def until(condition, seconds: float = 3.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)

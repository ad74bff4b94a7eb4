from __future__ import annotations

import pytest

from app.http.limits import MemoryLimiter, NoLimiter, RedisLimiter, build_limiter
from generation.errors import RateLimited


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_rate_allows_a_minute_of_requests_then_refuses_with_retry_after():
    clock = Clock()
    limiter = MemoryLimiter(rate_per_minute=6, concurrency=0, clock=clock)
    for _ in range(6):
        await limiter.acquire("k")
    with pytest.raises(RateLimited) as info:
        await limiter.acquire("k")
    assert info.value.status == 429
    # One request's worth of the bucket refills every 10 s.
    assert info.value.retry_after == 10
    assert info.value.headers == {"Retry-After": "10"}
    assert "6 requests per minute" in info.value.message

    clock.now += 4
    with pytest.raises(RateLimited) as info:
        await limiter.acquire("k")
    assert info.value.retry_after == 6

    clock.now += 6
    await limiter.acquire("k")  # one token back
    with pytest.raises(RateLimited):
        await limiter.acquire("k")


async def test_rate_bucket_refills_completely_after_a_minute():
    clock = Clock()
    limiter = MemoryLimiter(rate_per_minute=3, concurrency=0, clock=clock)
    for _ in range(3):
        await limiter.acquire("k")
    clock.now += 60
    for _ in range(3):
        await limiter.acquire("k")
    with pytest.raises(RateLimited):
        await limiter.acquire("k")


async def test_keys_are_limited_independently():
    limiter = MemoryLimiter(rate_per_minute=1, concurrency=1, clock=Clock())
    held = await limiter.acquire("a")
    with pytest.raises(RateLimited):
        await limiter.acquire("a")
    other = await limiter.acquire("b")
    await held.release()
    await other.release()


async def test_concurrency_cap_refuses_with_retry_after_one_second_until_released():
    limiter = MemoryLimiter(rate_per_minute=0, concurrency=2)
    first = await limiter.acquire("k")
    second = await limiter.acquire("k")
    with pytest.raises(RateLimited) as info:
        await limiter.acquire("k")
    assert info.value.retry_after == 1
    assert "at most 2" in info.value.message

    await first.release()
    await first.release()  # a second release must not free another slot
    third = await limiter.acquire("k")
    with pytest.raises(RateLimited):
        await limiter.acquire("k")
    await second.release()
    await third.release()


async def test_permit_is_an_async_context_manager():
    limiter = MemoryLimiter(rate_per_minute=0, concurrency=1)
    async with await limiter.acquire("k"):
        with pytest.raises(RateLimited):
            await limiter.acquire("k")
    async with await limiter.acquire("k"):
        pass


async def test_refusal_for_concurrency_does_not_spend_a_rate_token():
    limiter = MemoryLimiter(rate_per_minute=2, concurrency=1, clock=Clock())
    held = await limiter.acquire("k")
    for _ in range(5):
        with pytest.raises(RateLimited):
            await limiter.acquire("k")
    await held.release()
    await (await limiter.acquire("k")).release()  # the second of two tokens is still there


async def test_refilled_keys_are_forgotten():
    clock = Clock()
    limiter = MemoryLimiter(rate_per_minute=60, concurrency=0, clock=clock)
    for i in range(1000):
        await limiter.acquire(f"old{i}")
    clock.now += 2
    for i in range(100):
        await limiter.acquire(f"new{i}")  # crosses the pruning threshold
    assert len(limiter._tat) < 200


async def test_no_limiter_and_builder():
    assert isinstance(build_limiter(0, 0, redis=None), NoLimiter)
    permit = await NoLimiter().acquire("k")
    async with permit:
        pass
    assert isinstance(build_limiter(10, 0, redis=None), MemoryLimiter)
    assert isinstance(build_limiter(0, 3, redis=None), MemoryLimiter)

    from redis.asyncio import Redis

    client = Redis()  # never connected: building a limiter does no I/O
    try:
        assert isinstance(build_limiter(10, 3, redis=client), RedisLimiter)
        assert isinstance(build_limiter(0, 0, redis=client), NoLimiter)
    finally:
        await client.aclose()


async def test_unreachable_redis_lets_requests_through(caplog):
    import time

    from redis.asyncio import Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff

    # Retries with backoff, as a production client would have: each call waits them out.
    retry = Retry(ExponentialBackoff(cap=0.2, base=0.1), retries=2)
    client = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5, retry=retry)
    limiter = RedisLimiter(client, rate_per_minute=1, concurrency=1)
    try:
        start = time.monotonic()
        for _ in range(20):
            async with await limiter.acquire("k"):
                pass
        # Only the first request paid for the retries; the rest skipped the limiter.
        assert time.monotonic() - start < 1.5
    finally:
        await limiter.aclose()
        await client.aclose()
    warnings = [r for r in caplog.records if "Redis unreachable" in r.getMessage()]
    assert len(warnings) == 1  # throttled, not one per request

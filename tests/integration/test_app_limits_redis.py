"""RedisLimiter against a real Redis: two limiter instances play two API replicas."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from app.http.limits import RedisLimiter
from generation.errors import RateLimited

pytestmark = pytest.mark.redis


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    yield prefix
    client = Redis.from_url(redis_url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture
async def replicas(redis_url: str) -> AsyncIterator[list[Redis]]:
    """One Redis client per simulated replica."""
    clients = [Redis.from_url(redis_url), Redis.from_url(redis_url)]
    yield clients
    for client in clients:
        await client.aclose()


async def test_replicas_share_the_rate_limit(replicas, prefix):
    a = RedisLimiter(replicas[0], rate_per_minute=3, concurrency=0, prefix=prefix)
    b = RedisLimiter(replicas[1], rate_per_minute=3, concurrency=0, prefix=prefix)
    await a.acquire("key1")
    await b.acquire("key1")
    await a.acquire("key1")
    with pytest.raises(RateLimited) as info:
        await b.acquire("key1")
    # The next token comes back 60/3 = 20 s after the first request.
    assert 19 <= info.value.retry_after <= 20
    assert info.value.headers["Retry-After"] == str(info.value.retry_after)
    await b.acquire("key2")  # another API key has its own bucket


async def test_replicas_share_the_concurrency_cap(replicas, prefix):
    a = RedisLimiter(replicas[0], rate_per_minute=0, concurrency=2, prefix=prefix)
    b = RedisLimiter(replicas[1], rate_per_minute=0, concurrency=2, prefix=prefix)
    try:
        held_a = await a.acquire("k")
        held_b = await b.acquire("k")
        for limiter in (a, b):
            with pytest.raises(RateLimited) as info:
                await limiter.acquire("k")
            assert info.value.retry_after == 1
        await held_a.release()
        async with await b.acquire("k"):
            with pytest.raises(RateLimited):
                await a.acquire("k")
        await held_b.release()
        async with await a.acquire("k"), await a.acquire("k"):
            pass
    finally:
        await a.aclose()
        await b.aclose()


async def test_permit_of_a_crashed_replica_expires(redis_url, replicas, prefix):
    crashed_client = Redis.from_url(redis_url)
    crashed = RedisLimiter(crashed_client, 0, concurrency=2, prefix=prefix, lease_seconds=0.3)
    survivor = RedisLimiter(replicas[1], 0, concurrency=2, prefix=prefix, lease_seconds=0.3)
    try:
        # The survivor's live permit keeps the shared key alive, so only the crashed
        # permit's own expiry can free its slot.
        live = await survivor.acquire("k")
        await crashed.acquire("k")
        # The replica dies: no release, no more renewals.
        crashed._renewer.cancel()
        await crashed_client.aclose()
        with pytest.raises(RateLimited):
            await survivor.acquire("k")
        await asyncio.sleep(0.6)
        async with await survivor.acquire("k"):
            pass
        await live.release()
    finally:
        await survivor.aclose()


async def test_live_permit_is_renewed_past_its_lease(replicas, prefix):
    holder = RedisLimiter(replicas[0], 0, concurrency=1, prefix=prefix, lease_seconds=0.3)
    other = RedisLimiter(replicas[1], 0, concurrency=1, prefix=prefix, lease_seconds=0.3)
    try:
        permit = await holder.acquire("k")
        await asyncio.sleep(1.0)  # more than three leases
        with pytest.raises(RateLimited):
            await other.acquire("k")
        await permit.release()
        async with await other.acquire("k"):
            pass
    finally:
        await holder.aclose()
        await other.aclose()


async def test_aclose_hands_back_held_permits(replicas, prefix):
    leaving = RedisLimiter(replicas[0], 0, concurrency=1, prefix=prefix)
    staying = RedisLimiter(replicas[1], 0, concurrency=1, prefix=prefix)
    await leaving.acquire("k")
    await leaving.aclose()  # graceful shutdown with a request still counted
    async with await staying.acquire("k"):
        pass
    await staying.aclose()

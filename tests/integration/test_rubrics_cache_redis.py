"""The Redis checklist cache against a real Redis."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as redis

from rubrics.cache import RedisChecklistCache
from rubrics.checklist import checklist_id
from rubrics.packs import PackLibrary

pytestmark = pytest.mark.redis


@pytest.fixture
async def client(redis_url):
    client = redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_round_trip_ttl_and_hit_counting(client):
    prefix = f"test:{uuid.uuid4().hex}:"
    results: list[bool] = []
    cache = RedisChecklistCache(client, ttl=60, prefix=prefix, on_result=results.append)
    checklist = PackLibrary().generic("zh")
    assert await cache.get("k") is None
    await cache.put("k", checklist)
    hit = await cache.get("k")
    assert hit.source == "cache" and hit.language == "zh"
    assert checklist_id(hit) == checklist_id(checklist)
    assert 0 < await client.ttl(prefix + "k") <= 60
    # A second cache object (another replica) sees the same entry.
    assert await RedisChecklistCache(client, prefix=prefix).get("k") == hit
    assert results == [False, True]
    await client.delete(prefix + "k")


async def test_unreadable_entries_are_misses_and_dropped(client):
    prefix = f"test:{uuid.uuid4().hex}:"
    await client.set(prefix + "k", '{"dimensions": "garbage"}', ex=60)
    cache = RedisChecklistCache(client, prefix=prefix)
    assert await cache.get("k") is None
    assert await client.exists(prefix + "k") == 0


async def test_redis_down_is_a_miss_not_an_error():
    results: list[bool] = []
    down = redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    cache = RedisChecklistCache(down, on_result=results.append)
    await cache.put("k", PackLibrary().generic("en"))
    assert await cache.get("k") is None and results == [False]
    await down.aclose()

"""Checklists that carry checks survive the places they are kept — the Redis checklist cache
and the SQL checklist store (SQLite and PostgreSQL) — with their checks and ids intact, and
still run on a text after the round trip."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as redis

from rubrics.cache import RedisChecklistCache
from rubrics.checklist import checklist_id, from_json
from rubrics.checks import Check, run_checks
from rubrics.packs import PackLibrary
from store import Store
from store.records import ChecklistRecord

CHECKS = (
    Check(kind="char_count", params={"relation": "between", "n": 80, "upper": 120},
          quote="100字左右"),
    Check(kind="ends_with", params={"phrase": "欢迎选购！"}, quote="以“欢迎选购！”结尾",
          source="agent"),
)


def checklist():
    return PackLibrary().generic("zh").model_copy(update={"checks": CHECKS})


@pytest.mark.redis
async def test_the_redis_cache_keeps_checks(redis_url):
    client = redis.from_url(redis_url)
    prefix = f"test:{uuid.uuid4().hex}:"
    try:
        cache = RedisChecklistCache(client, ttl=60, prefix=prefix)
        await cache.put("k", checklist())
        hit = await cache.get("k")
        assert hit is not None and hit.checks == CHECKS
        assert checklist_id(hit) == checklist_id(checklist())
        assert checklist_id(hit) != checklist_id(PackLibrary().generic("zh"))
    finally:
        await client.delete(prefix + "k")
        await client.aclose()


async def test_the_checklist_store_keeps_checks(database_url):
    store = await Store.open(database_url)
    try:
        original = checklist()
        cid = checklist_id(original)[:32]
        await store.checklists.add(ChecklistRecord(
            namespace="ns", query_hash="q", model="m", source="generated",
            body=original.model_dump(mode="json"), id=cid))
        record = await store.checklists.get(cid)
        assert record is not None
        loaded = from_json(record.body)
        assert loaded.checks == CHECKS
        outcomes = run_checks("这款水壶烧水快。欢迎选购！", loaded.checks)
        assert [o.passed for o in outcomes] == [False, True]
    finally:
        await store.close()

"""Responses stored behind the answer are visible to every read that follows: in the same
process (the read waits for the pending write) and from another replica sharing the database
(a freshly minted id is looked for again); real SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time

import pytest

from app.http.metrics import Metrics
from app.openai.responses.stored import StoredResponses, response_id
from generation.errors import NotFound
from store import ResponseRecord, Store
from store.group_commit import ResponseWriter


def record(rid: str, namespace: str = "acme") -> ResponseRecord:
    item = {"id": f"msg_{rid}", "type": "message", "role": "user", "status": "completed",
            "content": [{"type": "input_text", "text": "hi"}]}
    return ResponseRecord(id=rid, namespace=namespace, model="m", status="completed",
                          body={"id": rid, "object": "response"}, input_items=(item,))


def replica(store: Store, window: float, recent: float = 2.0) -> StoredResponses:
    return StoredResponses(store.responses, ResponseWriter(store.responses, window=window),
                           Metrics(), recent=recent)


async def test_a_read_in_the_same_process_waits_for_the_pending_write(
        migrated_store: Store) -> None:
    stored = replica(migrated_store, window=0.3)
    rid = response_id()
    stored.keep(record(rid))
    assert await migrated_store.responses.get(rid, "acme") is None  # still gathering

    started = time.monotonic()
    assert (await stored.get(rid, "acme"))["id"] == rid
    assert time.monotonic() - started < 2
    assert await stored.find_item(f"msg_{rid}", "acme") is not None
    with pytest.raises(NotFound):
        await stored.get(rid, "other")  # another namespace: not found, at once
    await stored.writer.aclose()


async def test_another_replica_finds_a_response_still_being_written(
        migrated_store: Store) -> None:
    writer_side, reader_side = replica(migrated_store, window=0.3), replica(migrated_store, 0.0)
    rid = response_id()
    writer_side.keep(record(rid))

    found = await reader_side.find(rid, "acme", items=True)
    assert found.input_items[0]["id"] == f"msg_{rid}"
    await writer_side.writer.aclose()


async def test_a_missing_id_is_a_404_at_once_unless_it_was_just_minted(
        migrated_store: Store) -> None:
    stored = replica(migrated_store, window=0.0, recent=0.3)
    for rid in ("resp_nope", "resp_" + "0" * 32):
        started = time.monotonic()
        with pytest.raises(NotFound) as caught:
            await stored.find(rid, "acme", param="previous_response_id")
        assert caught.value.param == "previous_response_id"
        assert time.monotonic() - started < 0.2

    fresh = response_id()  # e.g. answered with store: false, which is never written
    started = time.monotonic()
    with pytest.raises(NotFound):
        await stored.find(fresh, "acme")
    assert 0.1 < time.monotonic() - started < 2


async def test_a_failed_write_is_counted_and_the_response_is_not_found(
        migrated_store: Store) -> None:
    stored = replica(migrated_store, window=0.0, recent=0.1)
    taken = response_id()
    await migrated_store.responses.save(record(taken))
    stored.keep(record(taken))  # the same id again: the write fails
    await asyncio.sleep(0)
    await stored.writer.aclose()
    await asyncio.sleep(0)
    assert stored.metrics.errors.labels("response_store")._value.get() == 1

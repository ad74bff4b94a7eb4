"""Stored Responses API responses on real SQLite and PostgreSQL: namespaces, items in order,
pagination, item lookup, deletion, the group commit, and migration 0003 up and down."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import inspect, text

from store import LoopRecord, ResponseRecord, Store, make_engine
from store.errors import Conflict, InvalidCursor
from store.group_commit import ResponseWriter
from store.migrate import downgrade, upgrade

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


def message(mid: str, role: str, text_: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"id": mid, "type": "message", "role": role, "status": "completed",
            "content": [{"type": kind, "text": text_}]}


def response(rid: str = "resp_1", namespace: str = "acme", inputs: int = 3,
             **changes) -> ResponseRecord:
    fields = {"id": rid, "namespace": namespace, "model": "m", "status": "completed",
              "body": {"id": rid, "object": "response", "output": []},
              "input_items": tuple(message(f"{rid}_in{i}", "user", f"turn {i}")
                                   for i in range(inputs)),
              "output_items": (message(f"{rid}_out", "assistant", "answer"),),
              "created_at": T0, **changes}
    return ResponseRecord(**fields)  # type: ignore[arg-type]


async def test_a_response_reads_back_whole_only_in_its_namespace(migrated_store: Store) -> None:
    repo = migrated_store.responses
    saved = await repo.save(response(previous_response_id="resp_0"))

    assert await repo.get("resp_1", "acme", items=True) == saved
    bare = await repo.get("resp_1", "acme")
    assert bare is not None and bare.body == saved.body and bare.input_items == ()
    assert await repo.get("resp_1", "other") is None
    assert await repo.input_items("resp_1", "other") is None
    assert await repo.find_item("resp_1_out", "other") is None
    assert await repo.delete("resp_1", "other") is False
    assert await repo.get("resp_1", "acme") is not None


async def test_input_items_page_in_both_orders(migrated_store: Store) -> None:
    repo = migrated_store.responses
    await repo.save(response(inputs=5))

    page, more = await repo.input_items("resp_1", "acme", limit=2, order="asc")
    assert [i["id"] for i in page] == ["resp_1_in0", "resp_1_in1"] and more
    page, more = await repo.input_items("resp_1", "acme", limit=2, order="asc",
                                        after="resp_1_in3")
    assert [i["id"] for i in page] == ["resp_1_in4"] and not more
    page, more = await repo.input_items("resp_1", "acme", limit=3)  # newest first by default
    assert [i["id"] for i in page] == ["resp_1_in4", "resp_1_in3", "resp_1_in2"] and more
    page, more = await repo.input_items("resp_1", "acme", limit=3, after="resp_1_in2")
    assert [i["id"] for i in page] == ["resp_1_in1", "resp_1_in0"] and not more
    with pytest.raises(InvalidCursor):  # output items are not input items
        await repo.input_items("resp_1", "acme", after="resp_1_out")


async def test_items_are_found_by_id_and_deleted_with_their_response(
    migrated_store: Store,
) -> None:
    repo = migrated_store.responses
    await repo.save(response())

    assert await repo.find_item("resp_1_out", "acme") == message("resp_1_out", "assistant",
                                                                 "answer")
    assert await repo.delete("resp_1", "acme") is True
    assert await repo.get("resp_1", "acme") is None
    assert await repo.find_item("resp_1_out", "acme") is None
    async with migrated_store.engine.connect() as conn:
        left = (await conn.execute(text("SELECT count(*) FROM response_items"))).scalar()
    assert left == 0


async def test_a_duplicate_id_is_a_conflict_and_writes_nothing(migrated_store: Store) -> None:
    repo = migrated_store.responses
    await repo.save(response())
    with pytest.raises(Conflict):
        await repo.save_many([response("resp_2"), response("resp_1", namespace="other")])
    assert await repo.get("resp_2", "acme") is None


async def test_the_group_commit_writes_concurrent_responses_and_isolates_a_bad_one(
    migrated_store: Store,
) -> None:
    repo = migrated_store.responses
    await repo.save(response("resp_taken"))
    writer = ResponseWriter(repo)
    good = [response(f"resp_{i}") for i in range(10)]
    results = await asyncio.gather(*(writer.save(r) for r in [*good, response("resp_taken")]),
                                   return_exceptions=True)
    assert results[:10] == [None] * 10 and isinstance(results[10], Conflict)
    for r in good:
        assert await repo.get(r.id, "acme", items=True) == r


def test_records_refuse_items_without_ids_and_unknown_statuses() -> None:
    with pytest.raises(ValueError, match="id"):
        response(input_items=({"type": "message"},))
    with pytest.raises(ValueError, match="status"):
        response(status="done")


async def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


async def test_migration_0003_adds_the_response_tables_and_removes_them_again(
    database_url: str,
) -> None:
    # The loop is written by today's model, then the schema goes back to 0002 and up to 0003.
    await upgrade(database_url)
    engine = make_engine(database_url)
    try:
        loop = await Store(engine).loops.save(
            LoopRecord("acme", "m", "scripted", {"messages": []})
        )
        await downgrade(database_url, "0002")
        assert not {"responses", "response_items"} & await _tables(database_url)

        await upgrade(database_url, "0003")
        store = Store(engine)
        assert {"responses", "response_items"} <= await _tables(database_url)
        await store.responses.save(response())
        assert await store.responses.find_item("resp_1_in0", "acme") is not None

        await downgrade(database_url, "0002")
        assert not {"responses", "response_items"} & await _tables(database_url)
        async with engine.connect() as conn:  # the older tables keep their rows
            ids = (await conn.execute(text("SELECT id FROM loops"))).scalars().all()
        assert ids == [loop.id]
    finally:
        await engine.dispose()

"""Experiences and checklists on real SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from store import (
    ChecklistRecord,
    Conflict,
    ExperienceRecord,
    ExperienceRepository,
    LoopRecord,
    Store,
)

T0 = datetime(2025, 3, 1, 9, 30, 0, 654321, tzinfo=UTC)


def experience(**changes: object) -> ExperienceRecord:
    fields: dict[str, object] = {
        "namespace": "acme",
        "key": "genre: proposal; audience: city council",
        "text": "Lead with the budget figure; councils skim past the background.",
        "embedding_model": "all-MiniLM-L6-v2",
        "score_trajectory": (0.42, 0.61, 0.88),
        "created_at": T0,
    }
    fields.update(changes)
    return ExperienceRecord(**fields)  # type: ignore[arg-type]


async def test_an_experience_reads_back_exactly(migrated_store: Store) -> None:
    record = await migrated_store.experiences.add(experience())

    loaded = await migrated_store.experiences.get(record.id)

    assert loaded == record
    assert loaded is not None
    assert loaded.updated_at == T0
    assert loaded.score_trajectory == (0.42, 0.61, 0.88)
    assert loaded.mean_gain is None


async def test_update_changes_only_the_given_fields_and_stamps_updated_at(
    migrated_store: Store,
) -> None:
    later = T0 + timedelta(hours=5)
    repo = ExperienceRepository(migrated_store.sessions, clock=lambda: later)
    record = await repo.add(experience())

    updated = await repo.update(record.id, text="Open with the ask.", score_trajectory=[0.5, 0.9])

    expected = replace(
        record, text="Open with the ask.", score_trajectory=(0.5, 0.9), updated_at=later
    )
    assert updated == expected
    assert await repo.get(record.id) == expected
    assert await repo.update(record.id, namespace="globex", text="hijack") is None
    assert await repo.update("missing", text="x") is None
    assert (await repo.get(record.id)) == expected


async def test_delete_respects_namespaces(migrated_store: Store) -> None:
    record = await migrated_store.experiences.add(experience())

    assert await migrated_store.experiences.delete(record.id, namespace="globex") is False
    assert await migrated_store.experiences.get(record.id) == record
    assert await migrated_store.experiences.delete(record.id, namespace="acme") is True
    assert await migrated_store.experiences.get(record.id) is None
    assert await migrated_store.experiences.delete(record.id) is False


async def test_get_many_returns_index_order_and_skips_unknown_or_foreign(
    migrated_store: Store,
) -> None:
    a, b = experience(), experience()
    c = experience(namespace="globex")
    await migrated_store.experiences.add_many([a, b, c])

    found = await migrated_store.experiences.get_many([b.id, "missing", c.id, a.id], "acme")

    assert [e.id for e in found] == [b.id, a.id]


async def test_counters_accumulate_including_concurrent_increments(migrated_store: Store) -> None:
    repo = migrated_store.experiences
    a = await repo.add(experience())
    b = await repo.add(experience())

    assert await repo.increment([a.id, b.id, "missing"], recalled=1) == 2
    await asyncio.gather(*(repo.increment([a.id], recalled=1) for _ in range(5)))
    await repo.increment([a.id], selected=1, gain=0.25)
    await repo.increment([a.id], selected=1, gain=-0.05)

    loaded_a, loaded_b = await repo.get_many([a.id, b.id])
    assert (loaded_a.recalled_count, loaded_a.selected_count) == (6, 2)
    assert loaded_a.gain_count == 2
    assert loaded_a.mean_gain == pytest.approx(0.10)
    assert (loaded_b.recalled_count, loaded_b.selected_count, loaded_b.gain_count) == (1, 0, 0)
    # Counting use is not editing: updated_at stays.
    assert loaded_a.updated_at == T0


async def test_an_unknown_source_loop_is_refused_and_nothing_is_added(
    migrated_store: Store,
) -> None:
    good = experience()
    bad = experience(source_loop_id="no-such-loop")

    with pytest.raises(Conflict):
        await migrated_store.experiences.add_many([good, bad])

    assert await migrated_store.experiences.count() == 0


async def test_deleting_the_source_loop_keeps_the_experience(migrated_store: Store) -> None:
    loop = await migrated_store.loops.save(LoopRecord("acme", "m", "scripted", {}))
    record = await migrated_store.experiences.add(experience(source_loop_id=loop.id))

    await migrated_store.loops.delete(loop.id)

    kept = await migrated_store.experiences.get(record.id)
    assert kept is not None
    assert kept.source_loop_id is None
    assert kept.text == record.text


async def test_list_filters_and_pages(migrated_store: Store) -> None:
    repo = migrated_store.experiences
    loop = await migrated_store.loops.save(LoopRecord("acme", "m", "scripted", {}))
    records = [
        experience(created_at=T0 + timedelta(minutes=i), text=f"tip {i}", key=f"genre {i % 2}")
        for i in range(5)
    ]
    records.append(
        experience(
            created_at=T0 + timedelta(minutes=9),
            key="Legal memo",
            text="Cite 100% of the clauses",
            embedding_model="bge-m3",
            source_loop_id=loop.id,
        )
    )
    records.append(experience(namespace="globex", created_at=T0 + timedelta(minutes=10)))
    await repo.add_many(records)

    async def ids(**filters: object) -> list[str]:
        items, _ = await repo.list(**filters)  # type: ignore[arg-type]
        return [e.id for e in items]

    newest_first = [r.id for r in sorted(records, key=lambda r: r.created_at, reverse=True)]
    assert await ids() == newest_first
    assert await ids(namespace="acme") == newest_first[1:]
    assert await ids(contains="LEGAL") == [records[5].id]  # key, case-insensitive
    assert await ids(contains="100%") == [records[5].id]  # text; % is literal
    assert await ids(contains="genre 1") == [records[3].id, records[1].id]
    assert await ids(embedding_model="bge-m3") == [records[5].id]
    assert await ids(source_loop_id=loop.id) == [records[5].id]
    assert await ids(since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=3)) == [
        records[2].id,
        records[1].id,
    ]
    assert await repo.count() == 7
    assert await repo.count("acme") == 6

    seen: list[str] = []
    cursor = None
    while True:
        page = await repo.list(namespace="acme", limit=4, cursor=cursor)
        seen += [e.id for e in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == newest_first[1:]


async def test_all_for_index_yields_every_experience_once(migrated_store: Store) -> None:
    records = [experience(namespace="acme" if i % 3 else "globex") for i in range(7)]
    await migrated_store.experiences.add_many(records)

    entries = [e async for e in migrated_store.experiences.all_for_index(batch_size=3)]
    acme = [e async for e in migrated_store.experiences.all_for_index("acme", batch_size=2)]

    assert sorted(e.id for e in entries) == sorted(r.id for r in records)
    assert len({e.id for e in entries}) == 7
    assert {e.id for e in acme} == {r.id for r in records if r.namespace == "acme"}
    first = next(e for e in entries if e.id == records[0].id)
    assert (first.namespace, first.embedding_model, first.key, first.text) == (
        "globex",
        records[0].embedding_model,
        records[0].key,
        records[0].text,
    )


async def test_checklists_are_found_by_query_hash_newest_first(migrated_store: Store) -> None:
    repo = migrated_store.checklists
    body = {"dimensions": [{"name": "clarity", "bands": [{"low": 1, "high": 2}]}]}
    old = await repo.add(ChecklistRecord("acme", "h1", "judge-a", "generated", body, created_at=T0))
    new = await repo.add(
        ChecklistRecord(
            "acme", "h1", "judge-a", "generated", {"v": 2}, created_at=T0 + timedelta(1)
        )
    )
    other_model = await repo.add(ChecklistRecord("acme", "h1", "judge-b", "user", body))

    assert await repo.find("acme", "h1", "judge-a") == new
    assert await repo.find("acme", "h1") == other_model
    assert await repo.find("globex", "h1") is None
    assert await repo.get(old.id) == old
    assert await repo.get(old.id, namespace="globex") is None
    items, cursor = await repo.list("acme", limit=2)
    assert [c.id for c in items] == [other_model.id, new.id]
    assert cursor is not None
    assert await repo.delete(new.id) is True
    assert await repo.find("acme", "h1", "judge-a") == old

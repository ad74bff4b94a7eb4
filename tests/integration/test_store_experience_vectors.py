"""Stored key vectors and the merge counter of experiences, on real SQLite and PostgreSQL."""

from __future__ import annotations

import struct
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from store import ExperienceRecord, Store, make_engine
from store.migrate import downgrade, upgrade

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


def vector(*values: float) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


def experience(key: str = "genre: proposal; audience: council", **changes) -> ExperienceRecord:
    fields = {"namespace": "acme", "key": key, "text": "Lead with the budget.",
              "embedding_model": "minilm", "created_at": T0, **changes}
    return ExperienceRecord(**fields)  # type: ignore[arg-type]


async def vectors_of(store: Store) -> dict[str, tuple[str, bytes | None]]:
    return {e.id: (e.embedding_model, e.embedding)
            async for e in store.experiences.all_for_index(batch_size=2, with_embeddings=True)}


async def test_a_stored_vector_reads_back_only_for_the_index(migrated_store: Store) -> None:
    repo = migrated_store.experiences
    record = await repo.add(experience(), embedding=vector(0.6, 0.8))
    bare = await repo.add(experience("genre: memo"))

    assert await vectors_of(migrated_store) == {record.id: ("minilm", vector(0.6, 0.8)),
                                                 bare.id: ("minilm", None)}
    # Ordinary reads and listings neither carry nor need the vector.
    assert await repo.get(record.id) == record
    plain = [e async for e in repo.all_for_index()]
    assert {e.embedding for e in plain} == {None}


async def test_editing_the_key_clears_a_vector_unless_a_new_one_comes_along(
    migrated_store: Store,
) -> None:
    repo = migrated_store.experiences
    record = await repo.add(experience(), embedding=vector(1.0, 0.0))

    await repo.update(record.id, text="Say the ask first.", key=record.key,
                      embedding_model="minilm")
    assert (await vectors_of(migrated_store))[record.id] == ("minilm", vector(1.0, 0.0))
    await repo.update(record.id, key="genre: memo; audience: staff",
                      embedding=vector(0.0, 1.0))
    assert (await vectors_of(migrated_store))[record.id] == ("minilm", vector(0.0, 1.0))
    await repo.update(record.id, key="genre: speech")
    assert (await vectors_of(migrated_store))[record.id] == ("minilm", None)


async def test_set_embeddings_in_bulk_skips_rows_whose_key_changed(migrated_store: Store) -> None:
    repo = migrated_store.experiences
    records = await repo.add_many([experience(f"key {i}") for i in range(3)])
    await repo.update(records[2].id, key="edited meanwhile")

    await repo.set_embeddings(
        [(r.id, "bge-m3", vector(float(i), 1.0)) for i, r in enumerate(records)],
        keys=[r.key for r in records])
    await repo.set_embeddings([("missing", "bge-m3", vector(1.0))])

    stored = await vectors_of(migrated_store)
    assert stored[records[0].id] == ("bge-m3", vector(0.0, 1.0))
    assert stored[records[1].id] == ("bge-m3", vector(1.0, 1.0))
    assert stored[records[2].id] == ("minilm", None)
    # Derived data, not an edit.
    assert (await repo.get(records[0].id)).updated_at == T0
    with pytest.raises(ValueError):
        await repo.set_embeddings([(records[0].id, "m", b"\x00\x01\x02")])


async def test_set_embedding_model_relabels_and_drops_vectors_of_another_model(
    migrated_store: Store,
) -> None:
    repo = migrated_store.experiences
    old, same = await repo.add_many(
        [experience("a"), experience("b", embedding_model="bge-m3")],
        [vector(1.0), vector(2.0)])

    assert await repo.set_embedding_model([old.id, same.id, old.id, "missing"], "bge-m3") == 2

    assert await vectors_of(migrated_store) == {old.id: ("bge-m3", None),
                                                 same.id: ("bge-m3", vector(2.0))}
    assert (await repo.get(old.id)).embedding_model == "bge-m3"


async def test_merges_are_counted(migrated_store: Store) -> None:
    repo = migrated_store.experiences
    record = await repo.add(experience())

    await repo.increment([record.id], merged=1, gain=0.2)
    await repo.increment([record.id], merged=1)

    loaded = await repo.get(record.id)
    assert (loaded.merged_count, loaded.gain_count, loaded.recalled_count) == (2, 1, 0)


async def test_upgrading_from_0001_keeps_rows_and_starts_merges_at_zero(
    database_url: str,
) -> None:
    await upgrade(database_url, "0001")
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(
                "INSERT INTO experiences (id, namespace, key, text, score_trajectory, "
                "embedding_model, created_at, updated_at) VALUES ('e1', 'acme', 'k', 't', "
                "'[0.5, 0.7]', 'minilm', :at, :at)"), {"at": T0})
        await upgrade(database_url)
        store = Store(engine)
        loaded = await store.experiences.get("e1")
        assert loaded is not None and loaded.merged_count == 0
        assert await vectors_of(store) == {"e1": ("minilm", None)}
        await store.experiences.set_embeddings([("e1", "minilm", vector(1.0, 2.0))])

        await downgrade(database_url, "0001")
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT id, key FROM experiences"))).all()
        assert [tuple(r) for r in rows] == [("e1", "k")]
    finally:
        await engine.dispose()

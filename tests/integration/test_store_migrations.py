"""Migrations, engines and readiness on real SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, inspect, text

from store import LoopRecord, Store, make_engine, ping
from store.migrate import current, current_revision, downgrade, head, upgrade
from store.models import Base

TABLES = {"loops", "candidates", "checklists", "experiences", "responses", "response_items"}


async def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda sync: inspect(sync).get_table_names())
    finally:
        await engine.dispose()
    return set(names) - {"alembic_version"}


async def _schema_diff(url: str, metadata: MetaData) -> list:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(sync, opts={"compare_type": True}), metadata
                )
            )
    finally:
        await engine.dispose()


async def test_upgrade_downgrade_upgrade_round_trip(database_url: str) -> None:
    assert await current_revision(database_url) is None

    await upgrade(database_url)
    assert await current_revision(database_url) == head()
    assert await _tables(database_url) == TABLES

    await downgrade(database_url, "base")
    assert await current_revision(database_url) is None
    assert await _tables(database_url) == set()

    await upgrade(database_url)
    assert await _tables(database_url) == TABLES
    store = Store(make_engine(database_url))
    try:
        saved = await store.loops.save(LoopRecord("ns", "m", "scripted", {"messages": []}))
        assert await store.loops.get(saved.id) == saved
    finally:
        await store.close()


async def test_upgrading_an_up_to_date_database_changes_nothing(database_url: str) -> None:
    await upgrade(database_url)
    await upgrade(database_url)
    assert await current_revision(database_url) == head()


async def test_concurrent_start_ups_migrate_once_without_errors(database_url: str) -> None:
    # Several replicas or workers starting at once each call upgrade().
    await asyncio.gather(*(upgrade(database_url) for _ in range(3)))
    assert await current_revision(database_url) == head()
    assert await _tables(database_url) == TABLES


async def test_a_new_sqlite_file_waits_for_a_writer_before_switching_to_wal(
    tmp_path: Path,
) -> None:
    # On a new file SQLite refuses the switch to WAL at once, busy handler or not, while
    # another connection holds the write lock: the engine must wait for it, not fail.
    path = tmp_path / "new.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE t (x INTEGER)")
    engine = make_engine(f"sqlite+aiosqlite:///{path}")

    async def connect() -> str:
        async with engine.connect() as conn:
            return (await conn.execute(text("PRAGMA journal_mode"))).scalar_one()

    try:
        waiting = asyncio.create_task(connect())
        await asyncio.sleep(0.3)
        assert not waiting.done()
        writer.execute("COMMIT")
        assert await asyncio.wait_for(waiting, 10) == "wal"
    finally:
        writer.close()
        await engine.dispose()


async def test_models_and_migrations_describe_the_same_schema(database_url: str) -> None:
    await upgrade(database_url)
    assert await _schema_diff(database_url, Base.metadata) == []
    # The comparison does see the schema: against no models, every table is reported extra.
    removed = {
        d[1].name for d in await _schema_diff(database_url, MetaData()) if d[0] == "remove_table"
    }
    assert removed == TABLES


def test_current_for_synchronous_callers(sqlite_url: str) -> None:
    assert current(sqlite_url) is None
    asyncio.run(upgrade(sqlite_url))
    assert current(sqlite_url) == head()


async def test_sqlite_engine_creates_the_directory_and_enables_wal_and_foreign_keys(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nested" / "dir" / "redraft.db"
    engine = make_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
    finally:
        await engine.dispose()
    assert path.exists()


async def test_in_memory_sqlite_store_keeps_its_schema_across_sessions() -> None:
    store = await Store.open("sqlite+aiosqlite://")
    try:
        loop = await store.loops.save(LoopRecord("ns", "m", "scripted", {}))
        assert (await store.loops.get(loop.id)) == loop
    finally:
        await store.close()


async def test_ping_reports_reachable_and_unreachable_databases(sqlite_url: str) -> None:
    good = make_engine(sqlite_url)
    bad = make_engine("postgresql+asyncpg://postgres@127.0.0.1:1/nowhere")
    try:
        assert await ping(good) is True
        assert await ping(bad) is False
    finally:
        await good.dispose()
        await bad.dispose()


async def test_an_unknown_revision_is_refused_and_nothing_is_created(sqlite_url: str) -> None:
    with pytest.raises(Exception, match="no_such_revision"):
        await upgrade(sqlite_url, "no_such_revision")
    assert await current_revision(sqlite_url) is None
    assert await _tables(sqlite_url) == set()


@pytest.mark.postgres
@pytest.mark.parametrize("driver", ["asyncpg", "psycopg"])
async def test_a_search_path_in_the_url_puts_tables_in_that_schema(
    postgres_schema_url: str, driver: str
) -> None:
    pytest.importorskip(driver)  # both come with the `postgres` extra
    url = postgres_schema_url.replace("+asyncpg", f"+{driver}")
    schema = url.rsplit("%3D", 1)[1]

    await upgrade(url)

    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT current_schema()"))).scalar() == schema
            placed = await conn.execute(
                text(
                    "SELECT table_schema FROM information_schema.tables WHERE table_name = 'loops'"
                )
            )
            assert placed.scalars().all() == [schema]
    finally:
        await engine.dispose()


@pytest.mark.postgres
async def test_a_plain_postgres_url_migrates_its_default_schema(postgres_database_url: str) -> None:
    await upgrade(postgres_database_url)

    assert await current_revision(postgres_database_url) == head()
    assert await _tables(postgres_database_url) == TABLES

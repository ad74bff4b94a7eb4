"""Apply Alembic migrations from code: at app start-up and from `redraft db upgrade`.

No alembic.ini is needed; the script location is the `migrations/` folder installed next to
this package. A root alembic.ini exists only so that plain `alembic upgrade head` also works.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import NullPool

from store.db import SQLITE_BEGIN, SQLITE_MIGRATION_BUSY_TIMEOUT_MS, is_memory, make_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
# Replicas (or workers) starting together would otherwise race to create the same tables;
# on SQLite, BEGIN IMMEDIATE serialises them the same way.
_PG_LOCK_KEY = 0x7265_6472_6166_74  # "redraft"

T = TypeVar("T")
Target = str | URL | AsyncEngine


def alembic_config(url: str | URL | None = None) -> Config:
    """An in-memory Alembic config pointing at our migrations (and at `url`, if given)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        rendered = url.render_as_string(hide_password=False) if isinstance(url, URL) else url
        config.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return config


def head() -> str | None:
    """The newest revision the code knows about."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _migration_engine(target: Target) -> AsyncEngine:
    """An engine of its own unless `target` is one that cannot be reopened (in-memory SQLite).

    A SQLite file gets a connection that waits minutes for the write lock, not the app's
    seconds: another replica may be copying a table under it.
    """
    if isinstance(target, AsyncEngine):
        if target.dialect.name != "sqlite" or is_memory(target.url):
            return target
        target = target.url
    return make_engine(
        target, poolclass=NullPool, sqlite_busy_timeout_ms=SQLITE_MIGRATION_BUSY_TIMEOUT_MS
    )


async def _in_transaction(target: Target, work: Callable[[Connection], T], lock: bool) -> T:
    """Run sync Alembic `work` on one connection inside one transaction."""
    engine = _migration_engine(target)
    try:
        async with engine.connect() as conn:
            if lock:
                await conn.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})
            async with conn.begin():
                if lock and conn.dialect.name == "postgresql":
                    lock_sql = text("SELECT pg_advisory_xact_lock(:key)")
                    await conn.execute(lock_sql, {"key": _PG_LOCK_KEY})
                return await conn.run_sync(work)
    finally:
        if engine is not target:
            await engine.dispose()


def _command(action: Callable[..., Any], revision: str) -> Callable[[Connection], None]:
    def work(connection: Connection) -> None:
        config = alembic_config()
        # env.py sees this connection and runs on it instead of opening its own.
        config.attributes["connection"] = connection
        action(config, revision)

    return work


async def upgrade(url: Target, revision: str = "head") -> None:
    """Migrate the database at `url` (or through an existing engine) up to `revision`."""
    await _in_transaction(url, _command(command.upgrade, revision), lock=True)


async def downgrade(url: Target, revision: str) -> None:
    """Migrate down to `revision` ("base" removes every table)."""
    await _in_transaction(url, _command(command.downgrade, revision), lock=True)


async def current_revision(url: Target) -> str | None:
    """The revision the database is at; None for a database never migrated."""

    def work(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    return await _in_transaction(url, work, lock=False)


def current(url: str | URL) -> str | None:
    """`current_revision` for synchronous callers (the CLI); not for use inside a running loop."""
    return asyncio.run(current_revision(url))

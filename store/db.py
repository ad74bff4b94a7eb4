"""Engines and sessions. Built by the app's lifespan from settings; nothing here is global."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.pool import StaticPool

log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 5000
# Start-up migrations wait longer: another replica may be copying a table under the lock.
SQLITE_MIGRATION_BUSY_TIMEOUT_MS = 120_000
# Execution option: "IMMEDIATE" takes SQLite's write lock at BEGIN, so a transaction that
# reads before it writes waits for other writers (busy_timeout) instead of failing.
SQLITE_BEGIN = "sqlite_begin"
_SQLITE_BEGIN_MODES = ("", "DEFERRED", "IMMEDIATE", "EXCLUSIVE")


def is_memory(url: URL) -> bool:
    """Whether a SQLite `url` names an in-memory database (one that cannot be opened twice)."""
    database = url.database or ""
    return database in ("", ":memory:") or "mode=memory" in str(url.query.get("mode", ""))


def _sqlite_on_connect(busy_timeout_ms: int) -> Callable[[Any, Any], None]:
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # busy_timeout first, so that switching to WAL also waits for a writer instead of
        # failing on its lock. Foreign keys are off per connection by default in SQLite; WAL
        # lets readers run while a loop is being written. The driver's own implicit
        # transactions skip DDL and SAVEPOINT; turning them off and emitting BEGIN ourselves
        # (below) makes migrations atomic, as on PostgreSQL.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
            cursor.execute("PRAGMA foreign_keys=ON")
            _switch_to_wal(dbapi_connection, cursor, busy_timeout_ms)
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    return on_connect


def _switch_to_wal(dbapi_connection: Any, cursor: Any, busy_timeout_ms: int) -> None:
    """Put the file in WAL mode, waiting up to `busy_timeout_ms` for another writer.

    On a file already in WAL the switch takes no lock and succeeds at once. On a new file it
    does, and SQLite answers "database is locked" at once, without its busy handler, when
    another connection holds the write lock (waiting could deadlock): replicas starting
    together on a new file, one of them migrating. So the switch is retried here, sleeping
    on the event loop so that the writer holding the lock can finish.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    delay_s = 0.01
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay_s > deadline:
                raise
        dbapi_connection.run_async(lambda _driver, pause=delay_s: asyncio.sleep(pause))
        delay_s = min(delay_s * 2, 0.25)


def _sqlite_on_begin(connection: Any) -> None:
    mode = connection.get_execution_options().get(SQLITE_BEGIN, "")
    if mode not in _SQLITE_BEGIN_MODES:
        raise ValueError(f"{SQLITE_BEGIN}={mode!r} is not one of {_SQLITE_BEGIN_MODES}")
    connection.exec_driver_sql(f"BEGIN {mode}".rstrip())


def _libpq_options_for_asyncpg(url: URL, kwargs: dict[str, Any]) -> URL:
    """Move libpq's `options=-c name=value ...` into asyncpg's `server_settings`.

    psycopg understands the libpq form (`?options=-csearch_path%3Dredraft`) natively;
    asyncpg refuses it, so the same URL would otherwise not work with both drivers.
    """
    options = url.query.get("options")
    if options is None or url.get_driver_name() != "asyncpg":
        return url
    tokens = " ".join(options if isinstance(options, tuple) else [options]).split()
    settings: dict[str, str] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "-c" and index + 1 < len(tokens):
            index += 1
            pair = tokens[index]
        elif token.startswith("-c"):
            pair = token[2:]
        elif token.startswith("--"):
            pair = token[2:]
        else:
            raise ValueError(f"unsupported PostgreSQL connection option {token!r} in the URL")
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"PostgreSQL connection option {pair!r} needs name=value")
        settings[name.replace("-", "_")] = value
        index += 1
    connect_args = dict(kwargs.get("connect_args", {}))
    connect_args["server_settings"] = {**connect_args.get("server_settings", {}), **settings}
    kwargs["connect_args"] = connect_args
    return url.difference_update_query(["options"])


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def make_engine(
    url: str | URL,
    echo: bool = False,
    sqlite_busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS,
    **kwargs: Any,
) -> AsyncEngine:
    """An async engine for `sqlite+aiosqlite://` or `postgresql+asyncpg://` (or psycopg) URLs.

    For a SQLite file the parent directory is created; every SQLite connection gets foreign
    keys and WAL. An in-memory SQLite URL shares one connection, so all sessions see the
    same database. PostgreSQL URLs may carry libpq's `options=-csearch_path%3D<schema>`
    with either driver. Extra keyword arguments go to `create_async_engine`.
    """
    parsed = make_url(url)
    # orjson for JSON columns: the stdlib encoder was the store's largest CPU cost per loop.
    kwargs.setdefault("json_serializer", _json_dumps)
    kwargs.setdefault("json_deserializer", orjson.loads)
    if parsed.get_backend_name() == "sqlite":
        if is_memory(parsed):
            kwargs.setdefault("poolclass", StaticPool)
            kwargs.setdefault("connect_args", {"check_same_thread": False})
        else:
            database = str(parsed.database)
            if not database.startswith("file:"):
                Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(parsed, echo=echo, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_on_connect(sqlite_busy_timeout_ms))
        event.listen(engine.sync_engine, "begin", _sqlite_on_begin)
        return engine
    parsed = _libpq_options_for_asyncpg(parsed, kwargs)
    kwargs.setdefault("pool_pre_ping", True)
    return create_async_engine(parsed, echo=echo, **kwargs)


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker:
    # Records are copied out of rows inside the session, but expiring on commit would
    # still trigger lazy loads (which async sessions forbid) on any row touched afterwards.
    return async_sessionmaker(engine, expire_on_commit=False)


async def ping(engine: AsyncEngine, limit_s: float = 2.0) -> bool:
    """True when the database answers a trivial query within `limit_s` seconds."""
    try:
        async with asyncio.timeout(limit_s), engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:  # readiness is a yes/no answer; the reason goes to the log
        log.warning("database ping failed: %s", exc)
        return False
    return True

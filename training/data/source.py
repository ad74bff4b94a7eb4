"""Reading recorded loops out of the store (SQLite or PostgreSQL), as `export` needs them.

The database URL defaults to the server's own setting: `REDRAFT_DATABASE_URL`, else
`redraft.db` in `REDRAFT_DATA_DIR` (./data). Settings are read here, by the training CLI,
never from `app`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.pool import NullPool

from store import LoopRecord, LoopRepository, make_engine, make_sessionmaker
from store.migrate import current_revision, head
from training.errors import UsageError

PAGE = 200


def database_url(given: str | None, env: Mapping[str, str] | None = None) -> str:
    """The loop store the server writes to, unless `given` names another."""
    env = os.environ if env is None else env
    if given:
        return given
    if env.get("REDRAFT_DATABASE_URL"):
        return env["REDRAFT_DATABASE_URL"]
    data_dir = Path(env.get("REDRAFT_DATA_DIR") or "./data")
    return f"sqlite+aiosqlite:///{(data_dir / 'redraft.db').resolve()}"


# The async driver each backend is opened with, whatever driver (or none) the URL names: the
# store is asyncio-only, while people write the URLs their other tools take.
SQLITE_DRIVER = "aiosqlite"
POSTGRES_DRIVERS = ("asyncpg", "psycopg")


def async_url(url: str) -> str:
    """`url` with its backend's async driver: `sqlite:///p` and `sqlite+pysqlite:///p` become
    `sqlite+aiosqlite:///p`; `postgresql://`, `postgres://` and `postgresql+psycopg2://`
    become asyncpg (psycopg, which is async too, is kept when named). Raises UsageError for
    a backend the store does not run on."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    parsed = make_url_or_none(url)
    if parsed is None:
        raise UsageError(f"--database {url!r} is not a database URL "
                         "(e.g. sqlite:///data/redraft.db or postgresql://user@host/db)")
    # The driver as written (none: ""); SQLAlchemy's own default may be a sync one.
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "sqlite":
        wanted = SQLITE_DRIVER
    elif backend == "postgresql":
        wanted = driver if driver in POSTGRES_DRIVERS else _postgres_driver()
    else:
        raise UsageError(f"--database {redacted(url)}: the loop store is SQLite or PostgreSQL, "
                         f"not {backend}")
    if driver == wanted:
        return url
    return parsed.set(drivername=f"{backend}+{wanted}").render_as_string(hide_password=False)


def _postgres_driver() -> str:
    """asyncpg when installed, else psycopg (3, async-capable)."""
    import importlib.util

    for name in POSTGRES_DRIVERS:
        if importlib.util.find_spec(name) is not None:
            return name
    raise UsageError("a PostgreSQL --database needs asyncpg or psycopg: pip install asyncpg")


def redacted(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"


def parse_time(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{name} {value!r} is not an ISO date/time (e.g. 2026-01-31T12:00)") \
            from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


@dataclass(frozen=True)
class LoopQuery:
    namespace: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    model: str | None = None


async def _read(url: str, query: LoopQuery) -> list[LoopRecord]:
    try:
        engine = make_engine(url, poolclass=NullPool)
    except (ArgumentError, ImportError, ValueError) as exc:
        raise UsageError(f"--database {redacted(url)} is not a usable URL: {exc}") from None
    try:
        try:
            revision = await current_revision(engine)
        except (OperationalError, DBAPIError, OSError) as exc:
            reason = str(getattr(exc, "orig", exc)).splitlines()[0]
            raise UsageError(f"database {redacted(url)} is unreachable: {reason}") from None
        if revision is None:
            raise UsageError(f"database {redacted(url)} has no redraft tables (not migrated): "
                             "point --database at the server's store, or run `redraft db upgrade`")
        if revision != head():
            raise UsageError(f"database {redacted(url)} is at revision {revision}, this code "
                             f"expects {head()}: run `redraft db upgrade`")
        repo = LoopRepository(make_sessionmaker(engine))
        records: list[LoopRecord] = []
        cursor: str | None = None
        while True:
            page, cursor = await repo.list(namespace=query.namespace, since=query.since,
                                           until=query.until, model=query.model, limit=PAGE,
                                           cursor=cursor)
            records.extend(await repo.get_many([s.id for s in page]))
            if cursor is None:
                return records
    finally:
        await engine.dispose()


def read_loops(url: str, query: LoopQuery) -> list[LoopRecord]:
    """Every loop matching `query`, newest first, with candidates; raises UsageError when the
    database cannot be reached or was never migrated."""
    url = async_url(url)
    parsed = make_url(url)
    database = parsed.database or ""
    if (parsed.get_backend_name() == "sqlite" and database not in ("", ":memory:")
            and not database.startswith("file:") and not Path(database).is_file()):
        # Opening it would create an empty file: say so instead.
        raise UsageError(f"database {url}: no such SQLite file")
    return asyncio.run(_read(url, query))


def make_url_or_none(url: str) -> URL | None:
    try:
        return make_url(url)
    except ArgumentError:
        return None

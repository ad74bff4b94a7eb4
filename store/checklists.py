"""Stored checklists, found again by the hash of the query they were built for."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from store.errors import Conflict
from store.models import Checklist
from store.pagination import encode_cursor, paginate, split_page
from store.records import ChecklistRecord, Page


def _record(row: Checklist) -> ChecklistRecord:
    return ChecklistRecord(
        id=row.id,
        namespace=row.namespace,
        query_hash=row.query_hash,
        model=row.model,
        source=row.source,
        body=row.body,
        created_at=row.created_at,
    )


class ChecklistRepository:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self._sessions = sessions

    async def add(self, record: ChecklistRecord) -> ChecklistRecord:
        try:
            async with self._sessions.begin() as session:
                session.add(
                    Checklist(
                        id=record.id,
                        namespace=record.namespace,
                        query_hash=record.query_hash,
                        model=record.model,
                        source=record.source,
                        body=record.body,
                        created_at=record.created_at,
                    )
                )
        except IntegrityError as exc:
            raise Conflict(f"checklist {record.id} was not saved: {exc.orig}") from exc
        return record

    async def get(self, checklist_id: str, namespace: str | None = None) -> ChecklistRecord | None:
        query = select(Checklist).where(Checklist.id == checklist_id)
        if namespace is not None:
            query = query.where(Checklist.namespace == namespace)
        async with self._sessions() as session:
            row = await session.scalar(query)
            return _record(row) if row is not None else None

    async def find(
        self, namespace: str, query_hash: str, model: str | None = None
    ) -> ChecklistRecord | None:
        """The newest checklist stored for this query (and judge model, when given)."""
        query = select(Checklist).where(
            Checklist.namespace == namespace, Checklist.query_hash == query_hash
        )
        if model is not None:
            query = query.where(Checklist.model == model)
        query = query.order_by(Checklist.created_at.desc(), Checklist.id.desc()).limit(1)
        async with self._sessions() as session:
            row = await session.scalar(query)
            return _record(row) if row is not None else None

    async def list(
        self, namespace: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> Page[ChecklistRecord]:
        query = select(Checklist)
        if namespace is not None:
            query = query.where(Checklist.namespace == namespace)
        query = paginate(query, Checklist.created_at, Checklist.id, limit, cursor)
        async with self._sessions() as session:
            rows, more = split_page((await session.scalars(query)).all(), limit)
            items = tuple(_record(r) for r in rows)
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more else None
        return Page(items, next_cursor)

    async def delete(self, checklist_id: str, namespace: str | None = None) -> bool:
        statement = delete(Checklist).where(Checklist.id == checklist_id)
        if namespace is not None:
            statement = statement.where(Checklist.namespace == namespace)
        async with self._sessions.begin() as session:
            result = await session.execute(statement)
        return bool(result.rowcount)

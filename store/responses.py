"""Stored Responses API responses: the body, the input and output items, per namespace.

Every read takes the caller's namespace: a response of another namespace is absent, never
visible. A response holds its whole context, so continuing a chain is one read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from store.errors import Conflict, InvalidCursor
from store.models import ResponseItem, StoredResponse
from store.records import ResponseRecord

MAX_ITEMS_PAGE = 100


def _item_rows(record: ResponseRecord) -> list[dict[str, Any]]:
    return [{"response_id": record.id, "part": part, "position": position,
             "item_id": item["id"], "item": item}
            for part, items in (("input", record.input_items), ("output", record.output_items))
            for position, item in enumerate(items)]


def _response_row(record: ResponseRecord) -> dict[str, Any]:
    return {"id": record.id, "namespace": record.namespace, "created_at": record.created_at,
            "model": record.model, "status": record.status,
            "previous_response_id": record.previous_response_id, "body": record.body}


class ResponseRepository:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self._sessions = sessions

    async def save(self, record: ResponseRecord) -> ResponseRecord:
        """Write the response and its items in one transaction; `Conflict` on an existing id."""
        await self.save_many([record])
        return record

    async def save_many(self, records: Sequence[ResponseRecord]) -> None:
        """Write several responses in one transaction (all or none): the group commit's batch."""
        items = [row for r in records for row in _item_rows(r)]
        try:
            async with self._sessions.begin() as session:
                await session.execute(insert(StoredResponse.__table__),
                                      [_response_row(r) for r in records])
                if items:
                    await session.execute(insert(ResponseItem.__table__), items)
        except IntegrityError as exc:
            ids = ", ".join(r.id for r in records)
            raise Conflict(f"response {ids} was not saved: {exc.orig}") from exc

    async def get(self, response_id: str, namespace: str, *,
                  items: bool = False) -> ResponseRecord | None:
        """The response, with its items when `items` (else they are left empty); None if absent
        or in another namespace."""
        query = select(StoredResponse).where(StoredResponse.id == response_id,
                                             StoredResponse.namespace == namespace)
        async with self._sessions() as session:
            row = await session.scalar(query)
            if row is None:
                return None
            found: dict[str, list[dict[str, Any]]] = {"input": [], "output": []}
            if items:
                rows = await session.execute(
                    select(ResponseItem.part, ResponseItem.item)
                    .where(ResponseItem.response_id == response_id)
                    .order_by(ResponseItem.part, ResponseItem.position))
                for part, item in rows:
                    found[part].append(item)
        return ResponseRecord(id=row.id, namespace=row.namespace, model=row.model,
                              status=row.status, body=row.body,
                              input_items=tuple(found["input"]),
                              output_items=tuple(found["output"]),
                              previous_response_id=row.previous_response_id,
                              created_at=row.created_at)

    async def exists(self, response_id: str) -> bool:
        """Whether a response with this id is stored in any namespace (never returned to a
        caller: it only tells a response still being written from one that is not ours)."""
        query = select(StoredResponse.id).where(StoredResponse.id == response_id)
        async with self._sessions() as session:
            return await session.scalar(query) is not None

    async def input_items(self, response_id: str, namespace: str, *, limit: int = 20,
                          order: Literal["asc", "desc"] = "desc",
                          after: str | None = None) -> tuple[list[dict[str, Any]], bool] | None:
        """One page of a response's input items and whether more follow; None if the response
        is absent or in another namespace. `after` is the id of the last item already seen;
        an id that is not among the items raises `InvalidCursor`."""
        if not 1 <= limit <= MAX_ITEMS_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_ITEMS_PAGE}, got {limit}")
        owner = select(StoredResponse.id).where(StoredResponse.id == response_id,
                                                StoredResponse.namespace == namespace)
        mine = (ResponseItem.response_id == response_id, ResponseItem.part == "input")
        async with self._sessions() as session:
            if await session.scalar(owner) is None:
                return None
            query = select(ResponseItem.item).where(*mine)
            if after is not None:
                start = await session.scalar(select(ResponseItem.position).where(
                    *mine, ResponseItem.item_id == after).limit(1))
                if start is None:
                    raise InvalidCursor(f"no input item {after!r} in response {response_id!r}")
                query = query.where(ResponseItem.position > start if order == "asc"
                                    else ResponseItem.position < start)
            position = ResponseItem.position
            query = query.order_by(position.asc() if order == "asc" else position.desc())
            rows = (await session.scalars(query.limit(limit + 1))).all()
        return list(rows[:limit]), len(rows) > limit

    async def find_item(self, item_id: str, namespace: str) -> dict[str, Any] | None:
        """An item of any stored response of this namespace, by its id."""
        query = (select(ResponseItem.item)
                 .join(StoredResponse, StoredResponse.id == ResponseItem.response_id)
                 .where(ResponseItem.item_id == item_id, StoredResponse.namespace == namespace)
                 .limit(1))
        async with self._sessions() as session:
            return await session.scalar(query)

    async def delete(self, response_id: str, namespace: str) -> bool:
        """Delete a response and its items; True if one was deleted."""
        statement = delete(StoredResponse).where(StoredResponse.id == response_id,
                                                 StoredResponse.namespace == namespace)
        async with self._sessions.begin() as session:
            result = await session.execute(statement)
        return bool(result.rowcount)

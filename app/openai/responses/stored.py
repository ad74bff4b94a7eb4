"""Stored responses: kept behind the answer, visible to every read that follows it.

A response is written in a group commit that gathers for `WINDOW` seconds, after the client
has its answer: waiting for the commit, and committing in small batches, cost the Responses
route a third of its throughput. What a client can do next must still see the response:

- in this process, a read of a response (retrieve, input items, delete, a later
  `previous_response_id`) waits for its pending write; an item reference waits for all;
- in another replica sharing the database, a response id minted in the last `RECENT`
  seconds that is in no namespace yet is looked for again until it is, or until that time is
  up (an id answered with `store: false` takes that long to be a 404).

A write that fails is logged and counted (`redraft_errors_total{type="response_store"}`);
the response is then not stored, as with `store: false`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Literal

from app.http.metrics import Metrics
from app.openai.responses.items import Item
from generation.errors import InvalidRequest, NotFound
from store.errors import InvalidCursor
from store.group_commit import ResponseWriter
from store.records import ResponseRecord, new_id
from store.responses import ResponseRepository

log = logging.getLogger("redraft.responses")
WINDOW = 0.05  # seconds a batch of responses gathers before it is written
RECENT = 2.0  # seconds after its creation that a missing response may still be on its way
_POLL = 0.025


def response_id() -> str:
    return "resp_" + new_id()


def _age(rid: str) -> float | None:
    """Seconds since a response id of ours was minted (its first 48 bits are Unix ms)."""
    digits = rid.removeprefix("resp_")
    if len(digits) != 32 or not rid.startswith("resp_"):
        return None
    try:
        millis = int(digits[:12], 16)
    except ValueError:
        return None
    return time.time() - millis / 1000


class StoredResponses:
    def __init__(self, repo: ResponseRepository, writer: ResponseWriter, metrics: Metrics, *,
                 recent: float = RECENT) -> None:
        self.repo = repo
        self.writer = writer
        self.metrics = metrics
        self.recent = recent
        self._pending: dict[str, asyncio.Future[None]] = {}

    def keep(self, record: ResponseRecord) -> None:
        """Queue the response for writing; reads that follow wait for it."""
        done = self.writer.enqueue(record)
        self._pending[record.id] = done

        def settled(future: asyncio.Future[None]) -> None:
            self._pending.pop(record.id, None)
            if not future.cancelled() and future.exception() is not None:
                log.error("could not store response %s: %s", record.id, future.exception())
                self.metrics.count_error("response_store")

        done.add_done_callback(settled)

    async def _settled(self, rid: str | None = None) -> None:
        """Wait for this process's pending write of `rid` (None: all of them)."""
        pending = ([self._pending[rid]] if rid in self._pending else []) if rid is not None \
            else list(self._pending.values())
        if pending:
            await asyncio.wait(pending)

    async def find(self, rid: str, namespace: str, *, items: bool = False,
                   param: str = "response_id") -> ResponseRecord:
        """The response, once visible; 404 (naming `param`) if absent or another namespace's."""
        await self._settled(rid)
        record = await self.repo.get(rid, namespace, items=items)
        while record is None:
            age = _age(rid)
            if age is None or not -1.0 < age < self.recent:
                raise NotFound(f"no response found with id {rid!r}", param=param)
            if await self.repo.exists(rid):
                # another namespace's, or it landed since the read above: read it once more
                record = await self.repo.get(rid, namespace, items=items)
                if record is None:
                    raise NotFound(f"no response found with id {rid!r}", param=param)
                break
            await asyncio.sleep(_POLL)  # another replica's group commit may not have landed
            record = await self.repo.get(rid, namespace, items=items)
        return record

    async def find_item(self, item_id: str, namespace: str) -> Item | None:
        await self._settled()
        return await self.repo.find_item(item_id, namespace)

    # -- the routes --------------------------------------------------------------------------

    async def get(self, rid: str, namespace: str) -> dict[str, Any]:
        return (await self.find(rid, namespace)).body

    async def input_items(self, rid: str, namespace: str, *, limit: int,
                          order: Literal["asc", "desc"], after: str | None) -> dict[str, Any]:
        await self.find(rid, namespace)
        try:
            page = await self.repo.input_items(rid, namespace, limit=limit, order=order,
                                               after=after)
        except InvalidCursor as exc:
            raise InvalidRequest(str(exc), param="after") from None
        if page is None:  # deleted meanwhile
            raise NotFound(f"no response found with id {rid!r}", param="response_id")
        data, more = page
        return {"object": "list", "data": data, "has_more": more,
                "first_id": data[0]["id"] if data else "",
                "last_id": data[-1]["id"] if data else ""}

    async def delete(self, rid: str, namespace: str) -> dict[str, Any]:
        await self.find(rid, namespace)
        if not await self.repo.delete(rid, namespace):
            raise NotFound(f"no response found with id {rid!r}", param="response_id")
        return {"id": rid, "object": "response.deleted", "deleted": True}

    async def cancel(self, rid: str, namespace: str) -> dict[str, Any]:
        await self.find(rid, namespace)
        raise InvalidRequest("only a response created with background: true can be cancelled, "
                             "and background mode is not supported: every response is finished "
                             "before its request returns", param="response_id",
                             code="background_not_supported")

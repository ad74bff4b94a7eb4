"""Group commit: records finishing at the same moment share one transaction.

Under load many loops (or stored responses) end together; one transaction (and one trip to
the database thread) for all of them costs a fraction of one each. Every caller still waits
until its own record is committed, so an id in a response can be read back at once, and each
record is still written whole or not at all: a batch that fails is retried one record at a
time, so one bad record cannot take its neighbours down with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from typing import Generic, Protocol, TypeVar

from store.records import LoopRecord, ResponseRecord

R = TypeVar("R")


class BatchRepository(Protocol[R]):
    def save(self, record: R, /) -> Awaitable[object]: ...

    def save_many(self, records: Sequence[R], /) -> Awaitable[None]: ...


class GroupWriter(Generic[R]):
    """`window`: seconds to let a batch gather before it is written. Zero (loops) writes as
    soon as the previous batch is done; a caller that does not wait for its commit
    (`enqueue`) can afford a window, and larger batches cost far less per record."""

    def __init__(self, repo: BatchRepository[R], max_batch: int = 64,
                 window: float = 0.0) -> None:
        self.repo = repo
        self.max_batch = max_batch
        self.window = window
        self._queue: list[tuple[R, asyncio.Future[None]]] = []
        self._drainer: asyncio.Task[None] | None = None

    def enqueue(self, record: R) -> asyncio.Future[None]:
        """Queue `record`; the future is done once it is committed (or holds the error)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Mark a failure as seen even when the caller has gone and nobody awaits it.
        done.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._queue.append((record, done))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.ensure_future(self._drain())
        return done

    async def save(self, record: R) -> None:
        """Return once `record` is committed; raise what its own write raised."""
        # A caller that gives up (client gone) does not cancel the write: it lands whole.
        await asyncio.shield(self.enqueue(record))

    async def aclose(self) -> None:
        """Wait for everything queued to be written."""
        if self._drainer is not None:
            with contextlib.suppress(Exception):
                await self._drainer

    async def _drain(self) -> None:
        while self._queue:
            if self.window and len(self._queue) < self.max_batch:
                await asyncio.sleep(self.window)
            batch, self._queue = self._queue[:self.max_batch], self._queue[self.max_batch:]
            try:
                await self.repo.save_many([record for record, _ in batch])
            except Exception:
                for record, done in batch:
                    await self._save_one(record, done)
                continue
            for _, done in batch:
                if not done.done():
                    done.set_result(None)

    async def _save_one(self, record: R, done: asyncio.Future[None]) -> None:
        try:
            await self.repo.save(record)
        except Exception as exc:
            if not done.done():
                done.set_exception(exc)
            return
        if not done.done():
            done.set_result(None)


LoopWriter = GroupWriter[LoopRecord]
ResponseWriter = GroupWriter[ResponseRecord]

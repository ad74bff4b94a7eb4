"""Change notices between memory banks: Redis pub/sub across replicas, a hub within a process.

A notice says which experiences changed, not what they became: a receiver reads the rows
from SQL (the source of truth). It may carry the new vectors so that a receiver using the
same embedding model need not embed again. Pub/sub drops what a disconnected subscriber
misses, so after a reconnect the receiver asks for a full reconcile (`reload`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

log = logging.getLogger(__name__)

CHANNEL = "redraft:memory:changes"
OPS = ("upsert", "delete", "reload")


@dataclass(frozen=True, slots=True)
class Notice:
    op: str  # upsert | delete | reload
    origin: str  # the publishing bank's id: a bank ignores its own notices
    namespace: str = ""
    ids: tuple[str, ...] = ()
    model: str = ""
    vectors: np.ndarray | None = None  # (len(ids), dim) float32, for `model`

    def encode(self) -> str:
        body: dict[str, Any] = {"op": self.op, "origin": self.origin,
                                "namespace": self.namespace, "ids": list(self.ids)}
        if self.vectors is not None:
            body["model"] = self.model
            body["shape"] = list(self.vectors.shape)
            body["vectors"] = base64.b64encode(
                np.ascontiguousarray(self.vectors, dtype="<f4").tobytes()).decode()
        return json.dumps(body)

    @classmethod
    def decode(cls, raw: str | bytes) -> Notice:
        body = json.loads(raw)
        if body.get("op") not in OPS:
            raise ValueError(f"unknown notice op {body.get('op')!r}")
        vectors = None
        if "vectors" in body:
            vectors = np.frombuffer(base64.b64decode(body["vectors"]), dtype="<f4").reshape(
                body["shape"]).astype(np.float32)
        return cls(body["op"], str(body["origin"]), str(body.get("namespace", "")),
                   tuple(body.get("ids", ())), str(body.get("model", "")), vectors)


class Notices(Protocol):
    async def publish(self, notice: Notice) -> None: ...

    async def subscribe(self) -> AsyncIterator[Notice]:
        """Subscribed once this returns: iterate for the notices published from then on."""
        ...

    async def aclose(self) -> None: ...


class LocalNotices:
    """In-process fan-out, for one process running several banks (and for tests)."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[Notice]] = set()

    async def publish(self, notice: Notice) -> None:
        for queue in list(self._queues):
            queue.put_nowait(notice)

    async def subscribe(self) -> AsyncIterator[Notice]:
        queue: asyncio.Queue[Notice] = asyncio.Queue()
        self._queues.add(queue)
        return self._stream(queue)

    async def _stream(self, queue: asyncio.Queue[Notice]) -> AsyncIterator[Notice]:
        try:
            while True:
                yield await queue.get()
        finally:
            self._queues.discard(queue)

    async def aclose(self) -> None:
        self._queues.clear()


class RedisNotices:
    """Pub/sub on one channel. The caller owns the client unless `from_url` made it."""

    def __init__(self, client: Any, channel: str = CHANNEL, *, owns_client: bool = False,
                 retry_delay: float = 1.0) -> None:
        self._client = client
        self.channel = channel
        self._owns = owns_client
        self._retry_delay = retry_delay

    @classmethod
    def from_url(cls, url: str, channel: str = CHANNEL) -> RedisNotices:
        from redis.asyncio import Redis

        return cls(Redis.from_url(url), channel, owns_client=True)

    async def publish(self, notice: Notice) -> None:
        await self._client.publish(self.channel, notice.encode())

    async def _open(self) -> Any:
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(self.channel)
        return pubsub

    async def subscribe(self) -> AsyncIterator[Notice]:
        return self._stream(await self._open())

    async def _stream(self, pubsub: Any) -> AsyncIterator[Notice]:
        from redis.exceptions import RedisError

        try:
            while True:
                try:
                    async for message in pubsub.listen():
                        if message.get("type") != "message":
                            continue
                        try:
                            yield Notice.decode(message["data"])
                        except (ValueError, KeyError, TypeError) as exc:
                            log.warning("ignoring a malformed memory notice: %s", exc)
                except (RedisError, OSError) as exc:
                    log.warning("memory notices: Redis connection lost (%s); resubscribing", exc)
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()
                    pubsub = None
                    while pubsub is None:
                        await asyncio.sleep(self._retry_delay)
                        with contextlib.suppress(RedisError, OSError):
                            pubsub = await self._open()
                    yield Notice("reload", origin="")  # what was published meanwhile is lost
        finally:
            if pubsub is not None:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def aclose(self) -> None:
        if self._owns:
            await self._client.aclose()

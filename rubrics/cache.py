"""Checklist cache: the same normalised query for the same writer model reuses its checklist.

Two stores behind one protocol: an in-process LRU (embedded default) and Redis (shared by
replicas). A cache failure is a miss, never a failed request. `on_result(hit)` lets the
caller count hits and misses for /metrics without this package knowing about Prometheus.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from redis.exceptions import RedisError

from generation.conversation import normalised_conversation
from generation.types import Message
from rubrics.checklist import Checklist, ChecklistInvalid, from_json, to_json

log = logging.getLogger(__name__)

OnResult = Callable[[bool], None]


def checklist_cache_key(query_messages: Sequence[Message], writer_model: str, *,
                        variant: str = "") -> str:
    """sha256 of the normalised conversation and the writer model.

    `variant` separates checklists built under different settings (mode, bounds) when the
    caller wants them kept apart.
    """
    material = "\x1f".join((writer_model, variant, normalised_conversation(query_messages)))
    return hashlib.sha256(material.encode()).hexdigest()


class ChecklistCache(Protocol):
    async def get(self, key: str) -> Checklist | None: ...

    async def put(self, key: str, checklist: Checklist) -> None: ...


def _as_cached(checklist: Checklist) -> Checklist:
    return checklist.model_copy(update={"source": "cache"})


class MemoryChecklistCache:
    def __init__(self, max_items: int = 1024, *, on_result: OnResult | None = None) -> None:
        if max_items < 1:
            raise ValueError("max_items must be at least 1")
        self.max_items = max_items
        self._on_result = on_result
        self._items: OrderedDict[str, Checklist] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    async def get(self, key: str) -> Checklist | None:
        checklist = self._items.get(key)
        if checklist is not None:
            self._items.move_to_end(key)
        if self._on_result:
            self._on_result(checklist is not None)
        return None if checklist is None else _as_cached(checklist)

    async def put(self, key: str, checklist: Checklist) -> None:
        self._items[key] = checklist
        self._items.move_to_end(key)
        while len(self._items) > self.max_items:
            self._items.popitem(last=False)


class RedisChecklistCache:
    """Checklists as canonical JSON under `prefix + key`, expiring after `ttl` seconds."""

    def __init__(self, client: Any, *, ttl: int | None = 7 * 24 * 3600,
                 prefix: str = "redraft:checklist:", on_result: OnResult | None = None) -> None:
        self._client = client
        self.ttl = ttl
        self.prefix = prefix
        self._on_result = on_result

    async def get(self, key: str) -> Checklist | None:
        checklist = None
        try:
            raw = await self._client.get(self.prefix + key)
            if raw is not None:
                checklist = from_json(raw)
        except (RedisError, OSError) as exc:
            log.warning("checklist cache read failed, treating as a miss: %s", exc)
        except ChecklistInvalid as exc:
            # Written by an older version or by hand: drop it so it is rebuilt once.
            log.warning("discarding unreadable cached checklist %s: %s", key, exc.message)
            await self._delete(key)
        if self._on_result:
            self._on_result(checklist is not None)
        return None if checklist is None else _as_cached(checklist)

    async def put(self, key: str, checklist: Checklist) -> None:
        try:
            await self._client.set(self.prefix + key, to_json(checklist), ex=self.ttl)
        except (RedisError, OSError) as exc:
            log.warning("checklist cache write failed: %s", exc)

    async def _delete(self, key: str) -> None:
        try:
            await self._client.delete(self.prefix + key)
        except (RedisError, OSError) as exc:
            log.warning("checklist cache delete failed: %s", exc)

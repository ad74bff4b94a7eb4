"""Where a loop's checklist comes from: the request (inline, pack entry, stored id), the
cache, or the three coding agents; every checklist a loop uses is stored for reuse by id."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generation.base import Backend
from generation.conversation import detect_language, target_text
from generation.errors import (
    ContextOverflow,
    NotFound,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from generation.types import ChatParams, Message, Usage
from loops.degradation import Degradation, failed, invalid
from rubrics.agents import build_checklist
from rubrics.cache import ChecklistCache, checklist_cache_key
from rubrics.checklist import (
    Checklist,
    ChecklistInvalid,
    checklist_id,
    from_json,
    requirements_scale,
)
from rubrics.checks.prepass import prepass
from rubrics.packs import PackLibrary
from rubrics.writingbench import from_writingbench
from store.checklists import ChecklistRepository
from store.errors import Conflict
from store.records import ChecklistRecord

log = logging.getLogger(__name__)
PARAM = "reflection.checklist"
_GENERIC = "used the generic checklist"
# what an inline checklist of checks alone is validated with (its scale replaces it)
_PLACEHOLDER = {"name": "requirements", "description": "the stated requirements",
                "bands": [{"low": 0, "high": 0, "description": "none met"},
                          {"low": 1, "high": 1, "description": "met"}]}


@dataclass(frozen=True, slots=True)
class ChecklistSpec:
    """What the request said about the checklist: exactly one of the three."""

    inline: dict[str, Any] | list[Any] | None = None
    ref: str | None = None   # "pack:entry"
    id: str | None = None    # a stored checklist


@dataclass(frozen=True, slots=True)
class Resolved:
    checklist: Checklist
    source: str      # generated | cache | pack | user
    id: str          # the stored checklist's id
    usage: Usage = Usage()
    calls: int = 0
    degraded: bool = False
    degradation: Degradation | None = None  # why the generic checklist stands in


def stored_id(checklist: Checklist) -> str:
    """Content address, so the same rubric is stored once whatever produced it."""
    return checklist_id(checklist)[:32]


class ChecklistProvider:
    def __init__(self, judge: Backend, params: ChatParams, packs: PackLibrary,
                 cache: ChecklistCache, repo: ChecklistRepository, *, n_min: int = 4,
                 n_max: int = 8, retries: int = 2, known: int = 4096) -> None:
        self.judge = judge
        self.params = params
        self.packs = packs
        self.cache = cache
        self.repo = repo
        self.n_min, self.n_max, self.retries = n_min, n_max, retries
        self._known: OrderedDict[str, None] = OrderedDict()  # ids surely stored already
        self._known_max = known
        self._building: dict[str, asyncio.Future[Resolved]] = {}

    async def fixed(self, spec: ChecklistSpec, namespace: str) -> Resolved:
        """A checklist the request chose; 400 when malformed, 404 when unknown."""
        if spec.ref is not None:
            checklist = self.packs.get(spec.ref)
            return await self._stored(checklist, "pack", namespace, spec.ref)
        if spec.id is not None:
            record = await self.repo.get(spec.id, namespace)
            if record is None:
                raise NotFound(f"no stored checklist with id {spec.id!r}", param=PARAM)
            return Resolved(from_json(record.body, param=PARAM), record.source, record.id)
        checklist = _inline(spec.inline)
        return await self._stored(checklist, "user", namespace, "inline")

    async def build(self, query: Sequence[Message], writer_model: str, namespace: str,
                    mode: str) -> Resolved:
        """The cached checklist, or a new one. Identical queries in flight at the same time
        (n > 1 loops of one request, or a burst of the same request) share one build."""
        key = self._key(query, writer_model, mode)
        cached = await self.cache.get(key)
        if cached is not None:
            return await self._stored(cached, "cache", namespace, key)
        pending = self._building.get(key)
        if pending is not None:
            shared = await asyncio.shield(pending)
            return Resolved(shared.checklist, "cache", shared.id)
        future = asyncio.get_running_loop().create_future()
        self._building[key] = future
        try:
            resolved = await self._generate(query, key, namespace, mode)
            future.set_result(resolved)
            return resolved
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters get it, nobody else must
            raise
        finally:
            del self._building[key]

    async def cached(self, query: Sequence[Message], writer_model: str,
                     mode: str) -> Checklist | None:
        """The checklist `build` would find in the cache, or None (it would be generated);
        a look only: nothing is stored."""
        return await self.cache.get(self._key(query, writer_model, mode))

    def generic(self, query: Sequence[Message]) -> Checklist:
        """The generic checklist in the request's language (the size a forecast takes for a
        checklist not generated yet)."""
        return self.packs.generic(detect_language(target_text(query)))

    def _key(self, query: Sequence[Message], writer_model: str, mode: str) -> str:
        return checklist_cache_key(query, writer_model, variant=f"{mode}:{self.n_min}-{self.n_max}")

    async def _generate(self, query: Sequence[Message], key: str, namespace: str,
                        mode: str) -> Resolved:
        try:
            built = await build_checklist(self.judge, query, self.params, mode=mode,  # type: ignore[arg-type]
                                          n_min=self.n_min, n_max=self.n_max,
                                          retries=self.retries, packs=self.packs)
        except (UpstreamUnavailable, UpstreamTimeout, UpstreamError, ContextOverflow) as exc:
            # The judge is unreachable, or the agents' prompts do not fit its context: the
            # draft may still be worth returning, so carry on with the generic rubric (with
            # the pre-pass's checks) and let the loop degrade if evaluation fails too.
            log.warning("checklist agents failed (%s); using the generic checklist", exc.message)
            return await self._fallback(query, key, namespace,
                                        failed("checklist", exc, _GENERIC))
        source = "pack" if built.degraded else "generated"
        if not built.degraded:  # a fallback is not this query's checklist: do not cache it
            await self.cache.put(key, built.checklist)
        resolved = await self._stored(built.checklist, source, namespace, key)
        cause = invalid("checklist", built.calls, built.error, _GENERIC) if built.degraded \
            else None
        return Resolved(resolved.checklist, source, resolved.id, built.usage, built.calls,
                        built.degraded, cause)

    async def fallback(self, query: Sequence[Message], namespace: str,
                       cause: Degradation) -> Resolved:
        """The generic checklist in the request's language, with the pre-pass's checks."""
        return await self._fallback(query, "fallback", namespace, cause)

    async def _fallback(self, query: Sequence[Message], key: str, namespace: str,
                        cause: Degradation) -> Resolved:
        checklist = self.generic(query)
        found = await asyncio.to_thread(prepass, target_text(query))
        checklist = checklist.model_copy(update={"checks": found})
        resolved = await self._stored(checklist, "pack", namespace, key)
        return Resolved(resolved.checklist, "pack", resolved.id, degraded=True,
                        degradation=cause)

    async def _stored(self, checklist: Checklist, source: str, namespace: str,
                      query_hash: str) -> Resolved:
        cid = stored_id(checklist)
        if cid not in self._known:
            record = ChecklistRecord(namespace=namespace, query_hash=query_hash[:128],
                                     model=self.params.model or "", source=source,
                                     body=checklist.model_dump(mode="json"), id=cid)
            try:
                if await self.repo.get(cid) is None:
                    await self.repo.add(record)
            except Conflict:
                pass  # another request stored the same rubric first
            self._known[cid] = None
            if len(self._known) > self._known_max:
                self._known.popitem(last=False)
        return Resolved(checklist, source, cid)


def _inline(value: Any) -> Checklist:
    """An inline checklist: ours ({"dimensions": [...]}), checks alone ({"checks": [...]}:
    scored by how many the text meets) or WritingBench criteria ([...])."""
    if isinstance(value, list):
        if value and all(isinstance(c, dict) and "criteria_description" in c for c in value):
            return from_writingbench(value, source="user")
        value = {"dimensions": value}
    if isinstance(value, dict) and "checks" in value and "dimensions" not in value:
        only = from_json({**value, "dimensions": [_PLACEHOLDER]}, source="user", param=PARAM)
        if not only.checks:
            raise ChecklistInvalid("an inline checklist of checks alone needs at least one "
                                   "check", param=PARAM)
        return requirements_scale(tuple(c.model_copy(update={"source": "user"})
                                        for c in only.checks))
    return from_json(value, source="user", param=PARAM)

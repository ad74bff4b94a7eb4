"""The reads behind the pages: which experiences and loops to show, through the services."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from store.records import ExperienceRecord, LoopRecord, LoopSummary

SEMANTIC, TEXT = "semantic", "text"


@dataclass(frozen=True, slots=True)
class MemoryRow:
    experience: ExperienceRecord
    score: float | None = None  # similarity, for semantic search only


@dataclass(frozen=True, slots=True)
class MemoryPage:
    rows: tuple[MemoryRow, ...]
    mode: str
    next_cursor: str | None


def semantic_available(services: Any) -> bool:
    return getattr(services, "memory", None) is not None


def search_mode(services: Any, requested: str | None) -> str:
    """Semantic search when a memory bank is running, unless the admin asked for text."""
    if not semantic_available(services) or requested == TEXT:
        return TEXT
    return SEMANTIC


async def memory_page(services: Any, *, q: str, mode: str, namespace: str | None,
                      limit: int, cursor: str | None) -> MemoryPage:
    """Top `limit` hits by similarity (one page: ranks have no cursor), or a page of
    experiences newest first, filtered by a case-insensitive substring of key or text."""
    if q and mode == SEMANTIC:
        hits = await services.memory.search(q, namespace, limit)
        return MemoryPage(tuple(MemoryRow(h.experience, h.score) for h in hits), mode, None)
    items, next_cursor = await services.experiences.list(
        namespace=namespace, contains=q or None, limit=limit, cursor=cursor)
    return MemoryPage(tuple(MemoryRow(e) for e in items), mode, next_cursor)


async def loop_page(services: Any, *, namespace: str | None, limit: int,
                    cursor: str | None) -> tuple[tuple[LoopSummary, ...], str | None]:
    items, next_cursor = await services.loops.list(namespace=namespace, limit=limit,
                                                   cursor=cursor)
    return tuple(items), next_cursor


async def experience_with_loop(
        services: Any, experience_id: str) -> tuple[ExperienceRecord | None, LoopRecord | None]:
    experience = await services.experiences.get(experience_id)
    if experience is None or experience.source_loop_id is None:
        return experience, None
    return experience, await services.loops.get(experience.source_loop_id)


def page_url(path: str, **params: str | None) -> str:
    """`path` with the non-empty `params` as its query string."""
    query = urlencode({k: v for k, v in params.items() if v})
    return f"{path}?{query}" if query else path

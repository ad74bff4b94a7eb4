"""The in-process checklist cache and the cache key."""

from __future__ import annotations

from rubrics.cache import MemoryChecklistCache, checklist_cache_key
from rubrics.packs import PackLibrary

QUERY = [{"role": "system", "content": "Be brief."},
         {"role": "user", "content": "Write  a\nhaiku."}]


def test_key_ignores_whitespace_but_not_content_model_or_variant():
    key = checklist_cache_key(QUERY, "writer")
    spaced = [QUERY[0], {"role": "user", "content": [{"type": "text", "text": " Write a haiku. "}]}]
    assert checklist_cache_key(spaced, "writer") == key
    assert checklist_cache_key(QUERY[1:], "writer") != key
    assert checklist_cache_key(QUERY, "other-writer") != key
    assert checklist_cache_key(QUERY, "writer", variant="fused") != key
    assert len(key) == 64


async def test_memory_cache_is_lru_and_reports_hits():
    library = PackLibrary()
    en, zh = library.generic("en"), library.generic("zh")
    results: list[bool] = []
    cache = MemoryChecklistCache(max_items=2, on_result=results.append)
    assert await cache.get("a") is None
    await cache.put("a", en)
    await cache.put("b", zh)
    hit = await cache.get("a")               # "a" is now the most recent
    assert hit.source == "cache" and hit.dimensions == en.dimensions
    await cache.put("c", zh)                 # evicts "b", the least recently used
    assert await cache.get("b") is None
    assert await cache.get("a") is not None and await cache.get("c") is not None
    assert len(cache) == 2
    assert results == [False, True, False, True, True]

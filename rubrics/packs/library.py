"""Rubric packs: checklists shipped as data files, looked up as "pack:entry".

A pack file is JSONL (one entry per line) or JSON (`{"entries": [...]}`); an entry is
`{"id", "checklist": {"dimensions": [...]}}` plus optional `language`, `query`, `domain1`,
`domain2`, `focus`, and `checks` (requirements verified in code: `{"kind", "params", "quote"}`,
see `rubrics.checks`). Files load on first use; `preload` does it off the event loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from generation.errors import NotFound, RedraftError
from rubrics.checklist import Checklist, ChecklistInvalid, from_json

# Pack name -> file, relative to this package. Nothing scans the folder.
DEFAULT_PACKS: Mapping[str, str] = MappingProxyType({
    "generic": "generic.json",
    "writingbench": "writingbench/writingbench.jsonl",
})

PARAM = "reflection.checklist"


@dataclass(frozen=True, slots=True)
class PackEntry:
    ref: str
    checklist: Checklist
    language: str | None = None
    query: str | None = None
    domain1: str | None = None
    domain2: str | None = None
    focus: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


class PackLibrary:
    def __init__(self, packs: Mapping[str, str | Path] = DEFAULT_PACKS) -> None:
        self._files = dict(packs)
        self._loaded: dict[str, dict[str, PackEntry]] = {}

    def names(self) -> list[str]:
        return list(self._files)

    async def preload(self, *names: str) -> None:
        """Parse pack files in a worker thread (the WritingBench pack is ~11 MB of JSON)."""
        for name in names or self.names():
            if name not in self._loaded:
                self._loaded[name] = await asyncio.to_thread(self._read, name)

    def entries(self, pack: str) -> tuple[PackEntry, ...]:
        return tuple(self._pack(pack).values())

    def entry(self, ref: str) -> PackEntry:
        pack, sep, entry_id = ref.partition(":")
        if not sep or not entry_id:
            raise NotFound(f"checklist reference {ref!r} is not of the form 'pack:entry'",
                           param=PARAM)
        found = self._pack(pack).get(entry_id)
        if found is None:
            raise NotFound(f"pack {pack!r} has no entry {entry_id!r}", param=PARAM)
        return found

    def get(self, ref: str) -> Checklist:
        return self.entry(ref).checklist

    def generic(self, language: str | None) -> Checklist:
        """The fallback checklist for a request in `language` (English unless Chinese)."""
        return self.get("generic:general-zh" if language == "zh" else "generic:general-en")

    def _pack(self, name: str) -> dict[str, PackEntry]:
        if name not in self._files:
            raise NotFound(f"no rubric pack named {name!r}; known: {self.names()}", param=PARAM)
        if name not in self._loaded:
            self._loaded[name] = self._read(name)
        return self._loaded[name]

    def _read(self, name: str) -> dict[str, PackEntry]:
        location = self._files[name]
        source: Traversable | Path = (
            location if isinstance(location, Path) else files("rubrics.packs").joinpath(location))
        text = source.read_text(encoding="utf-8")
        try:
            if source.name.endswith(".jsonl"):
                raw = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                raw = json.loads(text)["entries"]
            entries = [_entry(name, item) for item in raw]
        except (ValueError, KeyError, TypeError, ChecklistInvalid) as exc:
            # A broken pack is our fault, not the client's: a server error, not a 400.
            raise RedraftError(f"rubric pack {name!r} ({location}) is malformed: {exc}") from exc
        return {e.ref.partition(":")[2]: e for e in entries}


def _entry(pack: str, item: Mapping[str, Any]) -> PackEntry:
    language = item.get("language")
    raw = {**item["checklist"], "language": language}
    checks = [*raw.pop("checks", ()), *item.get("checks", ())]
    if checks:
        raw["checks"] = [{**c, "source": "pack"} for c in checks]
    checklist = from_json(raw, source="pack")
    return PackEntry(
        ref=f"{pack}:{item['id']}",
        checklist=checklist,
        language=language,
        query=item.get("query"),
        domain1=item.get("domain1"),
        domain2=item.get("domain2"),
        focus={k: tuple(v) for k, v in item.get("focus", {}).items()},
    )

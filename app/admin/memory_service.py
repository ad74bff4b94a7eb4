"""The memory bank as the admin API sees it: listing, curation, JSONL export/import, stats.

SQL-only operations (list, get, export, delete, stats) work with the bank disabled; those
that need embeddings or the index raise `MemoryDisabled` (503) then.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from generation.errors import InvalidRequest, NotFound, RedraftError
from memory.bank import Hit, MemoryBank, Remembered
from memory.index import RebuildReport
from store.errors import InvalidCursor
from store.experiences import ExperienceRepository
from store.loops import LoopRepository
from store.models import Experience, Loop
from store.records import ExperienceRecord, Page

EXPORT_PAGE = 500
IMPORT_BATCH = 64  # concurrent remembers share the embedder's forward passes
RECORD_FIELDS = frozenset(f.name for f in fields(ExperienceRecord)) - {"embedding_model"}
NAME_MAX = 255  # the width of the namespace column
ID_MAX = 36


class MemoryDisabled(RedraftError):
    status = 503
    type = "server_error"
    code = "memory_disabled"


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("needs a timezone (e.g. 2026-01-01T00:00:00Z)")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _scores(values: list[float]) -> list[float]:
    if not all(math.isfinite(v) and 0 <= v <= 1 for v in values):
        raise ValueError("scores are normalised totals between 0 and 1")
    return values


Name = Annotated[str, Field(max_length=NAME_MAX), AfterValidator(_not_blank)]
Prose = Annotated[str, AfterValidator(_not_blank)]
Identifier = Annotated[str, Field(min_length=1, max_length=ID_MAX, pattern=r"^[0-9A-Za-z_-]+$")]
Trajectory = Annotated[list[float], Field(max_length=64), AfterValidator(_scores)]
Stamp = Annotated[datetime | None, AfterValidator(_aware)]


class ExperienceLine(BaseModel):
    """One line of an export: every stored field; `embedding_model` is re-derived on import."""

    model_config = ConfigDict(extra="forbid")

    namespace: Name
    key: Prose
    text: Prose
    score_trajectory: Trajectory = []
    id: Identifier | None = None
    source_loop_id: Annotated[str, Field(max_length=ID_MAX)] | None = None
    embedding_model: str | None = None
    created_at: Stamp = None
    updated_at: Stamp = None
    recalled_count: int = Field(0, ge=0)
    selected_count: int = Field(0, ge=0)
    gain_sum: float = Field(0.0, allow_inf_nan=False)
    gain_count: int = Field(0, ge=0)
    merged_count: int = Field(0, ge=0)


@dataclass(frozen=True, slots=True)
class Imported:
    imported: int
    duplicates: int  # already present by id, or near duplicates of a stored experience


@dataclass(frozen=True, slots=True)
class Usage:
    experiences: int
    recalled_once: int  # experiences recalled at least once
    recalled: int  # sum of recall counters
    selected: int  # sum of selection counters


def experience_json(record: ExperienceRecord) -> dict[str, Any]:
    """Every stored field plus the derived mean gain; datetimes as ISO 8601."""
    body: dict[str, Any] = asdict(record)
    body["score_trajectory"] = list(record.score_trajectory)
    body["created_at"] = record.created_at.isoformat()
    body["updated_at"] = record.updated_at.isoformat() if record.updated_at else None
    body["mean_gain"] = record.mean_gain
    return body


def export_line(record: ExperienceRecord) -> bytes:
    body = experience_json(record)
    del body["mean_gain"]  # derived: import rebuilds it from gain_sum and gain_count
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def parse_jsonl(body: bytes) -> list[tuple[int, ExperienceLine]]:
    """Every non-blank line validated, with its 1-based line number; the first bad line
    raises InvalidRequest naming it (`param` "line N.field")."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidRequest("the body is not UTF-8 text") from None
    lines: list[tuple[int, ExperienceLine]] = []
    ids: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except ValueError as exc:
            raise InvalidRequest(f"line {number}: not valid JSON ({exc})",
                                 param=f"line {number}", code="invalid_value") from None
        if not isinstance(item, dict):
            raise InvalidRequest(f"line {number}: expected a JSON object",
                                 param=f"line {number}", code="invalid_value")
        try:
            line = ExperienceLine.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
            msg = str(err["msg"]).removeprefix("Value error, ")
            raise InvalidRequest(f"line {number}: {field}: {msg}",
                                 param=f"line {number}.{field}", code="invalid_value") from None
        if line.id is not None:
            if line.id in ids:
                raise InvalidRequest(f"line {number}: id {line.id!r} repeats line {ids[line.id]}",
                                     param=f"line {number}.id", code="invalid_value")
            ids[line.id] = number
        lines.append((number, line))
    if not lines:
        raise InvalidRequest("the body holds no experiences: send one JSON object per line")
    return lines


def _record(line: ExperienceLine, model: str, loops: set[str]) -> ExperienceRecord:
    values = {k: v for k, v in line.model_dump(exclude_none=True).items() if k in RECORD_FIELDS}
    if line.source_loop_id not in loops:  # the loop stayed behind in the other database
        values.pop("source_loop_id", None)
    return ExperienceRecord(embedding_model=model, **values)


class MemoryAdmin:
    """One per request; all state lives in the collaborators."""

    def __init__(self, experiences: ExperienceRepository, memory: MemoryBank | None,
                 loops: LoopRepository, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.experiences = experiences
        self.memory = memory
        self.loops = loops
        self._sessions = sessions

    @property
    def bank(self) -> MemoryBank:
        if self.memory is None:
            raise MemoryDisabled("the memory bank is disabled (REDRAFT_MEMORY_ENABLED=false); "
                                 "set REDRAFT_MEMORY_ENABLED=true to search, create, edit, "
                                 "import or reindex experiences")
        return self.memory

    async def listing(self, **filters: Any) -> Page[ExperienceRecord]:
        """`ExperienceRepository.list`, with its errors as 400s naming the parameter."""
        for name in ("since", "until"):
            if filters.get(name) is not None and filters[name].tzinfo is None:
                raise InvalidRequest(f"{name} needs a timezone (e.g. 2026-01-01T00:00:00Z)",
                                     param=name)
        try:
            return await self.experiences.list(**filters)
        except InvalidCursor as exc:
            raise InvalidRequest(str(exc), param="cursor") from None

    async def get(self, experience_id: str) -> tuple[ExperienceRecord, dict[str, Any] | None]:
        """The experience and a summary of the loop it came from, if that loop still exists."""
        record = await self.experiences.get(experience_id)
        if record is None:
            raise NotFound(f"no experience with id {experience_id!r}", param="id")
        loop = await self.loops.get(record.source_loop_id) if record.source_loop_id else None
        if loop is None:
            return record, None
        return record, {
            "id": loop.id, "namespace": loop.namespace, "model": loop.model,
            "stop_reason": loop.stop_reason, "rounds": loop.rounds,
            "initial_score": loop.initial_score, "final_score": loop.final_score,
            "score_gain": loop.score_gain,
            "scores": [c.total_score for c in loop.candidates if c.total_score is not None],
            "created_at": loop.created_at.isoformat()}

    async def search(self, text: str, namespace: str | None, k: int) -> list[Hit]:
        # An operator looking around is not the loop using the memory: counters stay put.
        return await self.bank.recall(text, namespace, k, count=False)

    async def create(self, namespace: str, key: str, text: str,
                     score_trajectory: Sequence[float] = ()) -> Remembered:
        bank = self.bank
        return await bank.remember(ExperienceRecord(
            namespace=namespace, key=key, text=text, embedding_model=bank.embedder.name,
            score_trajectory=tuple(score_trajectory)))

    async def edit(self, experience_id: str, *, key: str | None = None, text: str | None = None,
                   score_trajectory: Sequence[float] | None = None) -> ExperienceRecord:
        if key is None and text is None and score_trajectory is None:
            raise InvalidRequest("nothing to change: send key, text or score_trajectory")
        return await self.bank.update(experience_id, key=key, text=text,
                                      score_trajectory=score_trajectory)

    async def delete(self, experience_id: str) -> None:
        # Without the bank the index is left stale; it drops the row when it next starts.
        if self.memory is not None:
            gone = await self.memory.forget(experience_id)
        else:
            gone = await self.experiences.delete(experience_id)
        if not gone:
            raise NotFound(f"no experience with id {experience_id!r}", param="id")

    async def export(self, namespace: str | None) -> AsyncIterator[bytes]:
        cursor: str | None = None
        while True:
            items, cursor = await self.experiences.list(namespace=namespace, limit=EXPORT_PAGE,
                                                        cursor=cursor)
            if items:
                yield b"".join(export_line(r) for r in items)
            if cursor is None:
                return

    async def import_jsonl(self, body: bytes) -> Imported:
        """Validate every line first (nothing is stored if one is bad), then remember them in
        batches. Ids already stored count as duplicates and are left as they are."""
        bank = self.bank
        lines = await asyncio.to_thread(parse_jsonl, body)
        given = [line.id for _, line in lines if line.id is not None]
        present = {r.id for r in await self._chunked(self.experiences.get_many, given)}
        loops = await self._existing_loops({line.source_loop_id for _, line in lines
                                            if line.source_loop_id})
        records = [_record(line, bank.embedder.name, loops) for _, line in lines
                   if line.id not in present]
        stored: list[str] = []
        for start in range(0, len(records), IMPORT_BATCH):
            batch = records[start:start + IMPORT_BATCH]
            results = await asyncio.gather(*(bank.remember(r) for r in batch),
                                           return_exceptions=True)
            stored.extend(r.experience.id for r in results
                          if isinstance(r, Remembered) and not r.duplicate)
            failed = next((r for r in results if isinstance(r, BaseException)), None)
            if failed is not None:
                # All or nothing: take back what this import added before the failure.
                for experience_id in stored:
                    await bank.forget(experience_id)
                raise failed
        return Imported(imported=len(stored), duplicates=len(lines) - len(stored))

    async def reindex(self) -> RebuildReport:
        return await self.bank.reindex()

    async def stats(self) -> dict[str, Any]:
        per_namespace = await self._usage()
        usage = Usage(*(sum(getattr(u, f) for u in per_namespace.values())
                        for f in ("experiences", "recalled_once", "recalled", "selected")))
        index = self.memory.stats() if self.memory is not None else None
        shards = index.namespaces if index is not None else {}
        return {
            "object": "memory.stats",
            "enabled": self.memory is not None,
            "embedding_model": index.model if index else None,
            "dim": index.dim if index else None,
            "experiences": usage.experiences,
            "indexed": index.count if index else None,
            "namespaces": {
                name: {"experiences": per_namespace[name].experiences
                       if name in per_namespace else 0,
                       "index": shards.get(name)}
                for name in sorted(set(per_namespace) | set(shards))},
            "recall": _recall(usage),
        }

    async def _chunked(self, fetch: Any, ids: Sequence[str], size: int = 500) -> list[Any]:
        found: list[Any] = []
        for start in range(0, len(ids), size):
            found.extend(await fetch(ids[start:start + size]))
        return found

    # Two aggregate queries the repositories do not offer yet; they read no row payloads.
    async def _existing_loops(self, loop_ids: set[str]) -> set[str]:
        ids = sorted(loop_ids)

        async def fetch(chunk: Sequence[str]) -> list[str]:
            async with self._sessions() as session:
                return list(await session.scalars(select(Loop.id).where(Loop.id.in_(chunk))))

        return set(await self._chunked(fetch, ids))

    async def _usage(self) -> dict[str, Usage]:
        query = select(Experience.namespace, func.count(),
                       func.count().filter(Experience.recalled_count > 0),
                       func.coalesce(func.sum(Experience.recalled_count), 0),
                       func.coalesce(func.sum(Experience.selected_count), 0)
                       ).group_by(Experience.namespace)
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return {name: Usage(int(n), int(once), int(recalled), int(selected))
                for name, n, once, recalled, selected in rows}


def _recall(usage: Usage) -> dict[str, Any]:
    total = usage.experiences
    return {
        "definition": "hit_rate = experiences recalled at least once / all experiences; "
                      "selection_rate = times selected / times recalled (admin searches "
                      "are not counted)",
        "experiences_recalled": usage.recalled_once,
        "hit_rate": usage.recalled_once / total if total else None,
        "recalled_total": usage.recalled,
        "selected_total": usage.selected,
        "selection_rate": usage.selected / usage.recalled if usage.recalled else None,
    }

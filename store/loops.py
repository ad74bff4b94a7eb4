"""Loop traces: one loop row plus its candidates, written and read as a unit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import selectinload

from store.errors import Conflict
from store.models import Candidate, Loop
from store.pagination import encode_cursor, paginate, split_page
from store.records import CandidateRecord, LoopRecord, LoopSummary, Page

_SUMMARY_COLUMNS = (
    Loop.id,
    Loop.namespace,
    Loop.created_at,
    Loop.finished_at,
    Loop.model,
    Loop.backend,
    Loop.checklist_source,
    Loop.checklist_id,
    Loop.stop_reason,
    Loop.rounds,
    Loop.initial_score,
    Loop.final_score,
    Loop.score_gain,
    Loop.error,
    Loop.degradations,
)


_LOOP_FIELDS = ("id", "namespace", "created_at", "finished_at", "model", "backend", "request",
                "checklist", "checklist_source", "checklist_id", "stop_reason", "rounds",
                "initial_score", "final_score", "usage", "timings", "experiences", "error",
                "degradations")
_CANDIDATE_FIELDS = ("id", "position", "round", "parent_position", "kind", "text", "scores",
                     "total_score", "reflection", "usage", "latency_ms")


def _loop_values(record: LoopRecord) -> dict[str, Any]:
    values = {name: getattr(record, name) for name in _LOOP_FIELDS}
    values["score_gain"] = record.score_gain
    values["degradations"] = list(record.degradations) or None
    return values


def _candidate_values(record: CandidateRecord, loop_id: str) -> dict[str, Any]:
    return {"loop_id": loop_id, **{name: getattr(record, name) for name in _CANDIDATE_FIELDS}}


def _candidate_record(row: Candidate) -> CandidateRecord:
    return CandidateRecord(
        id=row.id,
        position=row.position,
        round=row.round,
        parent_position=row.parent_position,
        kind=row.kind,
        text=row.text,
        scores=row.scores,
        total_score=row.total_score,
        reflection=row.reflection,
        usage=row.usage,
        latency_ms=row.latency_ms,
    )


def _loop_record(row: Loop) -> LoopRecord:
    return LoopRecord(
        id=row.id,
        namespace=row.namespace,
        created_at=row.created_at,
        finished_at=row.finished_at,
        model=row.model,
        backend=row.backend,
        request=row.request,
        checklist=row.checklist,
        checklist_source=row.checklist_source,
        checklist_id=row.checklist_id,
        stop_reason=row.stop_reason,
        rounds=row.rounds,
        initial_score=row.initial_score,
        final_score=row.final_score,
        usage=row.usage,
        timings=row.timings,
        experiences=row.experiences,
        error=row.error,
        candidates=tuple(_candidate_record(c) for c in row.candidates),
        degradations=tuple(row.degradations or ()),
    )


class LoopRepository:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self._sessions = sessions

    async def save(self, record: LoopRecord) -> LoopRecord:
        """Write the loop and all its candidates in one transaction: all of it or none.

        Raises `Conflict` when a constraint fails (an existing id, two candidates at the
        same position, a total score outside [0, 1]); nothing is written then.
        """
        await self.save_many([record])
        return record

    async def save_many(self, records: Sequence[LoopRecord]) -> None:
        """Write several loops in one transaction (all or none): the group commit's batch."""
        # Two multi-row INSERTs rather than ORM objects: a loop is written once and never
        # updated, and the unit of work costs milliseconds of CPU per loop under load.
        candidates = [_candidate_values(c, r.id) for r in records for c in r.candidates]
        try:
            async with self._sessions.begin() as session:
                await session.execute(insert(Loop.__table__), [_loop_values(r) for r in records])
                if candidates:
                    await session.execute(insert(Candidate.__table__), candidates)
        except IntegrityError as exc:
            ids = ", ".join(r.id for r in records)
            raise Conflict(f"loop {ids} was not saved: {exc.orig}") from exc

    async def get(self, loop_id: str, namespace: str | None = None) -> LoopRecord | None:
        """The full trace, candidates in position order; None if absent or in another namespace."""
        query = select(Loop).where(Loop.id == loop_id).options(selectinload(Loop.candidates))
        if namespace is not None:
            query = query.where(Loop.namespace == namespace)
        async with self._sessions() as session:
            row = await session.scalar(query)
            return _loop_record(row) if row is not None else None

    async def get_many(self, loop_ids: Sequence[str]) -> tuple[LoopRecord, ...]:
        """Full traces for `loop_ids`, in that order; unknown ids are left out."""
        if not loop_ids:
            return ()
        query = select(Loop).where(Loop.id.in_(loop_ids)).options(selectinload(Loop.candidates))
        async with self._sessions() as session:
            rows = {row.id: _loop_record(row) for row in await session.scalars(query)}
        return tuple(rows[i] for i in loop_ids if i in rows)

    async def list(
        self,
        namespace: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        model: str | None = None,
        stop_reason: str | None = None,
        min_gain: float | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page[LoopSummary]:
        """Loops newest first. `since` is inclusive, `until` exclusive; `min_gain` leaves out
        loops without both scores. Pass the returned cursor back for the next page."""
        query = select(*_SUMMARY_COLUMNS)
        if namespace is not None:
            query = query.where(Loop.namespace == namespace)
        if since is not None:
            query = query.where(Loop.created_at >= since)
        if until is not None:
            query = query.where(Loop.created_at < until)
        if model is not None:
            query = query.where(Loop.model == model)
        if stop_reason is not None:
            query = query.where(Loop.stop_reason == stop_reason)
        if min_gain is not None:
            query = query.where(Loop.score_gain >= min_gain)
        query = paginate(query, Loop.created_at, Loop.id, limit, cursor)
        async with self._sessions() as session:
            rows, more = split_page((await session.execute(query)).all(), limit)
        items = tuple(LoopSummary(**{**row._asdict(),
                                     "degradations": tuple(row.degradations or ())})
                      for row in rows)
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more else None
        return Page(items, next_cursor)

    async def delete(self, loop_id: str, namespace: str | None = None) -> bool:
        """Delete a loop and its candidates; experiences it produced keep their text.

        True if a loop was deleted."""
        statement = delete(Loop).where(Loop.id == loop_id)
        if namespace is not None:
            statement = statement.where(Loop.namespace == namespace)
        async with self._sessions.begin() as session:
            result = await session.execute(statement)
        return bool(result.rowcount)

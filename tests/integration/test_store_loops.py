"""Loop traces on real SQLite and PostgreSQL: exact round trips, atomic saves, listings."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, func, select

from store import CandidateRecord, Conflict, InvalidCursor, LoopRecord, Store
from store.models import Candidate, Loop

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def candidate(position: int, **changes: object) -> CandidateRecord:
    fields: dict[str, object] = {
        "position": position,
        "round": position,
        "kind": "draft" if position == 0 else "rewrite",
        "text": f"Draft {position}: naïve café — “quoted” 🚀",
        "parent_position": position - 1 if position else None,
        "scores": {
            "clarity": {"score": 6 + position, "evidence": "the second paragraph"},
            "tone": {"score": 5, "evidence": "formal throughout"},
        },
        "total_score": 0.5 + position / 10,
        "reflection": None
        if position == 0
        else {"low": ["tone"], "actions": ["shorten the intro"], "nested": {"a": [1, 2.5]}},
        "usage": {"prompt_tokens": 10 * position, "completion_tokens": 7},
        "latency_ms": 12.5 * position,
    }
    fields.update(changes)
    return CandidateRecord(**fields)  # type: ignore[arg-type]


def loop(**changes: object) -> LoopRecord:
    fields: dict[str, object] = {
        "namespace": "acme",
        "model": "qwen-0.5b",
        "backend": "scripted",
        "request": {"model": "qwen-0.5b", "messages": [{"role": "user", "content": "Write."}]},
        "created_at": T0,
        "finished_at": T0 + timedelta(seconds=3),
        "checklist": {"dimensions": [{"name": "clarity", "weight": 1.0}]},
        "checklist_source": "generated",
        "checklist_id": "ck-1",
        "stop_reason": "threshold",
        "rounds": 2,
        "initial_score": 0.5,
        "final_score": 0.7,
        "usage": {"draft": {"prompt_tokens": 5}, "evaluate": {"prompt_tokens": 9}},
        "timings": {"draft": 0.25, "evaluate": 1.5},
        "experiences": {
            "recalled": ["e1", "e2"],
            "selected": [{"id": "e1", "reason": "same genre"}],
        },
        "candidates": (candidate(0), candidate(1), candidate(2)),
    }
    fields.update(changes)
    return LoopRecord(**fields)  # type: ignore[arg-type]


async def count_rows(store: Store) -> tuple[int, int]:
    async with store.sessions() as session:
        loops = await session.scalar(select(func.count()).select_from(Loop))
        candidates = await session.scalar(select(func.count()).select_from(Candidate))
    return int(loops or 0), int(candidates or 0)


async def test_a_saved_loop_reads_back_exactly(migrated_store: Store) -> None:
    record = loop()
    await migrated_store.loops.save(record)

    loaded = await migrated_store.loops.get(record.id)

    assert loaded == record
    assert loaded is not None and loaded.created_at.tzinfo is not None
    assert loaded.score_gain == pytest.approx(0.2)


async def test_candidates_come_back_in_position_order(migrated_store: Store) -> None:
    record = loop(candidates=(candidate(2), candidate(0), candidate(1)))
    await migrated_store.loops.save(record)

    loaded = await migrated_store.loops.get(record.id)

    assert loaded is not None
    assert [c.position for c in loaded.candidates] == [0, 1, 2]


async def test_a_loop_without_scores_or_candidates_round_trips(migrated_store: Store) -> None:
    record = loop(
        candidates=(),
        checklist=None,
        checklist_source="none",
        checklist_id=None,
        initial_score=None,
        final_score=None,
        finished_at=None,
        stop_reason="error",
        error="upstream timed out",
    )
    await migrated_store.loops.save(record)

    assert await migrated_store.loops.get(record.id) == record


async def test_get_hides_loops_of_other_namespaces(migrated_store: Store) -> None:
    record = await migrated_store.loops.save(loop())

    assert await migrated_store.loops.get(record.id, namespace="acme") == record
    assert await migrated_store.loops.get(record.id, namespace="other") is None
    assert await migrated_store.loops.get("missing") is None


@pytest.mark.parametrize(
    "bad_candidates",
    [
        pytest.param((candidate(0), candidate(1), candidate(1)), id="duplicate-position"),
        pytest.param((candidate(0), candidate(1, total_score=1.5)), id="score-above-one"),
    ],
)
async def test_a_constraint_failure_mid_save_leaves_no_loop(
    migrated_store: Store, bad_candidates: tuple[CandidateRecord, ...]
) -> None:
    record = loop(candidates=bad_candidates)

    with pytest.raises(Conflict):
        await migrated_store.loops.save(record)

    assert await migrated_store.loops.get(record.id) is None
    assert await count_rows(migrated_store) == (0, 0)


async def test_an_exception_after_the_loop_row_is_written_rolls_it_back(
    migrated_store: Store,
) -> None:
    statements: list[str] = []

    def fail_on_candidates(conn, cursor, statement, params, context, executemany) -> None:
        statements.append(statement)
        if statement.lstrip().upper().startswith("INSERT INTO CANDIDATES"):
            raise RuntimeError("disk on fire")

    engine = migrated_store.engine.sync_engine
    event.listen(engine, "before_cursor_execute", fail_on_candidates)
    try:
        with pytest.raises(RuntimeError, match="disk on fire"):
            await migrated_store.loops.save(loop())
    finally:
        event.remove(engine, "before_cursor_execute", fail_on_candidates)

    assert any(s.lstrip().upper().startswith("INSERT INTO LOOPS") for s in statements)
    assert await count_rows(migrated_store) == (0, 0)
    # The store is still usable afterwards.
    record = await migrated_store.loops.save(loop())
    assert await migrated_store.loops.get(record.id) == record


async def test_saving_an_existing_id_again_is_a_conflict_and_keeps_the_first(
    migrated_store: Store,
) -> None:
    first = await migrated_store.loops.save(loop())
    second = replace(first, model="other", candidates=(candidate(0, id="fresh"),))

    with pytest.raises(Conflict):
        await migrated_store.loops.save(second)

    assert await migrated_store.loops.get(first.id) == first


async def test_deleting_a_loop_deletes_its_candidates(migrated_store: Store) -> None:
    keep = await migrated_store.loops.save(loop())
    gone = await migrated_store.loops.save(loop())

    assert await migrated_store.loops.delete(gone.id, namespace="other") is False
    assert await migrated_store.loops.delete(gone.id) is True
    assert await migrated_store.loops.delete(gone.id) is False

    assert await migrated_store.loops.get(gone.id) is None
    assert await count_rows(migrated_store) == (1, len(keep.candidates))


async def test_get_many_keeps_the_requested_order(migrated_store: Store) -> None:
    a, b, c = [await migrated_store.loops.save(loop()) for _ in range(3)]

    found = await migrated_store.loops.get_many([c.id, "missing", a.id, b.id])

    assert [r.id for r in found] == [c.id, a.id, b.id]
    assert found[0] == c


async def test_list_filters(migrated_store: Store) -> None:
    def at(hours: int, **changes: object) -> LoopRecord:
        return loop(created_at=T0 + timedelta(hours=hours), candidates=(), **changes)

    old = await migrated_store.loops.save(at(0, initial_score=0.5, final_score=0.9))
    mid = await migrated_store.loops.save(at(1, model="llama", stop_reason="max_rounds"))
    new = await migrated_store.loops.save(at(2, initial_score=0.6, final_score=0.6))
    other = await migrated_store.loops.save(at(3, namespace="globex"))
    unscored = await migrated_store.loops.save(at(4, initial_score=None, final_score=None))

    async def ids(**filters: object) -> list[str]:
        items, _ = await migrated_store.loops.list(**filters)  # type: ignore[arg-type]
        return [s.id for s in items]

    assert await ids() == [unscored.id, other.id, new.id, mid.id, old.id]
    assert await ids(namespace="globex") == [other.id]
    assert await ids(since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=2)) == [mid.id]
    assert await ids(since=T0 + timedelta(hours=3)) == [unscored.id, other.id]
    assert await ids(model="llama") == [mid.id]
    assert await ids(stop_reason="max_rounds") == [mid.id]
    assert await ids(min_gain=0.3) == [old.id]
    assert await ids(min_gain=0.0, namespace="acme") == [new.id, mid.id, old.id]

    (summary,), _ = await migrated_store.loops.list(model="llama")
    assert (summary.namespace, summary.model, summary.rounds) == ("acme", "llama", 2)
    assert summary.score_gain == pytest.approx(0.2)
    assert summary.created_at == T0 + timedelta(hours=1)


async def test_list_pages_through_every_loop_once_newest_first(migrated_store: Store) -> None:
    # Three loops share a timestamp, so the id must break the tie.
    stamps = [T0, T0, T0, T0 + timedelta(seconds=1), T0 + timedelta(seconds=2)]
    saved = [await migrated_store.loops.save(loop(created_at=s, candidates=())) for s in stamps]
    saved += [
        await migrated_store.loops.save(loop(created_at=T0 - timedelta(days=d), candidates=()))
        for d in (1, 2)
    ]
    expected = [r.id for r in sorted(saved, key=lambda r: (r.created_at, r.id), reverse=True)]

    seen: list[str] = []
    page_sizes: list[int] = []
    cursor = None
    while True:
        items, cursor = await migrated_store.loops.list(limit=3, cursor=cursor)
        seen += [s.id for s in items]
        page_sizes.append(len(items))
        if cursor is None:
            break
        # A loop written between pages is newer than the cursor and does not shift pages.
        await migrated_store.loops.save(loop(created_at=T0 + timedelta(days=1), candidates=()))

    assert page_sizes == [3, 3, 1]
    assert seen == expected


async def test_a_full_last_page_has_no_next_cursor(migrated_store: Store) -> None:
    for _ in range(2):
        await migrated_store.loops.save(loop(candidates=()))

    page = await migrated_store.loops.list(limit=2)

    assert len(page.items) == 2
    assert page.next_cursor is None


async def test_a_forged_cursor_is_refused(migrated_store: Store) -> None:
    with pytest.raises(InvalidCursor):
        await migrated_store.loops.list(cursor="not-a-cursor")
    with pytest.raises(ValueError):
        await migrated_store.loops.list(limit=0)


def test_records_refuse_naive_datetimes_and_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        loop(created_at=datetime(2025, 1, 1))
    with pytest.raises(ValueError, match="kind"):
        candidate(0, kind="poem")
    with pytest.raises(ValueError, match="checklist_source"):
        loop(checklist_source="guess")

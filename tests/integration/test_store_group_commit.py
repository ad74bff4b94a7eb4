"""Concurrent saves share transactions, yet each loop lands whole or not at all."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from store.db import make_engine, make_sessionmaker
from store.group_commit import LoopWriter
from store.loops import LoopRepository
from store.migrate import upgrade
from store.records import CandidateRecord, LoopRecord


def record(bad: bool = False) -> LoopRecord:
    candidates = [CandidateRecord(position=0, round=0, kind="draft", text="t", total_score=0.5)]
    if bad:  # two candidates at one position break a constraint
        candidates.append(CandidateRecord(position=0, round=1, kind="rewrite", text="u"))
    return LoopRecord(namespace="n", model="m", backend="b", request={}, candidates=candidates)


async def counted_repo(url: str) -> tuple[LoopRepository, list[int], AsyncEngine]:
    """A loop repository on a migrated `url` that notes the size of every batch it writes."""
    engine = make_engine(url)
    await upgrade(engine)
    repo = LoopRepository(make_sessionmaker(engine))
    batches: list[int] = []
    real = repo.save_many

    async def counting(records):
        batches.append(len(records))
        await real(records)

    repo.save_many = counting  # type: ignore[method-assign]
    return repo, batches, engine


async def test_batched_saves_commit_good_loops_and_reject_only_the_bad_one(sqlite_url):
    repo, batches, engine = await counted_repo(sqlite_url)
    writer = LoopWriter(repo)
    good = [record() for _ in range(20)]
    bad = record(bad=True)
    results = await asyncio.gather(*(writer.save(r) for r in [*good[:10], bad, *good[10:]]),
                                   return_exceptions=True)
    assert [type(r).__name__ for r in results].count("Conflict") == 1
    assert isinstance(results[10], Exception)
    assert max(batches) > 1  # concurrent saves shared a transaction
    for r in good:
        loaded = await repo.get(r.id)
        assert loaded is not None and len(loaded.candidates) == 1
    assert await repo.get(bad.id) is None
    await writer.aclose()
    await engine.dispose()


async def test_a_window_gathers_records_that_arrive_apart_into_one_batch(sqlite_url):
    repo, batches, engine = await counted_repo(sqlite_url)
    writer = LoopWriter(repo, window=0.2)
    done = []
    for _ in range(5):  # one every 10 ms, none waiting for its commit
        done.append(writer.enqueue(record()))
        await asyncio.sleep(0.01)
    assert not any(d.done() for d in done)
    await asyncio.wait(done)
    assert batches == [5]
    await writer.aclose()
    await engine.dispose()

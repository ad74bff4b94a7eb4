"""bench.quality on test doubles: each method's row and summary, and every answer written to
the `--out` file with what the loop answered (its draft or a rewrite); a method run with memory
on says what it recalled, selected and remembered."""

from __future__ import annotations

import argparse
import asyncio
import json

from bench.quality import MEMORY, METHODS, Remembering, one, summary
from evals.judge import Judge
from evals.queries import load_queries
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.checklists import ChecklistProvider
from loops.controller import ReflectionLoop
from loops.memory_step import MemoryStep
from rubrics.cache import MemoryChecklistCache
from rubrics.packs import PackLibrary
from store import Store
from store.records import ExperienceRecord
from tests.banks import hashing_bank
from tests.unit.test_loops_random_upstream import RandomUpstream


def test_each_method_is_scored_and_a_loop_says_which_text_it_answered(tmp_path) -> None:
    query = sorted((q for q in load_queries() if q.language == "en"),
                   key=lambda q: len(q.query))[0]
    said = iter(f"A quatrain at dusk, take {i}." for i in range(20))
    writer = ScriptedBackend(default=lambda m, p, s: next(said), model="writer")
    judge_backend = RandomUpstream(3).backend
    args = argparse.Namespace(max_rounds=1, threshold=1.0)

    async def go() -> dict[str, dict]:
        store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'q.db'}")
        try:
            params = ChatParams(model="random")
            provider = ChecklistProvider(judge_backend, params, PackLibrary(),
                                         MemoryChecklistCache(), store.checklists)
            loop = ReflectionLoop(writer, judge_backend, provider, judge_params=params)
            judge = Judge(judge_backend, params, attempts=1, concurrency=1)
            messages = [{"role": "user", "content": query.query}]
            return {m: await one(m, loop, writer, judge, query, messages,
                                 ChatParams(model="writer"), args) for m in METHODS}
        finally:
            await store.close()

    rows = asyncio.run(go())
    assert rows["direct"]["answer"] == "A quatrain at dusk, take 0."
    assert rows["direct"]["calls"] == 1
    # under `auto` a judged round of a one-line draft does not fit six drafts' tokens
    assert rows["auto"]["stop"] == "budget" and rows["auto"]["calls"] == 1
    for method in ("auto", "checks", "holistic", "joint"):
        row = rows[method]
        assert row["answer_kind"] in ("draft", "rewrite")
        assert row["calls"] > 1 or method == "auto"
        assert (row["answer_kind"] == "draft") == (row["answer_round"] == 0)
        assert 0 <= row["score"] <= 1
        figures = summary([row])
        assert figures["rewrite_answers"] == int(row["answer_kind"] != "draft")
        assert figures["judged"] == 1 and figures["degraded"] == int(row["degraded"])
        assert figures["stops"] == {row["stop"]: 1}
    json.dumps(rows)  # what --out writes


def test_a_method_with_memory_recalls_over_the_sequence_and_counts_what_it_kept(
        tmp_path) -> None:
    queries = sorted((q for q in load_queries() if q.language == "en"),
                     key=lambda q: len(q.query))[:2]
    said = iter(f"A slogan for the shop, take {i}." for i in range(40))
    writer = ScriptedBackend(default=lambda m, p, s: next(said), model="writer")
    judge_backend = RandomUpstream(5).backend
    args = argparse.Namespace(max_rounds=1, threshold=1.0)

    async def go() -> list[dict]:
        store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
        bank = await hashing_bank(store, tmp_path / "index")
        try:
            await bank.remember(ExperienceRecord(
                namespace="bench", key="short verse", text="Open on a concrete image.",
                embedding_model=bank.embedder.name))
            params = ChatParams(model="random")
            provider = ChecklistProvider(judge_backend, params, PackLibrary(),
                                         MemoryChecklistCache(), store.checklists)
            # hashing vectors of unrelated text are far apart: every hit is offered
            step = MemoryStep(bank, judge_backend, writer, params, floor=-1.0)
            loop = ReflectionLoop(writer, judge_backend, provider, judge_params=params,
                                  memory=step)
            judge = Judge(judge_backend, params, attempts=1, concurrency=1)
            rows = []
            for q in queries:
                rows.append(await one("joint" + MEMORY, loop, writer, judge, q,
                                      [{"role": "user", "content": q.query}],
                                      ChatParams(model="writer"), args,
                                      Remembering(step, store.loops)))
            kept = await store.experiences.count("bench")
            return rows, kept
        finally:
            await bank.aclose()
            await store.close()

    rows, kept = asyncio.run(go())
    # the first loop recalls the seeded experience; the second, that and what the first left
    assert rows[0]["recalled"] == 1
    assert rows[1]["recalled"] == 1 + rows[0]["remembered"]
    figures = summary(rows)
    assert figures["recalled"] == 2
    assert figures["selected"] == sum(row["selected"] > 0 for row in rows)
    assert figures["remembered"] == sum(row["remembered"] for row in rows) == kept - 1
    gains = [row["memory_gain"] for row in rows if row["memory_gain"] is not None]
    assert (figures["memory_gain"] is None) == (not gains)
    json.dumps(rows)  # what --out writes

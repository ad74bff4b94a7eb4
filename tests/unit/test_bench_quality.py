"""bench.quality on test doubles: each method's row and summary, and every answer written to
the `--out` file with what the loop answered (its draft or a rewrite)."""

from __future__ import annotations

import argparse
import asyncio
import json

from bench.quality import METHODS, one, summary
from evals.judge import Judge
from evals.queries import load_queries
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.checklists import ChecklistProvider
from loops.controller import ReflectionLoop
from rubrics.cache import MemoryChecklistCache
from rubrics.packs import PackLibrary
from store import Store
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

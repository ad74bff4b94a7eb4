"""kill -9 with 48 loops in flight: what was answered is stored whole, nothing is half-written,
and the server restarts clean on the same data directory."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import API_KEY, MODEL, Fake, Server

LOOPS = 48


def loop_request(i: int) -> dict[str, Any]:
    return {"model": MODEL,
            "messages": [{"role": "user", "content": f"Write a short note to neighbour {i} "
                                                     "about the new bin collection day."}],
            "reflection": {"max_rounds": i % 4, "threshold": 1.0}}


def stored(db: Path) -> tuple[dict[str, tuple[int, str | None]], dict[str, list[int]], str]:
    with sqlite3.connect(db) as conn:
        loops = {row[0]: (row[1], row[2]) for row in
                 conn.execute("SELECT id, rounds, finished_at FROM loops")}
        candidates: dict[str, list[int]] = {}
        for loop_id, position in conn.execute("SELECT loop_id, position FROM candidates"):
            candidates.setdefault(loop_id, []).append(position)
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    return loops, candidates, integrity


def test_kill_9_mid_flight_leaves_whole_loops_and_restarts_clean(
        writer: Fake, tmp_path_factory: pytest.TempPathFactory) -> None:
    data_dir = tmp_path_factory.mktemp("crash")
    server = Server(writer, data_dir, memory_enabled="false")
    answered: list[str] = []
    writer.control("config", {"latency": 0.1})
    try:
        def client(i: int) -> None:
            try:
                resp = httpx.post(server.base_url + "/chat/completions", json=loop_request(i),
                                  headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60)
            except httpx.TransportError:
                return  # the server died under it
            if resp.status_code == 200:
                answered.append(resp.json()["reflection"]["loop_id"])

        threads = [threading.Thread(target=client, args=(i,)) for i in range(LOOPS)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(answered) < 4 and time.monotonic() < deadline:  # the quick ones are back
            time.sleep(0.02)
        in_flight = writer.stats()["in_flight"]
        server.proc.kill()  # SIGKILL: no shutdown, no flush
        server.proc.wait(timeout=10)
        for t in threads:
            t.join(timeout=30)
    finally:
        writer.control("config", {"latency": 0.0})
        server.close()

    assert len(answered) >= 4 and in_flight > 0  # it died with loops under way
    assert len(answered) < LOOPS
    loops, candidates, integrity = stored(data_dir / "redraft.db")
    assert integrity == "ok"
    assert set(answered) <= set(loops)  # every answered loop was durable before its answer
    assert set(candidates) <= set(loops)  # no candidate without its loop
    for loop_id, (rounds, finished_at) in loops.items():  # every stored loop is whole
        assert finished_at is not None
        assert sorted(candidates.get(loop_id, [])) == list(range(rounds + 1)), loop_id

    restarted = Server(writer, data_dir, memory_enabled="false")
    try:
        resp = httpx.post(restarted.base_url + "/chat/completions", json=loop_request(1),
                          headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60)
        assert resp.status_code == 200, resp.text
        after, _, _ = stored(data_dir / "redraft.db")
        assert set(after) == set(loops) | {resp.json()["reflection"]["loop_id"]}
    finally:
        restarted.close()

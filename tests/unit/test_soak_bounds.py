"""What keeps the loop path's memory bounded, and the soak benchmark's arithmetic."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import memory.embedders as embedders
from app.http.metrics import Metrics
from app.openai.loop_service import LoopService
from bench.soak import parse_mix, trend
from generation.scripted import ScriptedBackend


async def test_remembering_past_the_cap_is_skipped_and_counted() -> None:
    metrics = Metrics()
    chat = LoopService(ScriptedBackend(model="tiny"), metrics, "tiny", max_remembering=3)
    release = asyncio.Event()
    started = 0

    async def remember() -> None:
        nonlocal started
        started += 1
        await release.wait()

    for _ in range(10):
        chat._after(remember)
    await asyncio.sleep(0)
    assert started == 3 and len(chat._background) == 3  # the other 7 never started
    assert metrics.errors.labels("remember_skipped")._value.get() == 7

    release.set()
    await chat.aclose()
    assert not chat._background
    chat._after(remember)  # room again once they finished
    await chat.aclose()
    assert started == 4


async def test_the_embedder_gives_freed_memory_back_between_batches(monkeypatch) -> None:
    trims = []
    monkeypatch.setattr(embedders, "TRIM_EVERY", 0.0)
    monkeypatch.setattr(embedders, "release_freed_memory", lambda: trims.append(1))
    embedder = embedders.HashingEmbedder(16)
    for _ in range(3):
        vectors = await embedder.embed(["a spring update for the bike shop"])
        assert vectors.shape == (1, 16) and np.isclose(np.linalg.norm(vectors[0]), 1.0)
    await asyncio.sleep(0.05)
    assert len(trims) == 3


def test_release_freed_memory_is_safe_to_call() -> None:
    embedders.release_freed_memory()


def test_mix_parsing() -> None:
    assert parse_mix("loop=0.25,stream=0.125") == {"loop": 0.25, "stream": 0.125}
    assert parse_mix("") == {"loop": 0.0, "stream": 0.0}
    for bad in ("loop=0.8,stream=0.5", "loops=0.1", "loop=x", "loop=-0.1"):
        with pytest.raises(Exception, match="."):
            parse_mix(bad)


def test_trend_is_a_least_squares_slope_and_growth() -> None:
    slope, growth = trend([(0.0, 100.0), (10.0, 101.0), (20.0, 102.0)])
    assert slope == pytest.approx(0.1) and growth == pytest.approx(2.0)
    _, noisy_but_flat = trend([(0.0, 500.0), (10.0, 520.0), (20.0, 500.0), (30.0, 520.0)])
    assert abs(noisy_but_flat) < 3.0
    assert trend([(0.0, 1.0)]) == (0.0, 0.0)

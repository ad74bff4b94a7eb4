"""One namespace's vectors in FAISS: exact search while small, IVF past a threshold.

Synchronous and not thread-safe: `memory.index.VectorIndex` calls it from worker threads
under its lock. Experience ids are strings; FAISS wants int64 labels, so each shard hands out
its own labels and keeps the mapping both ways. An updated vector gets a fresh label.

Why IVF rather than HNSW: on a 2-core CPU, HNSW inserts ran at under 1k vectors/s (a
million-vector rebuild would take half an hour), and HNSW cannot delete; IVF-Flat trains in
seconds on a sample, adds at tens of thousands per second, and removes ids in place.

Tuning, measured on clustered 1M x 384 (bench/memory.py, 2 cores): recall is set by how well
k-means places the lists, not by the centroid search. 4,000 lists trained on 25 points each
reached recall@5 0.947 at 32 probes (flat or HNSW centroid search alike) and 0.96 only at 64;
64 points each gave 0.98 at 16 probes; 8,000 lists on 16 points each gave 0.994 at 16 probes
in 0.6 ms. The centroids are searched exactly (a flat index): an HNSW graph over them made
bulk adds 4x slower (220 s against 50 s for 1M) and searches no better.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.embedders import require


@dataclass(frozen=True, slots=True)
class IndexConfig:
    approximate_from: int = 20_000  # vectors in a namespace before IVF replaces exact search
    nprobe: int = 0  # lists probed per search; 0: derived from the number of lists
    retrain_growth: float = 4.0  # retrain IVF once a namespace grows this much since training
    train_sample: int = 16  # training points per IVF list
    train_iterations: int = 8
    lists_per_sqrt: float = 8.0  # IVF lists per square root of the count (FAISS: 4 to 16)
    use_gpu: bool | None = None  # None: when FAISS reports a GPU (exact search only)

    def lists_for(self, count: int) -> int:
        return max(16, min(65_536, int(self.lists_per_sqrt * math.sqrt(max(count, 1)))))

    def probes_for(self, lists: int) -> int:
        # 8,000 lists (1M vectors): 24 probes, recall@5 0.99 on the clustered benchmark.
        return self.nprobe or max(24, lists // 333)


def faiss_module() -> Any:
    return require("faiss")


class Shard:
    def __init__(self, dim: int, config: IndexConfig, gpu: bool = False) -> None:
        self.dim = dim
        self.config = config
        self.gpu = gpu
        self.labels: dict[str, int] = {}  # experience id -> label
        self.ids: dict[int, str] = {}  # label -> experience id
        self.digests: dict[str, int] = {}  # experience id -> digest of the embedded text
        self.next_label = 0
        self.trained_count = 0  # size when the IVF lists were trained; 0 while exact
        self.index = self._flat()
        self._gpu_copy: Any = None
        # Changes made while a rebuild runs off the lock, replayed onto the new index.
        self._journal: list[tuple[np.ndarray, np.ndarray | None]] | None = None

    @property
    def kind(self) -> str:
        return "ivf" if self.trained_count else "flat"

    def __len__(self) -> int:
        return len(self.labels)

    def _flat(self) -> Any:
        faiss = faiss_module()
        return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))

    def upsert(self, ids: list[str], vectors: np.ndarray, digests: list[int]) -> None:
        if not ids:
            return
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(f"vectors {vectors.shape} for {len(ids)} ids of dim {self.dim}")
        replaced = [self.labels[i] for i in ids if i in self.labels]
        if replaced:
            self._remove_labels(replaced)
        fresh = np.arange(self.next_label, self.next_label + len(ids), dtype=np.int64)
        self.next_label += len(ids)
        for experience_id, label, digest in zip(ids, fresh.tolist(), digests, strict=True):
            self.labels[experience_id] = label
            self.ids[label] = experience_id
            self.digests[experience_id] = digest
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if not self.index.ntotal and self._journal is None \
                and len(ids) >= self.config.approximate_from:
            # A bulk load (a rebuild from SQL): train on it directly, not via exact first.
            self.index, self.trained_count = self.build(fresh, vectors, approximate=True)
            self._gpu_copy = None
            return
        self.index.add_with_ids(vectors, fresh)
        if self._journal is not None:
            self._journal.append((fresh, vectors))
        self._gpu_copy = None

    def remove(self, ids: list[str]) -> int:
        labels = [self.labels[i] for i in ids if i in self.labels]
        self._remove_labels(labels)
        return len(labels)

    def _remove_labels(self, labels: list[int]) -> None:
        if not labels:
            return
        removed = np.asarray(labels, dtype=np.int64)
        self.index.remove_ids(removed)
        if self._journal is not None:
            self._journal.append((removed, None))
        for label in labels:
            experience_id = self.ids.pop(label)
            del self.labels[experience_id]
            del self.digests[experience_id]
        self._gpu_copy = None

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Top `k` (id, cosine) per query row, best first."""
        if not self.labels or k <= 0:
            return [[] for _ in range(len(queries))]
        k = min(k, len(self.labels))
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if self.trained_count:
            faiss = faiss_module()
            params = faiss.SearchParametersIVF(nprobe=self.config.probes_for(self.index.nlist))
            scores, labels = self.index.search(queries, k, params=params)
        elif self.gpu:
            scores, labels = self._gpu_search(queries, k)
        else:
            scores, labels = self.index.search(queries, k)
        return [
            [(self.ids[int(lab)], float(s)) for s, lab in zip(srow, lrow, strict=True) if lab >= 0]
            for srow, lrow in zip(scores, labels, strict=True)
        ]

    def _gpu_search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        # A GPU copy of the exact index, rebuilt after a change: brute force on a GPU stays
        # fast well past the size at which the CPU needs IVF.
        faiss = faiss_module()
        if self._gpu_copy is None:
            resources = faiss.StandardGpuResources()
            flat = faiss.index_cpu_to_gpu(resources, 0, faiss.downcast_index(self.index.index))
            id_map = faiss.vector_to_array(self.index.id_map).copy()
            self._gpu_copy = (resources, flat, id_map)
        _, flat, id_map = self._gpu_copy
        scores, positions = flat.search(queries, k)
        return scores, np.where(positions >= 0, id_map[np.maximum(positions, 0)], -1)

    def vector(self, experience_id: str) -> np.ndarray:
        """The stored vector of one experience (KeyError if absent)."""
        return self.index.reconstruct(self.labels[experience_id])

    def contents(self) -> tuple[np.ndarray, np.ndarray]:
        """(labels, vectors) of everything stored, in no particular order."""
        faiss = faiss_module()
        if not self.trained_count:
            labels = faiss.vector_to_array(self.index.id_map).astype(np.int64)
            flat = faiss.downcast_index(self.index.index)
            vectors = faiss.vector_to_array(flat.codes).view(np.float32).reshape(-1, self.dim)
            return labels, vectors.copy()
        invlists = self.index.invlists
        label_parts, vector_parts = [], []
        for lst in range(self.index.nlist):
            size = invlists.list_size(lst)
            if not size:
                continue
            label_parts.append(faiss.rev_swig_ptr(invlists.get_ids(lst), size).copy())
            codes = faiss.rev_swig_ptr(invlists.get_codes(lst), size * invlists.code_size)
            vector_parts.append(np.frombuffer(codes.copy(), dtype=np.float32).reshape(size, -1))
        if not label_parts:
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        return np.concatenate(label_parts).astype(np.int64), np.concatenate(vector_parts)

    def wanted(self) -> bool | None:
        """True: should become IVF (or be retrained); False: should become exact; None: fine."""
        count, threshold = len(self.labels), self.config.approximate_from
        if self._journal is not None:
            return None
        if not self.trained_count:
            return True if count >= threshold else None
        if count >= self.trained_count * self.config.retrain_growth:
            return True
        # Hysteresis: a bank hovering at the threshold does not flip on every change.
        return False if count < threshold // 2 else None

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """Copy out the contents and start journaling changes for `install`."""
        self._journal = []
        return self.contents()

    def build(self, labels: np.ndarray, vectors: np.ndarray, approximate: bool) -> tuple[Any, int]:
        """A new index over a snapshot; touches no shard state, so it runs off the lock."""
        faiss = faiss_module()
        faiss.omp_set_num_threads(os.cpu_count() or 1)  # this worker thread may have had 1
        if not approximate:
            index, trained = self._flat(), 0
        else:
            lists = min(self.config.lists_for(len(labels)), len(labels))
            quantizer = faiss.IndexFlatIP(self.dim)
            index = faiss.IndexIVFFlat(quantizer, self.dim, lists, faiss.METRIC_INNER_PRODUCT)
            index.cp.niter = self.config.train_iterations
            index.cp.max_points_per_centroid = self.config.train_sample
            # A deliberate small sample: FAISS would warn below 39 points per list.
            index.cp.min_points_per_centroid = min(39, self.config.train_sample)
            sample = np.random.default_rng(len(labels)).permutation(len(labels))
            index.train(vectors[sample[: lists * self.config.train_sample]])
            # A hash table from label to position makes remove_ids proportional to the
            # removed count, not to the whole index.
            index.set_direct_map_type(faiss.DirectMap.Hashtable)
            trained = max(len(labels), 1)
        if len(labels):
            index.add_with_ids(vectors, labels)
        return index, trained

    def install(self, index: Any, trained_count: int) -> None:
        for labels, vectors in self._journal or ():
            if vectors is None:
                index.remove_ids(labels)
            else:
                index.add_with_ids(vectors, labels)
        self._journal = None
        self.index, self.trained_count, self._gpu_copy = index, trained_count, None

    def abandon(self) -> None:
        self._journal = None

    def rebuild(self, approximate: bool) -> None:
        """Snapshot, build and install in one go (the caller holds the lock throughout)."""
        labels, vectors = self.snapshot()
        try:
            self.install(*self.build(labels, vectors, approximate))
        finally:
            self._journal = None

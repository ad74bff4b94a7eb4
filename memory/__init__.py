"""The memory bank of reflection experiences (Writer-R1 §3.3.2): embed, index, recall.

Importing this package loads neither FAISS nor an embedding model: both come from the
`embed` extra and are imported when first used.
"""

from memory.bank import BankConfig, Hit, MemoryBank, Remembered
from memory.embedders import (
    BGEM3Embedder,
    Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    build_embedder,
    open_embedder,
)
from memory.index import IndexStats, RebuildReport, VectorIndex
from memory.notices import CHANNEL, LocalNotices, Notice, Notices, RedisNotices
from memory.shard import IndexConfig

__all__ = [
    "BGEM3Embedder",
    "BankConfig",
    "CHANNEL",
    "Embedder",
    "EmbedderUnavailable",
    "HashingEmbedder",
    "Hit",
    "IndexConfig",
    "IndexStats",
    "LocalNotices",
    "MemoryBank",
    "Notice",
    "Notices",
    "RebuildReport",
    "RedisNotices",
    "Remembered",
    "SentenceTransformerEmbedder",
    "VectorIndex",
    "build_embedder",
    "open_embedder",
]

"""Opening the memory bank from settings: embedder, FAISS index, change notices."""

from __future__ import annotations

from typing import Any

from app.settings import Settings
from generation.base import Backend
from generation.types import ChatParams
from loops.memory_step import MemoryStep
from memory.bank import BankConfig, MemoryBank
from memory.embedders import EmbedderUnavailable, open_embedder
from memory.index import IndexConfig, VectorIndex
from memory.notices import RedisNotices
from store.experiences import ExperienceRepository


async def open_memory(settings: Settings, experiences: ExperienceRepository,
                      redis: Any | None) -> MemoryBank | None:
    """The started bank (index reconciled with SQL), or None when memory is disabled."""
    cfg = settings.memory
    if not cfg.enabled:
        return None
    try:
        # beside a local model, the embedder leaves the cores' OpenMP team to its decoder
        embedder = await open_embedder(cfg.embedder, cfg.embedder_path,
                                       threads=cfg.embedder_threads,
                                       shared=settings.resolved_backend == "local")
    except EmbedderUnavailable as exc:
        raise EmbedderUnavailable(
            f"{exc.message}; or set REDRAFT_MEMORY_ENABLED=false to serve without the "
            "memory bank") from None
    index = VectorIndex(settings.data.dir / "memory", embedder.name, embedder.dim,
                        IndexConfig(approximate_from=cfg.approximate_from))
    notices = RedisNotices(redis) if redis is not None else None
    bank = MemoryBank(experiences, embedder, index, notices=notices,
                      config=BankConfig(duplicate_key=cfg.duplicate_key,
                                        duplicate_text=cfg.duplicate_text))
    await bank.start()
    return bank


def memory_step(settings: Settings, bank: MemoryBank, judge: Backend, writer: Backend,
                judge_params: ChatParams) -> MemoryStep:
    """The loop's recall, selection, rewrite and remembering over `bank`, as configured."""
    m = settings.memory
    return MemoryStep(bank, judge, writer, judge_params, k=m.recall_k, select_max=m.select_max,
                      margin=m.remember_margin, floor=m.recall_floor)

"""Batches of like lengths, and how much of a batch is padding.

Without padding-free packing (which needs FlashAttention, see `kernels`), a batch is padded to
its longest row, and rows drawn in random order waste a large share of every step on pad
tokens when their lengths vary. transformers' length-grouped sampler
(`train_sampling_strategy="group_by_length"`) shuffles, cuts the order into mega-batches of 50
batches, and sorts each by length, so a batch holds rows of about one length. `CountingCollator`
measures the share of padding the training batches actually carried, for the report;
`padding_share` computes it for an order of rows, for tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

GROUPED = {"train_sampling_strategy": "group_by_length"}


def padding_share(lengths: Sequence[int], batch_size: int,
                  order: Sequence[int] | None = None) -> float:
    """Pad positions / all positions when rows are taken in `order` (default: as given) in
    batches of `batch_size`, each padded to its longest row."""
    order = list(range(len(lengths))) if order is None else list(order)
    real = padded = 0
    for start in range(0, len(order), batch_size):
        batch = [lengths[i] for i in order[start:start + batch_size]]
        real += sum(batch)
        padded += max(batch) * len(batch)
    return 1.0 - real / padded if padded else 0.0


def shuffled_order(count: int, seed: int = 0) -> list[int]:
    """The random order the default sampler draws rows in."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return torch.randperm(count, generator=generator).tolist()


def grouped_order(lengths: Sequence[int], batch_size: int, seed: int = 0) -> list[int]:
    """The order transformers' length-grouped sampler draws rows in."""
    import torch
    from transformers.trainer_pt_utils import get_length_grouped_indices

    generator = torch.Generator().manual_seed(seed)
    return get_length_grouped_indices(list(lengths), batch_size, generator=generator)


class CountingCollator:
    """A data collator that counts the real and the padded token positions it hands out."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.real = 0
        self.positions = 0

    def __call__(self, examples: list[Any]) -> Any:
        batch = self.inner(examples)
        ids = batch["input_ids"]
        mask = batch.get("attention_mask") if hasattr(batch, "get") else None
        self.positions += int(ids.numel())
        self.real += int(mask.sum()) if mask is not None else int(ids.numel())
        return batch

    def share(self) -> float | None:
        """Padding share of everything collated so far (None before any batch)."""
        return round(1.0 - self.real / self.positions, 4) if self.positions else None


def count_padding(trainer: Any) -> CountingCollator:
    """Wrap `trainer`'s collator (before `train()` builds its data loader) to count padding."""
    counter = CountingCollator(trainer.data_collator)
    trainer.data_collator = counter
    return counter

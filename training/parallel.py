"""What the processes of a data-parallel run (`accelerate launch`) share: gathering small
Python objects from every process, summing counts, and who writes.

Outside a distributed run every function acts on this process alone, so the same code runs
under one process and under many. Each call is collective: every process must make it, in the
same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def world_size() -> int:
    """Processes in the initialised process group (1 when there is none)."""
    import torch.distributed as dist

    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    import torch.distributed as dist

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def close() -> None:
    """Wait for every process, then take down the process group (nothing when there is none).

    A gloo group left to the interpreter's exit can abort the process that exits first
    while its peers still talk to it ("terminate called without an active exception")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def gather(obj: Any) -> list[Any]:
    """`obj` of every process, in rank order (this process's alone when there is one)."""
    if world_size() == 1:
        return [obj]
    import torch.distributed as dist

    out: list[Any] = [None] * world_size()
    dist.all_gather_object(out, obj)
    return out


def summed(counts: Mapping[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    """`counts` with the numbers under `keys` (at any depth) summed over every process; every
    other value is this process's (state the processes already share, such as the reference
    pointers)."""
    return _sum(gather(dict(counts)), keys)


def _sum(every: list[Any], keys: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, mine in every[0].items():
        values = [d.get(key) if isinstance(d, Mapping) else None for d in every]
        if isinstance(mine, Mapping):
            out[key] = _sum(values, keys)
        elif key in keys and all(isinstance(v, int | float) and not isinstance(v, bool)
                                 for v in values):
            out[key] = sum(values)
        else:
            out[key] = mine
    return out

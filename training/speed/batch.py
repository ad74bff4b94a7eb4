"""A stage's per-device batch, gradient accumulation and activation checkpointing, made concrete.

`--batch-size` and `--grad-accum` may be left out. On the CPU they are then 8 and 1 (as they
always were), and `--activation-checkpointing auto` keeps activations when the host's available
memory (this process's share of it, the cgroup's limit where one is set) holds the batch's rows
of the longest length without recomputing them (recomputing costs time: docs/training.md).
With CUDA present, what was not given is planned from the free GPU memory
(`training.speed.memory.plan_batch`), and `--activation-checkpointing auto` keeps activations
whenever the batch fits without recomputing them. The config the stage trains with carries the
result, and the report says where each number came from.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any

from training.errors import UsageError
from training.speed.memory import (
    GIB,
    available_host_bytes,
    free_gpu_bytes,
    model_shape,
    plan_batch,
    rows_that_fit,
)

DEFAULT_BATCH = 8
DEFAULT_ACCUM = 1
LORA_TRAINABLE = 0.05  # share of weights a LoRA adapter trains, rounded up (for the memory plan)


def with_batch(config: Any, seq_len: Callable[[], int], *, stage: str, max_rows: int = 64,
               multiple_of: int = 1, frozen_copies: int = 0) -> tuple[Any, dict[str, Any]]:
    """(`config` with concrete batch_size, grad_accum and activation_checkpointing "on"/"off",
    what the report says about them). `seq_len()` is the longest row in tokens, asked only
    where a plan needs it. A step's rows are made a multiple of `multiple_of` (GSPO's group)."""
    given_batch, given_accum = config.batch_size, config.grad_accum
    forced = {"on": True, "off": False}.get(config.activation_checkpointing)
    free = free_gpu_bytes()
    report: dict[str, Any] = {"chosen": "given" if given_batch else "default"}
    if free is None:
        batch = given_batch or DEFAULT_BATCH
        accum = given_accum or DEFAULT_ACCUM
        ckpt = forced if forced is not None else _checkpoint_on_the_cpu(
            config, seq_len, batch, frozen_copies, report)
    else:
        length = seq_len()
        shape = model_shape(config.model)
        trainable = LORA_TRAINABLE if config.lora else 1.0
        report.update(free_gib=round(free / GIB, 2), seq_len=length)
        if given_batch is None:
            plan = plan_batch(free, shape, length, min_rows=max(DEFAULT_BATCH, multiple_of),
                              max_rows=max_rows, multiple_of=multiple_of, trainable=trainable,
                              frozen_copies=frozen_copies, checkpointing=forced)
            batch, ckpt = plan.batch_size, plan.activation_checkpointing
            accum = given_accum or plan.grad_accum
            report["chosen"] = "memory"
        else:
            batch = given_batch
            accum = given_accum or DEFAULT_ACCUM
            fits = rows_that_fit(free, shape, length, False, trainable, frozen_copies) >= batch
            ckpt = forced if forced is not None else not fits
        if report["chosen"] == "memory" or given_accum is None:
            print(f"{stage}: --batch-size {batch} --grad-accum {accum}, activation "
                  f"checkpointing {'on' if ckpt else 'off'}: planned from {free / GIB:.1f} GiB "
                  f"free GPU memory for rows of up to {length} tokens", file=sys.stderr)
    if (batch * accum) % multiple_of:
        raise UsageError(f"--batch-size x --grad-accum ({batch} x {accum}) must be a multiple "
                         f"of --num-generations ({multiple_of}); give both")
    report.update(batch_size=batch, grad_accum=accum, activation_checkpointing=ckpt)
    resolved = dataclasses.replace(config, batch_size=batch, grad_accum=accum,
                                   activation_checkpointing="on" if ckpt else "off")
    return resolved, report


def _checkpoint_on_the_cpu(config: Any, seq_len: Callable[[], int], batch: int,
                           frozen_copies: int, report: dict[str, Any]) -> bool:
    """Whether to recompute activations on the CPU: only where this process's share of the
    host's available memory does not hold `batch` rows of the longest length without. The
    plan's bytes are bf16's; the CPU trains in fp32, so the budget is halved."""
    available = available_host_bytes()
    if available is None:
        return True
    length = seq_len()
    share = available // max(1, int(os.environ.get("LOCAL_WORLD_SIZE") or 1))  # per host
    trainable = LORA_TRAINABLE if config.lora else 1.0
    rows = rows_that_fit(share // 2, model_shape(config.model), length, False, trainable,
                         frozen_copies)
    report.update(host_available_gib=round(available / GIB, 2), seq_len=length)
    return rows < batch

"""The per-device batch, gradient accumulation and activation checkpointing that fit the free
GPU memory, when the user gave no `--batch-size` or `--grad-accum`.

`plan_batch` is a pure function of (free bytes, model shape, sequence length), so it is tested
on the CPU; the stages call it only where CUDA is present (on the CPU, `rows_that_fit` of the
host's available memory decides activation checkpointing alone). Its memory model, in bytes, for a
model of P parameters, L layers, width h and MLP width i, trained in bf16 with AdamW:

    fixed      = P x (2 + trainable x (2 + 8)) + 2 P x frozen copies + reserve
                 weights, gradients and two fp32 moments; GSPO's reference model is a copy
    per token  = L x (10 h + 4 i) x 2 + 2 V      activations kept for the backward pass, and
                                                  a bf16 logit row (vocabulary V) of slack
    checkpointed per token = L x 2 h + (10 h + 4 i) x 2 + 2 V
                 each layer's input, one layer recomputed at a time

and a step is given a fraction (USABLE) of the free bytes. The rule: a step takes at least
`min_rows` rows (the CPU default, 8; for GSPO a multiple of the group G); the largest micro-batch
up to `max_rows` that holds at least that many rows without checkpointing wins (recomputing
costs a third more compute); else the largest with checkpointing; else the step is split into
gradient-accumulation micro-batches that fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIB = 1024 ** 3
USABLE = 0.85            # share of the free bytes a step may use (allocator slack, CUDA context)
RESERVE = 2 * GIB        # kernels' workspaces, the data loader's pinned buffers, fragmentation
LAYER_HIDDEN = 10        # saved tensors of width h per layer and token (norms, q/k/v, attention)
LAYER_MLP = 4            # saved tensors of width i per layer and token (gate, up, act, product)
OPTIMIZER_BYTES = 8      # AdamW's two moments in fp32, per trainable parameter


@dataclass(frozen=True)
class ModelShape:
    parameters: int
    layers: int
    hidden: int
    intermediate: int
    vocab: int


@dataclass(frozen=True)
class BatchPlan:
    batch_size: int
    grad_accum: int
    activation_checkpointing: bool
    tokens_fit: int          # tokens per micro-batch the memory holds, as chosen

    def report(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "grad_accum": self.grad_accum,
                "activation_checkpointing": self.activation_checkpointing,
                "tokens_fit": self.tokens_fit}


def shape_of(config: Any, parameters: int) -> ModelShape:
    """The shape of a transformers model config (a text config for multimodal ones)."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return ModelShape(parameters=parameters, layers=text.num_hidden_layers,
                      hidden=text.hidden_size,
                      intermediate=getattr(text, "intermediate_size", 4 * text.hidden_size),
                      vocab=text.vocab_size)


def fixed_bytes(shape: ModelShape, trainable: float = 1.0, frozen_copies: int = 0) -> int:
    """Weights, gradients, optimiser state and frozen copies (a reference model)."""
    p = shape.parameters
    return int(p * (2 + trainable * (2 + OPTIMIZER_BYTES)) + 2 * p * frozen_copies) + RESERVE


def token_bytes(shape: ModelShape, checkpointing: bool) -> int:
    """Activation bytes one token of a micro-batch holds until its backward pass."""
    layer = (LAYER_HIDDEN * shape.hidden + LAYER_MLP * shape.intermediate) * 2
    logits = 2 * shape.vocab
    if checkpointing:
        return shape.layers * 2 * shape.hidden + layer + logits
    return shape.layers * layer + logits


def rows_that_fit(free_bytes: int, shape: ModelShape, seq_len: int, checkpointing: bool,
                  trainable: float = 1.0, frozen_copies: int = 0) -> int:
    """Rows of `seq_len` tokens one micro-batch can hold (0: not even one)."""
    budget = free_bytes * USABLE - fixed_bytes(shape, trainable, frozen_copies)
    if budget <= 0:
        return 0
    return int(budget // (token_bytes(shape, checkpointing) * max(1, seq_len)))


def plan_batch(free_bytes: int, shape: ModelShape, seq_len: int, *, min_rows: int = 8,
               max_rows: int = 64, multiple_of: int = 1, trainable: float = 1.0,
               frozen_copies: int = 0, checkpointing: bool | None = None) -> BatchPlan:
    """The micro-batch and accumulation for rows of up to `seq_len` tokens (see the module
    docstring). A step's rows (batch x accumulation) are a multiple of `multiple_of`;
    `checkpointing` forces activation checkpointing on or off (None: whichever fits)."""
    step = -(-max(min_rows, 1) // multiple_of) * multiple_of  # least rows per step
    limit = max(max_rows, step)

    def fit(ckpt: bool) -> int:
        return rows_that_fit(free_bytes, shape, seq_len, ckpt, trainable, frozen_copies)

    options = [False, True] if checkpointing is None else [checkpointing]
    for ckpt in options:
        rows = min(fit(ckpt), limit) // multiple_of * multiple_of
        if rows >= step:
            return BatchPlan(rows, 1, ckpt, rows * seq_len)
    ckpt = options[-1]
    rows = max(1, fit(ckpt))
    # The largest divisor of the step that fits; the step is accumulated from it.
    batch = max(d for d in range(1, step + 1) if step % d == 0 and d <= rows)
    return BatchPlan(batch, step // batch, ckpt, batch * seq_len)


def free_gpu_bytes() -> int | None:
    """Free bytes on the current CUDA device; None without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    free, _total = torch.cuda.mem_get_info()
    return int(free)


def available_host_bytes(meminfo: str = "/proc/meminfo",
                         cgroup: str = "/sys/fs/cgroup") -> int | None:
    """Bytes of host memory a new allocation can take: the kernel's MemAvailable, capped by
    the cgroup's (v2) limit less its use where a container sets one; None where neither is
    known."""
    available = None
    try:
        for line in Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path(cgroup, "memory.max").read_text().strip()
        if limit != "max":
            left = int(limit) - int(Path(cgroup, "memory.current").read_text().strip())
            available = left if available is None else min(available, left)
    except (OSError, ValueError):
        pass
    return None if available is None else max(0, available)


def model_shape(model_dir: str) -> ModelShape:
    """The shape of the model in `model_dir`, its parameters counted without loading weights."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model_dir)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return shape_of(config, sum(p.numel() for p in model.parameters()))

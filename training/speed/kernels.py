"""The kernels a stage trains with, from what is installed: the attention implementation, Liger's
fused layer kernels and torch's fused AdamW — the last two on CUDA only.

Attention: FlashAttention where a package of it is installed and the GPU runs it (flash-attn 2,
flash-attn-3, or flash-attn-4 on Hopper and later, in that order), else transformers' default
(`sdpa`). Only FlashAttention's varlen kernels restart attention at each packed row without
materialising a mask, so padding-free packing is used with them alone (`padding_free`).

Liger (liger-kernel, in the `train` extra) is Triton code: it is importable on the CPU but runs
only on a GPU, so it is switched on only where CUDA is present. TRL 1.16 applies its RMSNorm,
RoPE and SwiGLU kernels and keeps its own chunked LM-head loss (GSPO's sequence-level objective
is untouched).
"""

from __future__ import annotations

import importlib.util
from typing import Any

# (attn_implementation, transformers' availability check, least CUDA compute capability)
FLASH = (("flash_attention_2", "is_flash_attn_2_available", 8),
         ("flash_attention_3", "is_flash_attn_3_available", 9),
         ("flash_attention_4", "is_flash_attn_4_available", 9))


def attention_for(dtype: Any) -> str | None:
    """A FlashAttention implementation the GPU and the installed packages run in `dtype`, else
    None (transformers' default, sdpa)."""
    import torch

    if not torch.cuda.is_available() or dtype == torch.float32:
        return None
    from transformers import utils

    major, _minor = torch.cuda.get_device_capability()
    for name, check, capability in FLASH:
        available = getattr(utils, check, None)
        if major >= capability and available is not None and available():
            return name
    return None


def padding_free(attention: str | None) -> bool:
    """Whether rows may be packed without padding under this attention implementation."""
    return bool(attention) and str(attention).startswith("flash_attention")


def liger_usable() -> bool:
    """Liger's kernels: installed, and a GPU to run them."""
    import torch

    return torch.cuda.is_available() and importlib.util.find_spec("liger_kernel") is not None


def speed_arguments(model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(TRL/transformers fields, what they are for the report) that make training faster where
    the setup allows: Liger's kernels and torch's fused AdamW on CUDA."""
    import torch

    fields: dict[str, Any] = {}
    if liger_usable():
        fields["use_liger_kernel"] = True
    if torch.cuda.is_available():
        fields["optim"] = "adamw_torch_fused"
    attention = getattr(model.config, "_attn_implementation", None) or "eager"
    return fields, {"attention": attention, "liger": bool(fields.get("use_liger_kernel")),
                    "optim": fields.get("optim", "adamw_torch"),
                    "dtype": str(getattr(model, "dtype", "")).removeprefix("torch.")}

"""Loading the models the trainer starts from: a local Hugging Face directory with a chat
template, its tokenizer, and the dtype `--precision` asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.errors import UsageError


def check_model_dir(path: str) -> None:
    """A clear error unless `path` is a local Hugging Face model directory with a tokenizer
    that has a chat template (training and serving both format turns with it)."""
    directory = Path(path)
    if not directory.is_dir():
        raise UsageError(f"--model {path}: no such directory (give a local Hugging Face model)")
    if not (directory / "config.json").is_file():
        raise UsageError(f"--model {path} is not a model: it has no config.json")
    from transformers import AutoConfig, AutoTokenizer

    try:
        AutoConfig.from_pretrained(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"--model {path} is not a loadable model: {exc}") from None
    if not getattr(tokenizer, "chat_template", None):
        raise UsageError(f"--model {path}: its tokenizer has no chat template")


def load_model(path: str, dtype: Any, attention: str | None = None) -> Any:
    """The model at `path` in `dtype`; `attention` names an attention implementation
    (default: transformers' choice)."""
    from transformers import AutoModelForCausalLM

    extra = {"attn_implementation": attention} if attention else {}
    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=dtype, **extra)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--model {path} could not be loaded: {exc}") from None


def load_tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def dtype_for(precision: str) -> Any:
    """torch dtype for `--precision` (auto: bf16 on a GPU that has it, else fp32)."""
    import torch

    if precision == "bf16" or (precision == "auto" and torch.cuda.is_available()
                               and torch.cuda.is_bf16_supported()):
        return torch.bfloat16
    return torch.float32

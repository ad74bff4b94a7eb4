"""Loading a transformers model for the local backend, and turning messages into prompt ids.

torch and transformers are the optional `local` extra: they are imported inside functions so
that `import generation.local` works without them, and their absence becomes a `ModelLoadError`.
"""

from __future__ import annotations

import inspect
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from generation.errors import InvalidRequest
from generation.types import Message

SETTING = "REDRAFT_MODEL"
POINT_IT = ("point it at a Hugging Face folder, a .gguf file or a hub name "
            "(or set REDRAFT_UPSTREAM_URL to an OpenAI-compatible server)")

_DTYPE_ALIASES = {
    "fp32": "float32", "float": "float32", "fp16": "float16", "half": "float16",
    "bf16": "bfloat16",
}


class ModelLoadError(RuntimeError):
    """The local model could not be loaded; the message, one line, says how to fix it."""


def first_line(exc: BaseException) -> str:
    """The first non-blank line of an exception's message: start-up errors stay one line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__).rstrip(". ")


@dataclass(frozen=True, slots=True)
class LoadedModel:
    model: Any  # transformers PreTrainedModel, in eval mode on `device`
    tokenizer: Any  # transformers tokenizer
    device: Any  # torch.device
    eos_ids: frozenset[int]
    context_length: int | None
    vocab_width: int  # columns of the logits, which may exceed len(tokenizer)
    forward_kwargs: dict[str, Any]  # static extras for model(...), e.g. logits_to_keep=1


def load_model(
    model_path: str, device: str = "auto", dtype: str = "auto", *, allow_download: bool = False,
    threads: int | None = None,
) -> LoadedModel:
    """Load tokenizer and model (blocking: call in a worker thread).

    `threads` sets torch's CPU threads for the whole process (None keeps torch's default, one
    per core): on a small machine whose cores are busy with other work, one thread decodes
    several times faster than threads that wait for each other."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ModelLoadError(
            f"the local backend needs torch and transformers ({exc.name} is missing): "
            "pip install 'redraft[local]'; or set REDRAFT_UPSTREAM_URL to an OpenAI-compatible "
            "server (e.g. vLLM at http://127.0.0.1:8001/v1)"
        ) from exc

    if threads is not None:
        torch.set_num_threads(threads)
    torch_device = _resolve_device(torch, device)
    torch_dtype = _resolve_dtype(torch, dtype, torch_device)
    # transformers 4.56 renamed torch_dtype to dtype; the old name warns in 5.x.
    major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    dtype_kw = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    # Offline, a hub download retries for about a minute before failing: probe first.
    local_only = not allow_download or os.path.isdir(model_path) or not hub_reachable()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            model_path, local_files_only=local_only
        )
        model = transformers.AutoModelForCausalLM.from_pretrained(
            model_path, local_files_only=local_only, **{dtype_kw: torch_dtype}
        )
    except Exception as exc:  # OSError, ValueError, HF hub errors: all mean "not loadable"
        where = "folder" if os.path.isdir(model_path) else "hub model"
        offline = "" if os.path.isdir(model_path) or not local_only else (
            " (the hub is not reachable and it is not in the local cache)")
        raise ModelLoadError(
            f"{SETTING}: could not load the {where} {model_path}{offline}: {first_line(exc)}; "
            f"{POINT_IT}"
        ) from exc
    model.to(torch_device)
    model.eval()
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        device=torch_device,
        eos_ids=_eos_ids(model, tokenizer),
        context_length=getattr(model.config, "max_position_embeddings", None),
        vocab_width=int(model.get_output_embeddings().weight.shape[0]),
        forward_kwargs=_forward_kwargs(model),
    )


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub (or HF_ENDPOINT) accepts a connection right now."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    url = urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def _resolve_device(torch: Any, device: str) -> Any:
    if device != "auto":
        try:
            return torch.device(device)
        except RuntimeError as exc:
            raise ModelLoadError(
                f"REDRAFT_LOCAL_DEVICE={device!r} is not a device: use auto, cpu, cuda or cuda:N"
            ) from exc
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def _resolve_dtype(torch: Any, dtype: str, device: Any) -> Any:
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        # CPU kernels for half precision are slow or missing; float32 is the safe default.
        return torch.float16 if device.type == "mps" else torch.float32
    name = _DTYPE_ALIASES.get(dtype.lower(), dtype.lower())
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype):
        raise ModelLoadError(
            f"REDRAFT_LOCAL_DTYPE={dtype!r} is not a dtype: use auto, float32, float16 or bfloat16"
        )
    return value


def _eos_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return frozenset(ids)


def _forward_kwargs(model: Any) -> dict[str, Any]:
    # Only the last position's logits are needed; skipping the rest saves a
    # (prompt_len x vocab) matrix on long prompts.
    params = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return {name: 1}
    return {}


def flatten_content(content: Any) -> str:
    """OpenAI content (a string, or a list of parts) as plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type", "text") == "text":
                texts.append(str(part.get("text", "")))
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise InvalidRequest(
                    f"the local backend accepts text content only, not {kind!r}", param="messages"
                )
        return "".join(texts)
    raise InvalidRequest("message content must be a string or a list of parts", param="messages")


def encode_prompt(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    """Prompt token ids: the tokenizer's chat template, or a role-prefixed fallback."""
    flat = [{**m, "content": flatten_content(m.get("content"))} for m in messages]
    if getattr(tokenizer, "chat_template", None):
        try:
            text = tokenizer.apply_chat_template(flat, tokenize=False, add_generation_prompt=True)
        except Exception as exc:  # templates raise on roles or orders they do not support
            raise InvalidRequest(f"the model's chat template rejected the messages: {exc}",
                                 param="messages") from exc
        # The template already writes BOS and friends; adding them again would double them.
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    text = "".join(f"{m.get('role', 'user')}: {m['content']}\n" for m in flat) + "assistant:"
    return list(tokenizer(text, add_special_tokens=True)["input_ids"])

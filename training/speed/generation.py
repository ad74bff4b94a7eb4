"""GSPO's generation: where completions are decoded, and how.

- vLLM when it is importable and a GPU is present (`--vllm-mode auto`), colocated or a
  `trl vllm-serve` server.
- Otherwise transformers' batched `generate`: TRL decodes one generation batch (a step's
  prompts x G, or `--generation-batch-size` completions) per process in one left-padded call.
  On an H100 (Qwen2.5-0.5B's shape, G = 8, 256 tokens) it gave 0.62 completions/s where
  transformers' continuous batching with a paged KV cache gave 0.30, so paging is opt-in
  (`--paged-generation`).
- `--rollouts` (auto) decodes them on redraft's local engine instead where it can
  (`training.speed.rollouts`: a Llama-family model on the CPU, no LoRA).
- `--generation-cache static` preallocates the KV cache; `--compile-generation` (which implies
  it) lets transformers compile the decoding step on CUDA. Neither has been measured yet, so
  both are off by default.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from training.errors import UsageError


def generation_settings(config: Any) -> dict[str, Any]:
    """The GRPOConfig fields that choose and tune generation for a GspoConfig."""
    import torch

    available = importlib.util.find_spec("vllm") is not None
    mode = config.vllm_mode
    if mode == "auto":
        mode = "colocate" if available and torch.cuda.is_available() else "off"
    if mode == "off":
        settings: dict[str, Any] = {
            "use_vllm": False,
            "use_transformers_continuous_batching": bool(config.paged_generation
                                                         and torch.cuda.is_available())}
        if config.generation_cache == "static" or config.compile_generation:
            settings["cache_implementation"] = "static"
        return settings
    if not available:
        raise UsageError(f"--vllm-mode {mode} needs vLLM installed (pip install vllm)")
    settings = {"use_vllm": True, "vllm_mode": mode}
    if mode == "server":
        settings["vllm_server_base_url"] = config.vllm_url
    return settings


def local_rollouts(config: Any, model: Any, settings: dict[str, Any]) -> Any:
    """TRL's `rollout_func` on the local engine when `--rollouts` and the model allow it, else
    None (an exit-2 error when `--rollouts local` was asked of a model it cannot decode)."""
    from training.speed.rollouts import EngineRollouts, usable

    if config.rollouts == "transformers" or settings.get("use_vllm") \
            or settings.get("use_transformers_continuous_batching"):
        return None
    if not usable(model) or config.lora:
        if config.rollouts == "local":
            raise UsageError("--rollouts local needs a Llama-family model (Llama, SmolLM2, "
                             "Qwen2, Mistral) trained on the CPU without --lora")
        return None
    return EngineRollouts(temperature=config.temperature, top_p=config.top_p,
                          top_k=config.top_k, max_tokens=config.max_completion_length,
                          seed=config.seed, weights=config.rollout_weights)


def generation_name(settings: dict[str, Any], rollouts: Any = None) -> str:
    """What the report calls the generation `settings` (and rollout function) chose."""
    if rollouts is not None:
        return "local-engine"
    if settings.get("use_vllm"):
        return "vllm-" + settings["vllm_mode"]
    if settings.get("use_transformers_continuous_batching"):
        return "transformers-paged"
    if settings.get("cache_implementation") == "static":
        return "transformers-static"
    return "transformers"


def compile_decoding(trainer: Any, config: Any) -> bool:
    """With `--compile-generation`, let transformers compile the decoding step (TRL turns it off
    by default); True when asked. It takes effect on CUDA with the static cache."""
    if not config.compile_generation or getattr(trainer, "generation_config", None) is None:
        return False
    trainer.generation_config.disable_compile = False
    return True

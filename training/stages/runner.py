"""How a training stage (sft, gspo, dpo) runs: its input rows, the model it starts from, the
TRL arguments its config gives (LoRA, resuming), and the stage directory it writes whole or
not at all."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from training.config import TrainConfig
from training.data.dataset import read_manifest, read_rows
from training.errors import UsageError
from training.models import check_model_dir, dtype_for, load_model, load_tokenizer
from training.speed.kernels import attention_for
from training.speed.kernels import speed_arguments as speed_arguments  # the stages' import
from training.stages.checkpoints import StageDir

CHECKPOINTS = "checkpoints"


def trainer_arguments(config: TrainConfig, out: Path, dtype: Any) -> dict[str, Any]:
    """The transformers.TrainingArguments fields both stages set the same way."""
    import torch

    return {
        "output_dir": str(out / CHECKPOINTS), "max_steps": config.max_steps,
        "per_device_train_batch_size": config.batch_size,
        "gradient_accumulation_steps": config.grad_accum,
        "warmup_steps": float(config.warmup_ratio),  # a float below 1 is a ratio of all steps
        "max_grad_norm": config.max_grad_norm, "bf16": dtype == torch.bfloat16,
        "save_steps": config.save_steps, "save_total_limit": 2,
        "logging_steps": config.logging_steps, "report_to": "none", "seed": config.seed,
        "dataloader_num_workers": 0, "disable_tqdm": False,
        "dataloader_pin_memory": torch.cuda.is_available(),
        # On unless the batch plan found the batch fits without (training.speed.batch).
        "activation_checkpointing": config.activation_checkpointing != "off",
    }


def lora_config(config: TrainConfig) -> Any:
    if not config.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha,
                      lora_dropout=config.lora_dropout, target_modules="all-linear",
                      task_type="CAUSAL_LM")


def resume_point(config: TrainConfig, out: Path) -> str | None:
    """The last TRL checkpoint of an interrupted run (for --resume), else None."""
    if not config.resume:
        return None
    from transformers.trainer_utils import get_last_checkpoint

    directory = out / CHECKPOINTS
    last = get_last_checkpoint(str(directory)) if directory.is_dir() else None
    if last is None:
        raise UsageError(f"--resume: {out} holds no checkpoint to resume from "
                         f"(one is saved every --save-steps steps)")
    return last


def arguments_error(exc: Exception) -> UsageError:
    """TRL and transformers check their arguments with ValueError: pass the message on."""
    return UsageError(f"the training options do not fit together: {exc}")


Rows = list[dict[str, Any]]


def stage_inputs(config: TrainConfig, kind: str, empty: str) -> tuple[Rows, Rows]:
    """The train and holdout rows of `kind` in --data, after checking --data and --model;
    `empty` is the error when there is nothing to train on."""
    read_manifest(config.data)
    train_rows = read_rows(config.data, kind, "train")
    holdout_rows = read_rows(config.data, kind, "holdout")
    if not train_rows:
        raise UsageError(f"--data {config.data} {empty}")
    check_model_dir(config.model)
    return train_rows, holdout_rows


def processes() -> int:
    """Processes training together (`accelerate launch` sets WORLD_SIZE; alone: 1)."""
    return max(1, int(os.environ.get("WORLD_SIZE", "1") or 1))


def prompt_tokens(tokenizer: Any, prompt: list[dict[str, Any]]) -> int:
    """Tokens of a conversational prompt as the trainer renders it (chat template, with the
    assistant turn opened)."""
    ids = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return len(ids)


def fitting_rows(stage: str, rows: Rows, tokenizer: Any, max_length: int, noun: str,
                 split: str = "train") -> Rows:
    """The rows whose prompt leaves room for answer tokens within --max-length (TRL would
    truncate the others to nothing, or drop them itself and fail on an empty dataset). Says
    on stderr how many it dropped; a UsageError when none is left of the training rows."""
    kept = [r for r in rows if prompt_tokens(tokenizer, r["prompt"]) < max_length]
    dropped = len(rows) - len(kept)
    if rows and not kept and split == "train":
        raise UsageError(f"all {len(rows)} {noun} exceed --max-length {max_length} tokens; "
                         "raise it or shorten prompts at export (--max-prompt-tokens)")
    if dropped:
        print(f"{stage}: dropped {dropped} of {len(rows)} {split} {noun} whose prompt fills "
              f"--max-length {max_length} tokens", file=sys.stderr)
    return kept


def check_steps(config: TrainConfig, rows: int, noun: str, per_step: int,
                numbers: str) -> None:
    """A UsageError when training would take zero optimiser steps: fewer `rows` than one step
    takes (`per_step`, explained by `numbers`), or --epochs 0 with no --max-steps."""
    if rows < per_step:
        raise UsageError(f"{rows} {noun} make 0 steps: one step takes {per_step} ({numbers}); "
                         "lower --batch-size or --grad-accum, or export more")
    if rows == 0:
        raise UsageError(f"no {noun} to train on")
    epochs = getattr(config, "epochs", 1.0)
    if config.max_steps <= 0 and epochs == 0:
        raise UsageError("--epochs 0 with no --max-steps makes 0 steps: raise --epochs or set "
                         "--max-steps")


def checked_stage(config: TrainConfig) -> StageDir:
    """--out as a stage directory, failing now when it is in the way."""
    stage = StageDir(config.out, overwrite=config.overwrite, resume=config.resume)
    stage.check()
    return stage


def run_in_stage(stage: StageDir, config: TrainConfig,
                 train: Callable[[Path, str | None], dict[str, Any]]) -> int:
    """`train(directory, checkpoint to resume or None)` in OUT.partial, renamed to OUT when it
    returns its summary (printed as one JSON line). Bad input leaves nothing behind, except
    the interrupted run that --resume was continuing."""
    out = stage.open()
    try:
        summary = train(out, resume_point(config, out))
    except UsageError:
        if not config.resume:
            stage.discard()
        raise
    stage.commit()
    print(json.dumps({"out": str(stage.out), **summary}))
    return 0


def start_model(config: TrainConfig) -> tuple[Any, Any, Any]:
    """(dtype, tokenizer, model) of --model for --precision, with FlashAttention on a GPU where
    a FlashAttention package is installed (padding-free SFT needs it)."""
    dtype = dtype_for(config.precision)
    return dtype, load_tokenizer(config.model), load_model(config.model, dtype,
                                                           attention=attention_for(dtype))


def trl_arguments(cls: type, config: TrainConfig, out: Path, dtype: Any, **fields: Any) -> Any:
    """`cls` (a TRL config class) with the shared trainer arguments, then `fields` (which win);
    TRL's own argument checks become exit-2 errors."""
    try:
        return cls(**{**trainer_arguments(config, out, dtype), **fields})
    except ValueError as exc:
        raise arguments_error(exc) from None


@contextmanager
def quiet_renames() -> Iterator[None]:
    """Silence the FutureWarnings TRL 1.16 and PEFT cause by still calling transformers'
    `gradient_checkpointing*` methods (renamed `activation_checkpointing*` in transformers 5):
    they tell a user nothing to act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`(is_)?gradient_checkpointing\w*` is "
                                "deprecated", category=FutureWarning)
        # TRL 1.16 points Liger users at the Hub's kernels, which an offline machine cannot get.
        warnings.filterwarnings("ignore", message=r"`use_liger_kernel=True` is deprecated",
                                category=FutureWarning)
        yield

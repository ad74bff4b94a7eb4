"""`sft`: supervised fine-tuning on the best texts y* (TRL SFTTrainer).

Rows are conversational prompt/completion pairs, so TRL formats them with the model's chat
template and masks the prompt: the loss is on the completion only. Full fine-tune, or LoRA
through PEFT (`--lora`, merged into OUT/final with `--merge`). The held-out rows' loss is
measured before and after training. Speed (training.speed): rows packed without padding where
FlashAttention runs, else batches drawn by length; on a GPU the batch not given is planned from
free memory; the report carries the padding share and where the steps' time went.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.config import SftConfig
from training.models import load_tokenizer
from training.speed.batch import with_batch
from training.speed.kernels import padding_free
from training.speed.lengths import GROUPED, count_padding
from training.speed.timing import time_steps
from training.stages.checkpoints import FINAL, save_final
from training.stages.report import write_stage_report
from training.stages.runner import (
    Rows,
    check_steps,
    checked_stage,
    fitting_rows,
    lora_config,
    prompt_tokens,
    run_in_stage,
    speed_arguments,
    stage_inputs,
    start_model,
    trl_arguments,
)


def _dataset(rows: list[dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]}
                              for r in rows])


def run_sft(config: SftConfig) -> int:
    train_rows, holdout_rows = stage_inputs(config, "sft", "has no sft training rows")
    tokenizer = load_tokenizer(config.model)
    train_rows = fitting_rows("sft", train_rows, tokenizer, config.max_length, "rows")
    holdout_rows = fitting_rows("sft", holdout_rows, tokenizer, config.max_length, "rows",
                                split="holdout")
    check_steps(config, len(train_rows), "sft rows", 1, "")
    config, batch = with_batch(config, lambda: longest(tokenizer, train_rows, config.max_length),
                               stage="sft", max_rows=min(64, len(train_rows)))
    return run_in_stage(checked_stage(config), config, lambda out, resume: train(
        config, out, train_rows, holdout_rows, resume, batch))


def longest(tokenizer: Any, rows: Rows, max_length: int) -> int:
    """Tokens of the longest row (prompt and completion), at most `max_length`."""
    return min(max_length, max(prompt_tokens(tokenizer, r["prompt"] + r["completion"])
                               for r in rows))


def train(config: SftConfig, out: Path, train_rows: Rows, holdout_rows: Rows,
          resume: str | None, batch: dict[str, Any] | None = None) -> dict[str, Any]:
    from trl import SFTConfig, SFTTrainer

    dtype, tokenizer, model = start_model(config)
    fast, speed = speed_arguments(model)
    # Padding-free packing (rows packed best-fit into --max-length, no pad tokens) is exact
    # only where attention restarts at each row's position 0: the FlashAttention kernels.
    # Elsewhere batches are drawn by length, so that little of each is padding.
    packed = padding_free(speed["attention"])
    grouped = config.group_by_length and not packed
    speed.update(padding_free=packed, grouped_by_length=grouped, batch=batch)
    if packed:
        fast.update(packing=True, packing_strategy="bfd", padding_free=True)
    elif grouped:
        fast.update(GROUPED)
    args = trl_arguments(SFTConfig, config, out, dtype, num_train_epochs=config.epochs,
                         learning_rate=config.learning_rate, completion_only_loss=True,
                         max_length=config.max_length,
                         per_device_eval_batch_size=config.batch_size, **fast)
    holdout = _dataset(holdout_rows) if holdout_rows else None
    trainer = SFTTrainer(model=model, args=args, train_dataset=_dataset(train_rows),
                         eval_dataset=holdout, processing_class=tokenizer,
                         peft_config=lora_config(config))
    before = trainer.evaluate()["eval_loss"] if holdout is not None else None
    padding, times = count_padding(trainer), time_steps(trainer)
    result = trainer.train(resume_from_checkpoint=resume)
    speed["padding_share"] = padding.share()
    after = trainer.evaluate()["eval_loss"] if holdout is not None else None
    save_final(trainer, tokenizer, out / FINAL, merge=config.merge)
    tokens = [h["num_tokens"] for h in trainer.state.log_history if "num_tokens" in h]
    summary = {"steps": result.global_step, "train_loss": result.training_loss,
               "train_runtime": result.metrics.get("train_runtime"),
               "tokens": int(tokens[-1]) if tokens else None,
               "holdout_loss": {"before": before, "after": after},
               "rows": {"train": len(train_rows), "holdout": len(holdout_rows)},
               "lora": config.lora, "merged": config.merge, "speed": speed,
               "time": times.report()}
    write_stage_report(out, "sft", trainer.state.log_history, summary)
    return summary

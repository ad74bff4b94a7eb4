"""`sft`: supervised fine-tuning on the best texts y* (TRL SFTTrainer).

Rows are conversational prompt/completion pairs, so TRL formats them with the model's chat
template and masks the prompt: the loss is on the completion only. Full fine-tune, or LoRA
through PEFT (`--lora`, merged into OUT/final with `--merge`). The held-out rows' loss is
measured before and after training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.config import SftConfig
from training.stages.checkpoints import FINAL, save_final
from training.stages.report import write_stage_report
from training.stages.runner import (
    Rows,
    checked_stage,
    lora_config,
    run_in_stage,
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
    return run_in_stage(checked_stage(config), config,
                        lambda out, resume: train(config, out, train_rows, holdout_rows, resume))


def train(config: SftConfig, out: Path, train_rows: Rows, holdout_rows: Rows,
          resume: str | None) -> dict[str, Any]:
    from trl import SFTConfig, SFTTrainer

    dtype, tokenizer, model = start_model(config)
    args = trl_arguments(SFTConfig, config, out, dtype, num_train_epochs=config.epochs,
                         learning_rate=config.learning_rate, completion_only_loss=True,
                         max_length=config.max_length,
                         per_device_eval_batch_size=config.batch_size)
    holdout = _dataset(holdout_rows) if holdout_rows else None
    trainer = SFTTrainer(model=model, args=args, train_dataset=_dataset(train_rows),
                         eval_dataset=holdout, processing_class=tokenizer,
                         peft_config=lora_config(config))
    before = trainer.evaluate()["eval_loss"] if holdout is not None else None
    result = trainer.train(resume_from_checkpoint=resume)
    after = trainer.evaluate()["eval_loss"] if holdout is not None else None
    save_final(trainer, tokenizer, out / FINAL, merge=config.merge)
    tokens = [h["num_tokens"] for h in trainer.state.log_history if "num_tokens" in h]
    summary = {"steps": result.global_step, "train_loss": result.training_loss,
               "train_runtime": result.metrics.get("train_runtime"),
               "tokens": int(tokens[-1]) if tokens else None,
               "holdout_loss": {"before": before, "after": after},
               "rows": {"train": len(train_rows), "holdout": len(holdout_rows)},
               "lora": config.lora, "merged": config.merge}
    write_stage_report(out, "sft", trainer.state.log_history, summary)
    return summary

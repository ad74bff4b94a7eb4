"""`dpo`: Direct Preference Optimization (TRL DPOTrainer) on the exported preference pairs.

Each pair is a loop's best text y* (chosen) against its draft y0 (rejected), exported when
the gain is at least `--min-gain`: the cheapest use of what the server already logs, no judge
needed. Rows are TRL's conversational prompt/chosen/rejected format; the reference model is
a frozen copy of `--model` (with `--lora`, the adapter-free base). The held-out pairs' DPO
loss and reward accuracy are measured before and after training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.config import DpoConfig
from training.models import load_tokenizer
from training.speed.batch import with_batch
from training.speed.lengths import grouped_order
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
    stage_inputs,
    start_model,
    trl_arguments,
)

PAIR_COLUMNS = ("prompt", "chosen", "rejected")


def _dataset(rows: list[dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list([{k: r[k] for k in PAIR_COLUMNS} for r in rows])


def by_length(rows: Rows, tokenizer: Any, batch_size: int, seed: int) -> Rows:
    """`rows` in the order transformers' length-grouped sampler would draw them (shuffled,
    then batches of pairs of about one length), for a sequential sampler: TRL's DPO data has
    no column that sampler can read lengths from. A pair's length is its prompt and its
    longer answer, in tokens."""
    lengths = [prompt_tokens(tokenizer, r["prompt"] + max(r["chosen"], r["rejected"],
                                                           key=lambda m: len(str(m))))
               for r in rows]
    return [rows[i] for i in grouped_order(lengths, batch_size, seed)]


def run_dpo(config: DpoConfig) -> int:
    train_rows, holdout_rows = stage_inputs(
        config, "pairs", "has no preference pairs (pairs/train.jsonl is empty): export with a "
        "lower --min-gain")
    tokenizer = load_tokenizer(config.model)
    train_rows = fitting_rows("dpo", train_rows, tokenizer, config.max_length, "pairs")
    holdout_rows = fitting_rows("dpo", holdout_rows, tokenizer, config.max_length, "pairs",
                                split="holdout")
    check_steps(config, len(train_rows), "pairs", 1, "")
    # A pair is two rows (chosen and rejected); the reference model is a frozen copy.
    config, _ = with_batch(config, lambda: 2 * config.max_length, stage="dpo", max_rows=32,
                           frozen_copies=0 if config.lora else 1)
    if config.group_by_length:
        train_rows = by_length(train_rows, tokenizer, config.batch_size or 1, config.seed)
    return run_in_stage(checked_stage(config), config,
                        lambda out, resume: train(config, out, train_rows, holdout_rows, resume))


def losses(config: DpoConfig) -> dict[str, Any]:
    """TRL's loss_type (and loss_weights when the NLL term on the chosen text is on)."""
    if not config.sft_weight:
        return {"loss_type": [config.loss]}
    return {"loss_type": [config.loss, "sft"], "loss_weights": [1.0, config.sft_weight]}


def _holdout(trainer: Any, holdout: Any) -> dict[str, Any]:
    if holdout is None:
        return {"loss": None, "accuracy": None}
    metrics = trainer.evaluate()
    return {"loss": metrics.get("eval_loss"),
            "accuracy": metrics.get("eval_rewards/accuracies")}


def train(config: DpoConfig, out: Path, train_rows: Rows, holdout_rows: Rows,
          resume: str | None) -> dict[str, Any]:
    from trl import DPOConfig, DPOTrainer

    dtype, tokenizer, model = start_model(config)
    args = trl_arguments(DPOConfig, config, out, dtype, num_train_epochs=config.epochs,
                         learning_rate=config.learning_rate, beta=config.beta,
                         **losses(config), max_length=config.max_length,
                         per_device_eval_batch_size=config.batch_size,
                         **({"train_sampling_strategy": "sequential"}
                            if config.group_by_length else {}))
    holdout = _dataset(holdout_rows) if holdout_rows else None
    trainer = DPOTrainer(model=model, args=args, train_dataset=_dataset(train_rows),
                         eval_dataset=holdout, processing_class=tokenizer,
                         peft_config=lora_config(config))
    before = _holdout(trainer, holdout)
    result = trainer.train(resume_from_checkpoint=resume)
    after = _holdout(trainer, holdout)
    save_final(trainer.model, tokenizer, out / FINAL, merge=config.merge)
    summary = {"steps": result.global_step, "train_loss": result.training_loss,
               "holdout_loss": {"before": before["loss"], "after": after["loss"]},
               "holdout_accuracy": {"before": before["accuracy"], "after": after["accuracy"]},
               "rows": {"train": len(train_rows), "holdout": len(holdout_rows)},
               "beta": config.beta, "loss": config.loss, "sft_weight": config.sft_weight,
               "lora": config.lora,
               "merged": config.merge}
    write_stage_report(out, "dpo", trainer.state.log_history, summary)
    return summary

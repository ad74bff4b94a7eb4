"""What the flywheel hands the trainer's stages: GSPO's prompt rows for every training prompt,
and the configs of export, sft and gspo inside the run directory.

Export yields prompt rows only for the prompts that were recorded, and keeps each loop's
stored checklist; GSPO trains on the training prompts the record stage drafted (every
training prompt when none was), so its rows are built here from the generator's own checks
(attached as data, `source: user`) and the length of the base model's draft (the checks
reward's length band), in a dataset directory of the layout `training.data.dataset` reads
(sft and pairs empty). Each row's id is the one export
gives the same conversation (`training.data.rows.query_id`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rubrics.checks.kinds import count_words
from training.config import ExportConfig, GspoConfig, SftConfig
from training.data.dataset import KINDS, SPLITS, VERSION, content_hash, write_jsonl
from training.data.prompts import Prompt
from training.data.rows import query_id
from training.rewards.length import REFERENCE_WORDS
from training.stages.checkpoints import write_json


def attached(prompt: Prompt) -> dict[str, Any]:
    """The prompt's checks as a stored checklist of checks alone."""
    return {"checks": [c.check().model_dump(mode="json") for c in prompt.checks]}


def gspo_row(prompt: Prompt, reference: str | None = None) -> dict[str, Any]:
    """The prompt's GSPO row; with the length of a `reference` answer, which sets the checks
    reward's length band (`training.rewards.length`)."""
    messages = [{"role": "user", "content": prompt.query}]
    row = {"id": query_id(messages), "prompt_id": prompt.id, "task_id": prompt.task_id,
           "prompt": messages, "checklist": attached(prompt)}
    if reference is not None:
        row[REFERENCE_WORDS] = count_words(reference)
    return row


def write_gspo_data(out: Path, prompts: list[Prompt], seed: int,
                    references: dict[str, str] | None = None,
                    dev: list[Prompt] | None = None) -> dict[str, Any]:
    """A dataset directory at `out` whose prompts/train.jsonl holds one row per prompt and
    prompts/holdout.jsonl one per `dev` prompt (the split GSPO answers greedily to show what
    it moves); returns its manifest. Given `references` (prompt id → the base model's draft),
    only the prompts that have one are kept, each with its length band, since a prompt
    without a band pays a policy for shortening its answers."""
    references = references or {}
    banded = [p for p in prompts if p.id in references]
    kept = banded or prompts
    rows = {"train": [gspo_row(p, references.get(p.id)) for p in kept],
            "holdout": [gspo_row(p) for p in dev or ()]}
    for kind in KINDS:
        for split in SPLITS:
            write_jsonl(out / kind / f"{split}.jsonl", rows[split] if kind == "prompts" else [])
    manifest = {"version": VERSION, "created_at": datetime.now(UTC).isoformat(),
                "source": "training.data.prompts", "seed": seed,
                "counts": {"prompts": len(rows["train"]),
                           "checks": sum(len(p.checks) for p in kept),
                           "with_reference_words": len(banded),
                           "prompts_rows": {split: len(r) for split, r in rows.items()}},
                "content_hash": content_hash(out)}
    write_json(out / "manifest.json", manifest)
    return manifest


def export_config(config: Any, run: Path, database: str, tokenizer: Path) -> ExportConfig:
    return ExportConfig(out=str(run / "export"), database=database, tokenizer=str(tokenizer),
                        holdout=config.holdout, seed=config.seed,
                        min_final_score=config.min_final_score,
                        keep_dropped_task=config.keep_dropped_task)


def _partial(out: Path) -> bool:
    """Whether an interrupted run of the stage left a checkpoint to resume from."""
    checkpoints = out.with_name(out.name + ".partial") / "checkpoints"
    return checkpoints.is_dir() and any(checkpoints.glob("checkpoint-*"))


def sft_config(config: Any, run: Path, base: Path) -> SftConfig:
    out = run / "sft"
    extra = {"batch_size": config.sft_batch_size} if config.sft_batch_size else {}
    return SftConfig(data=str(run / "sft-data"), model=str(base), out=str(out),
                     max_steps=config.sft_steps, learning_rate=config.sft_learning_rate,
                     seed=config.seed, resume=config.resume and _partial(out), **extra)


def gspo_config(config: Any, run: Path, policy: Path) -> GspoConfig:
    out = run / "gspo"
    extra = {"batch_size": config.gspo_batch_size} if config.gspo_batch_size else {}
    return GspoConfig(data=str(run / "gspo-data"), model=str(policy), out=str(out),
                      reward="checks", max_steps=config.gspo_steps,
                      num_generations=config.num_generations,
                      max_completion_length=config.max_tokens,
                      temperature=config.gspo_temperature,
                      learning_rate=config.gspo_learning_rate, beta=config.gspo_beta,
                      cut_factor=config.gspo_cut_factor,
                      eval_prompts=config.dev_prompts,
                      holdout_every=config.gspo_holdout_every,
                      seed=config.seed, resume=config.resume and _partial(out), **extra)

"""What the flywheel hands the trainer's stages: GSPO's prompt rows for every training prompt,
and the configs of export, sft and gspo inside the run directory.

Export yields prompt rows only for the prompts that were recorded, and keeps each loop's
stored checklist; GSPO trains on every training prompt, so its rows are built here from the
generator's own checks (attached as data, `source: user`), in a dataset directory of the
layout `training.data.dataset` reads (sft and pairs empty). Each row's id is the one export
gives the same conversation (`training.data.rows.query_id`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from training.config import ExportConfig, GspoConfig, SftConfig
from training.data.dataset import KINDS, SPLITS, VERSION, content_hash, write_jsonl
from training.data.prompts import Prompt
from training.data.rows import query_id
from training.stages.checkpoints import write_json


def attached(prompt: Prompt) -> dict[str, Any]:
    """The prompt's checks as a stored checklist of checks alone."""
    return {"checks": [c.check().model_dump(mode="json") for c in prompt.checks]}


def gspo_row(prompt: Prompt) -> dict[str, Any]:
    messages = [{"role": "user", "content": prompt.query}]
    return {"id": query_id(messages), "prompt_id": prompt.id, "task_id": prompt.task_id,
            "prompt": messages, "checklist": attached(prompt)}


def write_gspo_data(out: Path, prompts: list[Prompt], seed: int) -> dict[str, Any]:
    """A dataset directory at `out` whose prompts/train.jsonl holds one row per prompt;
    returns its manifest."""
    rows = [gspo_row(p) for p in prompts]
    for kind in KINDS:
        for split in SPLITS:
            write_jsonl(out / kind / f"{split}.jsonl",
                        rows if (kind, split) == ("prompts", "train") else [])
    manifest = {"version": VERSION, "created_at": datetime.now(UTC).isoformat(),
                "source": "training.data.prompts", "seed": seed,
                "counts": {"prompts": len(rows),
                           "checks": sum(len(p.checks) for p in prompts),
                           "prompts_rows": {"train": len(rows), "holdout": 0}},
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
                      learning_rate=config.gspo_learning_rate, eval_prompts=0,
                      seed=config.seed, resume=config.resume and _partial(out), **extra)

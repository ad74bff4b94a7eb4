"""Run by the data-parallel tests, alone or under `accelerate launch --num_processes 2`: R3 on
a fixed global batch (each process scoring its share, as TRL splits a generation batch) and
the R3 filter over fixed prompt rows. Process 0 writes what it computed to OUT as JSON.

    python tests/training/parallel_probe.py MODEL_DIR DATASET_DIR OUT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from accelerate import PartialState

from training.data.dataset import read_rows
from training.models import load_model, load_tokenizer
from training.parallel import close, rank, world_size
from training.rewards.r3 import R3Options, R3Reward
from training.rewards.r3_filter import FilterOptions, run_filter

COMPLETIONS = ["A keeper counts ships.", "The fox jumps over the dog.",
               "<think>Ships and a lighthouse.</think> Ships come back.",
               "Reports and proposals.", "A robot learns to paint a story.",
               "Write a short story.", "The lazy dog sleeps.", "Concrete detail about it.",
               "Legal and marketing copy.", "This version adds detail.", "A painting robot.",
               "<think>The dog.</think> Lazy."]


def main(model_dir: str, data_dir: str, out: str) -> None:
    PartialState(cpu=True)  # joins the process group under accelerate launch (gloo)
    torch.manual_seed(0)
    tokenizer = load_tokenizer(model_dir)
    model = load_model(model_dir, torch.float32)
    rows = read_rows(data_dir, "prompts", "train")[:4]
    # The global batch: three prompts, a group of four completions each, split by rows as
    # TRL splits it: under two processes the second group is half on each.
    batch = [(row, text) for i, row in enumerate(rows[:3]) for text in COMPLETIONS[4 * i:4 * i + 4]]
    share = len(batch) // world_size()
    mine = batch[rank() * share:(rank() + 1) * share]
    reward = R3Reward(tokenizer, model=model, policy="ref", options=R3Options(batch_size=2))
    values = reward([r["prompt"] for r, _ in mine], [t for _, t in mine],
                    id=[str(r["id"]) for r, _ in mine], reference=[r["reference"] for r, _ in mine],
                    trainer_state=object())
    every = [None] * world_size()
    torch.distributed.all_gather_object(every, values) if world_size() > 1 else None
    rewards = [v for part in every for v in part] if world_size() > 1 else values
    result = run_filter(model, tokenizer, rows,
                        FilterOptions(traces=2, max_new_tokens=6, drop_fraction=0.5, carry=0.0,
                                      top_k=10_000), R3Options(batch_size=2), progress=False)
    if rank() == 0:
        Path(out).write_text(json.dumps({
            "processes": world_size(), "rewards": rewards, "sigma": reward.stats()["sigma"],
            "kept": sorted(result.kept), "too_flat": sorted(result.too_flat)}))
    close()


if __name__ == "__main__":
    main(*sys.argv[1:4])

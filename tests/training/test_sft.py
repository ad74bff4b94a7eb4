"""`sft` for two steps on the exported rows: checkpoint, losses, LoRA merge, resume."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from training.distill import main

STEPS = ["--max-steps", "2", "--batch-size", "2", "--save-steps", "1"]


def run_sft(dataset_dir: Path, model: Path, out: Path, *args: str) -> int:
    return main(["sft", "--data", str(dataset_dir), "--model", str(model), "--out", str(out),
                 *args])


@pytest.fixture(scope="module")
def sft_out(dataset_dir, tiny_model_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sft") / "sft"
    assert run_sft(dataset_dir, tiny_model_dir, out, *STEPS) == 0
    return out


def test_sft_writes_a_loadable_checkpoint_with_finite_losses(sft_out, dataset_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    final = sft_out / "final"
    assert (final / "config.json").is_file() and (final / "model.safetensors").is_file()
    model = AutoModelForCausalLM.from_pretrained(final)
    tokenizer = AutoTokenizer.from_pretrained(final)
    assert tokenizer.chat_template  # the server formats turns with it
    assert model.config.model_type == "qwen2"

    report = json.loads((sft_out / "report.json").read_text())
    summary = report["summary"]
    assert summary["steps"] == 2 and math.isfinite(summary["train_loss"])
    assert summary["rows"] == {"train": 5, "holdout": 1}
    assert all(math.isfinite(summary["holdout_loss"][k]) for k in ("before", "after"))
    losses = [json.loads(line).get("loss") for line in
              (sft_out / "metrics.jsonl").read_text().splitlines()]
    assert [x for x in losses if x is not None] and all(
        math.isfinite(x) for x in losses if x is not None)
    assert set(report["plots"]) == {"training.png", "holdout.png"}
    assert not Path(str(sft_out) + ".partial").exists()


def test_sft_report_has_the_batch_padding_and_step_times(sft_out):
    speed = json.loads((sft_out / "report.json").read_text())["summary"]["speed"]
    assert speed["padding_free"] is False and speed["grouped_by_length"] is True
    assert 0.0 <= speed["padding_share"] < 1.0
    assert speed["liger"] is False  # installed or not, Liger runs on CUDA only
    batch = speed["batch"]
    assert {k: batch[k] for k in ("chosen", "batch_size", "grad_accum")} == {
        "chosen": "given", "batch_size": 2, "grad_accum": 1}
    # the tiny model's activations are kept, not recomputed, on any host with a few GiB free
    assert batch["activation_checkpointing"] is False or batch["host_available_gib"] < 6
    assert batch["seq_len"] > 0
    time = json.loads((sft_out / "report.json").read_text())["summary"]["time"]
    assert time["steps"] == 2 and "generation" not in time["seconds"]
    assert time["seconds"]["forward_backward"] > 0 and time["seconds"]["optimizer"] > 0


def test_sft_loss_is_on_the_completion_only(dataset_dir, tiny_model_dir, tmp_path):
    """TRL masks the prompt tokens of prompt/completion rows: the labels start at y*."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from training.data.dataset import read_rows

    row = read_rows(str(dataset_dir), "sft", "train")[0]
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    args = SFTConfig(output_dir=str(tmp_path), completion_only_loss=True, report_to="none",
                     activation_checkpointing=True, bf16=False)
    trainer = SFTTrainer(model=str(tiny_model_dir), args=args, processing_class=tokenizer,
                         train_dataset=Dataset.from_list([{"prompt": row["prompt"],
                                                           "completion": row["completion"]}]))
    labels = trainer.data_collator([trainer.train_dataset[0]])["labels"][0].tolist()
    prompt_len = len(tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True,
                                                   tokenize=True, return_dict=True)["input_ids"])
    assert labels[:prompt_len] == [-100] * prompt_len
    assert -100 not in labels[prompt_len:] and len(labels) > prompt_len


# PEFT still asks the model `is_gradient_checkpointing`, which transformers 5 renamed.
@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
def test_lora_merged_checkpoint_is_a_plain_model(dataset_dir, tiny_model_dir, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    out = tmp_path / "lora"
    assert run_sft(dataset_dir, tiny_model_dir, out, *STEPS, "--lora", "--merge",
                   "--learning-rate", "0.01") == 0
    final = out / "final"
    assert not (final / "adapter_config.json").exists()
    merged = AutoModelForCausalLM.from_pretrained(final)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    name = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(merged.state_dict()[name], base.state_dict()[name])


def test_resume_continues_an_interrupted_run(sft_out, dataset_dir, tiny_model_dir, tmp_path):
    # An interrupted run: its checkpoints are there, the stage never finished.
    partial = tmp_path / "again.partial"
    shutil.copytree(sft_out, partial)
    shutil.rmtree(partial / "final")
    (partial / "report.json").unlink()
    out = tmp_path / "again"
    assert run_sft(dataset_dir, tiny_model_dir, out, "--resume", "--max-steps", "3",
                   "--batch-size", "2", "--save-steps", "1") == 0
    summary = json.loads((out / "report.json").read_text())["summary"]
    assert summary["steps"] == 3 and (out / "final" / "model.safetensors").is_file()
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()
             if "loss" in json.loads(line)]
    assert 3 in steps

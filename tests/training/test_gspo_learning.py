"""`gspo` with a judge whose scores vary between completions, so the group advantages, the
gradient and the update are not zero: the policy really moves (full fine-tune and LoRA)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.fakes.upstream import run_in_thread
from bench.fakes.writer import WriterResponder
from training.distill import main

# TRL (generation) and PEFT still ask `is_gradient_checkpointing`, renamed in transformers 5.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")

WEIGHT = "model.layers.0.mlp.down_proj.weight"


class LengthJudge(WriterResponder):
    """The fake writer's judge, scoring a response by its length in characters (the tiny
    model's random completions all have 8 tokens, of varying lengths)."""

    def quality(self, text: str) -> float:
        return min(1.0, len(text) / 60)


@pytest.fixture(scope="module")
def length_judge():
    with run_in_thread(responder=LengthJudge()) as (url, fake):
        yield url


def gspo(dataset_dir: Path, model: Path, out: Path, url: str, *args: str) -> list[dict[str, Any]]:
    code = main(["gspo", "--data", str(dataset_dir), "--model", str(model), "--out", str(out),
                 "--judge-url", url, "--judge-model", "judge", "--num-generations", "4",
                 "--batch-size", "4", "--max-completion-length", "8", "--max-steps", "2",
                 "--save-steps", "2", "--learning-rate", "1e-4", "--warmup-ratio", "0",
                 "--eval-prompts", "0", *args])
    assert code == 0
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def weight(path: Path) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.model_type == "qwen2"
    return model.state_dict()[WEIGHT]


def learned(metrics: list[dict[str, Any]]) -> None:
    steps = [m for m in metrics if "reward_std" in m]
    assert len(steps) == 2
    # The judge told the completions apart, so some group had a non-zero advantage...
    assert any(m["reward_std"] > 0 and m["grad_norm"] > 0 for m in steps), steps


def test_a_varying_reward_moves_the_policy(dataset_dir, tiny_model_dir, length_judge, tmp_path):
    import torch

    out = tmp_path / "g"
    learned(gspo(dataset_dir, tiny_model_dir, out, length_judge))
    # ...and the update reached the weights.
    assert not torch.equal(weight(out / "final"), weight(tiny_model_dir))


def test_lora_saves_the_adapter_and_merge_gives_a_plain_checkpoint(dataset_dir, tiny_model_dir,
                                                                   length_judge, tmp_path):
    import torch

    out = tmp_path / "g"
    learned(gspo(dataset_dir, tiny_model_dir, out, length_judge, "--lora", "--merge"))
    checkpoint = out / "checkpoints" / "checkpoint-2"
    assert (checkpoint / "adapter_model.safetensors").is_file()
    assert not (checkpoint / "model.safetensors").exists()  # only the adapter was trained
    final = out / "final"
    assert not (final / "adapter_config.json").exists()
    assert (final / "model.safetensors").is_file()
    assert not torch.equal(weight(final), weight(tiny_model_dir))

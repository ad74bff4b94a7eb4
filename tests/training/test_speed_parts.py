"""The trainer's speed parts on the CPU: padding with and without length-grouped batches, the
step-time breakdown, GSPO's generation settings, and kernels that only a GPU runs."""

from __future__ import annotations

import importlib.util
import random
from types import SimpleNamespace

import pytest

from bench.fakes.train_data import row_sentences
from training.config import GspoConfig
from training.errors import UsageError
from training.options import build
from training.speed import generation, kernels
from training.speed.lengths import (
    CountingCollator,
    grouped_order,
    padding_share,
    shuffled_order,
)
from training.speed.timing import StepTimes


def test_padding_share_of_hand_made_batches():
    assert padding_share([4, 4, 2, 2], 2) == 0.0
    assert padding_share([4, 2, 4, 2], 2) == pytest.approx(4 / 16)
    assert padding_share([4, 2, 4, 2], 2, order=[0, 2, 1, 3]) == 0.0
    assert padding_share([], 8) == 0.0


@pytest.mark.parametrize("lengths", [
    # the benchmark's varied answers: 1 to 40 sentences of ~12 tokens after a ~30-token prompt
    [30 + 12 * row_sentences(i, 40, varied=True) for i in range(2000)],
    random.Random(0).choices(range(100, 1501), k=2000),
], ids=["bench-varied", "uniform-100-1500"])
def test_length_grouped_batches_keep_padding_under_a_tenth(lengths):
    shuffled = padding_share(lengths, 8, shuffled_order(len(lengths)))
    grouped = padding_share(lengths, 8, grouped_order(lengths, 8))
    assert shuffled > 0.3
    assert grouped < 0.1
    assert sorted(grouped_order(lengths, 8)) == list(range(len(lengths)))  # every row, once


def test_counting_collator_counts_what_trl_pads():
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    counter = CountingCollator(DataCollatorForLanguageModeling(pad_token_id=0))
    batch = counter([{"input_ids": [1, 2, 3, 4]}, {"input_ids": [5, 6]}])
    assert batch["input_ids"].shape == (2, 4)
    assert (counter.real, counter.positions, counter.share()) == (6, 8, 0.25)
    free = CountingCollator(DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True))
    free([{"input_ids": [1, 2, 3, 4]}, {"input_ids": [5, 6]}])
    assert free.share() == 0.0
    assert CountingCollator(None).share() is None


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_step_times_split_a_gspo_step_into_its_parts():
    clock = Clock()
    times = StepTimes(clock=clock)

    def generate():
        clock.t += 3.0

    def rewards():
        clock.t += 0.5

    def rollout():
        timed_generate()
        timed_rewards()
        clock.t += 0.25  # the old-policy and reference log-probabilities

    timed_generate = times.timed(generate, "generation")
    timed_rewards = times.timed(rewards, "reward")
    timed_rollout = times.timed(rollout, "rollout")
    timed_rollout()  # outside a step (the held-out score): not charged
    assert times.report() == {"steps": 0, "seconds": {}, "share": {}}
    for _ in range(2):
        times.on_step_begin(None, None, None)
        timed_rollout()
        clock.t += 1.0  # forward and backward
        times.on_pre_optimizer_step(None, None, None)
        clock.t += 0.25
        times.on_step_end(None, None, None)
        clock.t += 0.125  # logging, the next batch
    report = times.report()
    assert report["steps"] == 2
    assert report["seconds"] == {"generation": 6.0, "reward": 1.0, "logprobs": 0.5,
                                 "forward_backward": 2.0, "optimizer": 0.5,
                                 "between_steps": 0.125}
    assert sum(report["share"].values()) == pytest.approx(1.0, abs=1e-3)


def gspo(**values) -> GspoConfig:
    return build(GspoConfig, {"data": "d", "model": "m", "out": "o", "reward": "r3", **values})


def test_plain_batched_generate_is_the_default_on_a_gpu_and_paging_is_opt_in(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)  # no vLLM
    plain = generation.generation_settings(gspo())
    assert plain == {"use_vllm": False, "use_transformers_continuous_batching": False}
    assert generation.generation_name(plain) == "transformers"
    paged = generation.generation_settings(gspo(paged_generation=True))
    assert generation.generation_name(paged) == "transformers-paged"
    static = generation.generation_settings(gspo(compile_generation=True))
    assert static["cache_implementation"] == "static"
    assert generation.generation_name(static) == "transformers-static"
    with pytest.raises(UsageError, match="needs vLLM installed"):
        generation.generation_settings(gspo(vllm_mode="colocate"))
    with pytest.raises(UsageError, match="--paged-generation is transformers' decoding"):
        gspo(vllm_mode="colocate", paged_generation=True)


def test_paging_needs_a_gpu():
    settings = generation.generation_settings(gspo(paged_generation=True))
    assert not settings["use_transformers_continuous_batching"]


def test_compiled_decoding_lifts_trls_compile_switch():
    trainer = SimpleNamespace(generation_config=SimpleNamespace(disable_compile=True))
    assert not generation.compile_decoding(trainer, gspo())
    assert trainer.generation_config.disable_compile
    assert generation.compile_decoding(trainer, gspo(compile_generation=True))
    assert not trainer.generation_config.disable_compile


def test_liger_and_fused_adamw_only_on_cuda(monkeypatch):
    import torch

    model = SimpleNamespace(config=SimpleNamespace(_attn_implementation="sdpa"),
                            dtype=torch.float32)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "liger_kernel" else real(name, *a))
    fields, speed = kernels.speed_arguments(model)
    assert fields == {} and speed["liger"] is False and speed["optim"] == "adamw_torch"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    fields, speed = kernels.speed_arguments(model)
    assert fields == {"use_liger_kernel": True, "optim": "adamw_torch_fused"}


def test_only_flash_attention_packs_without_padding():
    import torch

    assert kernels.attention_for(torch.bfloat16) is None  # no GPU here
    assert kernels.padding_free("flash_attention_2") and kernels.padding_free("flash_attention_4")
    assert not kernels.padding_free("sdpa") and not kernels.padding_free(None)

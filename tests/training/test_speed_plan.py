"""The batch planned from free GPU memory, and how the stages make --batch-size, --grad-accum and
activation checkpointing concrete: pure functions, checked on the CPU with a GPU's numbers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from training.config import GspoConfig, SftConfig
from training.errors import UsageError
from training.speed import batch as batch_module
from training.speed.memory import (
    GIB,
    USABLE,
    ModelShape,
    available_host_bytes,
    fixed_bytes,
    plan_batch,
    shape_of,
    token_bytes,
)

# Qwen2.5-0.5B (494 M parameters, tied embeddings)
QWEN = ModelShape(parameters=494_032_768, layers=24, hidden=896, intermediate=4864,
                  vocab=151_936)
H100_FREE = 78 * GIB


def used(plan, shape: ModelShape, seq_len: int, **kw) -> int:
    return (fixed_bytes(shape, **kw)
            + plan.batch_size * seq_len * token_bytes(shape, plan.activation_checkpointing))


def test_an_h100_holds_a_large_batch_without_recomputing_activations():
    plan = plan_batch(H100_FREE, QWEN, 1500)
    assert plan.grad_accum == 1 and not plan.activation_checkpointing
    assert 16 <= plan.batch_size <= 64
    assert used(plan, QWEN, 1500) <= H100_FREE * USABLE
    # one row more would not have fitted
    bigger = dataclasses.replace(plan, batch_size=plan.batch_size + 1)
    assert used(bigger, QWEN, 1500) > H100_FREE * USABLE


def test_less_memory_checkpoints_then_accumulates_but_a_step_keeps_eight_rows():
    plans = [plan_batch(gib * GIB, QWEN, 2048) for gib in (80, 40, 20, 12, 9)]
    assert [p.activation_checkpointing for p in plans][:2] == [False, False]
    assert any(p.activation_checkpointing for p in plans)
    assert plans[-1].grad_accum > 1
    for gib, p in zip((80, 40, 20, 12, 9), plans, strict=True):
        assert p.batch_size * p.grad_accum >= 8
        if gib > 9:  # 9 GiB holds no row of 2,048 tokens: see the next test
            assert used(p, QWEN, 2048) <= gib * GIB * USABLE


def test_without_room_for_one_row_the_step_is_eight_micro_batches_of_one():
    plan = plan_batch(7 * GIB, QWEN, 32_768)
    assert (plan.batch_size, plan.grad_accum, plan.activation_checkpointing) == (1, 8, True)


@pytest.mark.parametrize("gib", [6, 8, 10, 14, 20, 40, 80, 140])
def test_a_gspo_step_is_whole_groups(gib):
    plan = plan_batch(gib * GIB, QWEN, 1300, min_rows=6, multiple_of=6, max_rows=128,
                      frozen_copies=1)
    assert (plan.batch_size * plan.grad_accum) % 6 == 0
    assert plan.batch_size <= 128


def test_max_rows_caps_and_checkpointing_can_be_forced():
    assert plan_batch(H100_FREE, QWEN, 128, max_rows=64).batch_size == 64
    forced = plan_batch(H100_FREE, QWEN, 1500, checkpointing=True)
    assert forced.activation_checkpointing and forced.batch_size == 64
    kept = plan_batch(12 * GIB, QWEN, 2048, checkpointing=False)
    assert not kept.activation_checkpointing and kept.batch_size * kept.grad_accum == 8


def test_lora_and_reference_copies_change_the_room_left():
    full = plan_batch(24 * GIB, QWEN, 2048, max_rows=512)
    lora = plan_batch(24 * GIB, QWEN, 2048, max_rows=512, trainable=0.05)
    with_reference = plan_batch(24 * GIB, QWEN, 2048, max_rows=512, frozen_copies=1)
    assert lora.batch_size > full.batch_size > with_reference.batch_size


def test_shape_of_a_transformers_config():
    from transformers import Qwen2Config

    config = Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2, vocab_size=151_936)
    assert shape_of(config, 494_032_768) == QWEN


def sft_config(**kw) -> SftConfig:
    return SftConfig(data="d", model="m", out="o", **kw)


def test_on_the_cpu_the_batch_is_what_it_always_was(monkeypatch):
    monkeypatch.setattr(batch_module, "free_gpu_bytes", lambda: None)
    monkeypatch.setattr(batch_module, "available_host_bytes", lambda: None)

    def never() -> int:
        raise AssertionError("no plan, no sequence length")

    config, report = batch_module.with_batch(sft_config(), never, stage="sft")
    assert (config.batch_size, config.grad_accum, config.activation_checkpointing) == (8, 1, "on")
    assert report["chosen"] == "default"
    config, report = batch_module.with_batch(
        sft_config(batch_size=2, grad_accum=3, activation_checkpointing="off"), never,
        stage="sft")
    assert (config.batch_size, config.grad_accum, config.activation_checkpointing) == (2, 3, "off")
    assert report["chosen"] == "given"


@pytest.mark.parametrize(("host_gib", "workers", "seq_len", "checkpointing"), [
    (96, "1", 1500, "off"),    # the batch's activations fit beside the fp32 weights
    (96, "4", 1500, "on"),     # four processes share the host
    (96, "1", 20_000, "on"),   # rows too long to keep
    (4, "1", 1500, "on"),      # too little memory left
])
def test_on_the_cpu_checkpointing_is_off_where_the_host_memory_holds_the_batch(
        monkeypatch, host_gib, workers, seq_len, checkpointing):
    monkeypatch.setattr(batch_module, "free_gpu_bytes", lambda: None)
    monkeypatch.setattr(batch_module, "available_host_bytes", lambda: host_gib * GIB)
    monkeypatch.setattr(batch_module, "model_shape", lambda model: QWEN)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", workers)
    config, report = batch_module.with_batch(sft_config(), lambda: seq_len, stage="sft")
    assert (config.batch_size, config.activation_checkpointing) == (8, checkpointing)
    assert report["host_available_gib"] == host_gib and report["seq_len"] == seq_len
    forced, _ = batch_module.with_batch(sft_config(activation_checkpointing="on"),
                                        lambda: seq_len, stage="sft")
    assert forced.activation_checkpointing == "on"


def test_the_host_memory_is_the_kernels_available_capped_by_the_cgroup(tmp_path: Path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 32000000 kB\nMemAvailable: 20000000 kB\n")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    assert available_host_bytes(str(meminfo), str(cgroup)) == 20_000_000 * 1024
    (cgroup / "memory.max").write_text("8000000000\n")
    (cgroup / "memory.current").write_text("3000000000\n")
    assert available_host_bytes(str(meminfo), str(cgroup)) == 5_000_000_000
    (cgroup / "memory.max").write_text("max\n")
    assert available_host_bytes(str(meminfo), str(cgroup)) == 20_000_000 * 1024
    assert available_host_bytes(str(tmp_path / "none"), str(tmp_path / "none")) is None


def on_a_gpu(monkeypatch, free: int = H100_FREE) -> None:
    monkeypatch.setattr(batch_module, "free_gpu_bytes", lambda: free)
    monkeypatch.setattr(batch_module, "model_shape", lambda model: QWEN)


def test_on_a_gpu_what_was_not_given_is_planned(monkeypatch, capsys):
    on_a_gpu(monkeypatch)
    config, report = batch_module.with_batch(sft_config(), lambda: 1500, stage="sft")
    expected = plan_batch(H100_FREE, QWEN, 1500)
    assert (config.batch_size, config.grad_accum) == (expected.batch_size, 1)
    assert config.activation_checkpointing == "off"
    assert report["chosen"] == "memory" and report["seq_len"] == 1500
    assert f"--batch-size {expected.batch_size} --grad-accum 1" in capsys.readouterr().err
    # A batch given is kept; checkpointing goes off only if it fits without.
    config, report = batch_module.with_batch(sft_config(batch_size=4), lambda: 1500,
                                             stage="sft")
    assert (config.batch_size, config.activation_checkpointing) == (4, "off")
    config, _ = batch_module.with_batch(sft_config(batch_size=512), lambda: 1500, stage="sft")
    assert config.activation_checkpointing == "on"


def test_gspo_on_a_gpu_plans_whole_groups_with_the_reference_model(monkeypatch):
    on_a_gpu(monkeypatch)
    config = GspoConfig(data="d", model="m", out="o", reward="r3", num_generations=6)
    resolved, _ = batch_module.with_batch(config, lambda: 290, stage="gspo", max_rows=128,
                                          multiple_of=6, frozen_copies=1)
    assert resolved.batch_size % 6 == 0 and resolved.batch_size <= 128
    resolved.check()
    with pytest.raises(UsageError, match="must be a multiple of --num-generations"):
        batch_module.with_batch(dataclasses.replace(config, batch_size=4), lambda: 290,
                                stage="gspo", multiple_of=6)


def test_the_gpu_plan_reads_the_model_and_the_rows_it_will_train(monkeypatch, tiny_model_dir,
                                                                 tmp_path):
    """The GPU path end to end on the CPU: only the free memory is pretended."""
    from bench.fakes.train_data import write_dataset
    from training.data.dataset import read_rows
    from training.models import load_tokenizer
    from training.speed.memory import model_shape
    from training.stages.sft import longest

    shape = model_shape(str(tiny_model_dir))
    assert (shape.layers, shape.hidden) == (2, 32) and 40_000 < shape.parameters < 50_000
    rows = read_rows(str(write_dataset(tmp_path / "data", rows=8, sentences=8, varied=True)),
                     "sft", "train")
    tokenizer = load_tokenizer(str(tiny_model_dir))
    length = longest(tokenizer, rows, 4096)
    assert length == max(len(tokenizer.apply_chat_template(
        r["prompt"] + r["completion"], add_generation_prompt=True, tokenize=True)["input_ids"])
        for r in rows)
    assert longest(tokenizer, rows, 16) == 16
    monkeypatch.setattr(batch_module, "free_gpu_bytes", lambda: 4 * GIB)
    config, report = batch_module.with_batch(
        SftConfig(data="d", model=str(tiny_model_dir), out="o"), lambda: length, stage="sft")
    assert report["chosen"] == "memory" and report["seq_len"] == length
    assert (config.batch_size, config.grad_accum, config.activation_checkpointing) == (64, 1, "off")

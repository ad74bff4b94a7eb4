"""The shipped accelerate config is one accelerate reads as DeepSpeed ZeRO-3."""

from __future__ import annotations

from pathlib import Path

import pytest

ZERO3 = Path(__file__).resolve().parents[2] / "training" / "launch" / "zero3.yaml"


def test_zero3_config_loads_in_accelerate():
    config_args = pytest.importorskip("accelerate.commands.config.config_args")
    config = config_args.load_config_from_file(str(ZERO3))
    assert config.distributed_type == "DEEPSPEED"
    assert config.deepspeed_config["zero_stage"] == 3
    assert config.deepspeed_config["zero3_save_16bit_model"] is True
    assert config.mixed_precision == "bf16"

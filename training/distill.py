"""`python -m training.distill`: recorded loops → SFT and GSPO checkpoints.

    python -m training.distill export --database URL --out DIR
    python -m training.distill sft    --data DIR --model PATH --out DIR [--lora]
    python -m training.distill gspo   --data DIR --model PATH --out DIR --judge-url URL
                                      --judge-model NAME
    python -m training.distill run    --database URL --model PATH --out DIR --judge-url URL ...
    python -m training.distill report RUN_DIR
    python -m training.distill flywheel --out DIR [--train-prompts N --record-prompts N ...]

Every option can come from `--config FILE` (TOML or YAML); the command line wins. Bad input
is said in one line on stderr with exit status 2, and nothing is left half-written. The same
commands run under `accelerate launch -m training.distill ...`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from training import config as cfg
from training.errors import UsageError
from training.flywheel.config import FlywheelConfig
from training.options import add_fields, build, read_config_file
from training.parallel import close


@dataclass(frozen=True)
class Stage:
    """A subcommand: its config dataclass, the function that runs it ("module:function",
    imported only when chosen, so `--help` never loads torch), and a one-line help."""

    config: type
    target: str
    help: str

    def function(self) -> Callable[[Any], int | None]:
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)


STAGES: dict[str, Stage] = {
    "export": Stage(cfg.ExportConfig, "training.stages.export:run_export",
                    "recorded loops → a versioned dataset directory (sft, prompts, pairs)"),
    "sft": Stage(cfg.SftConfig, "training.stages.sft:run_sft",
                 "supervised fine-tuning on y* (TRL SFTTrainer, loss on the completion only)"),
    "gspo": Stage(cfg.GspoConfig, "training.stages.gspo:run_gspo",
                  "GSPO (TRL GRPOTrainer, sequence-level ratios) with the checklist reward"),
    "run": Stage(cfg.RunConfig, "training.stages.pipeline:run_all",
                 "export, sft and gspo in one run directory"),
    "report": Stage(cfg.ReportConfig, "training.stages.report:run_report",
                    "print a run's summary table (and redraw its plots)"),
    "dpo": Stage(cfg.DpoConfig, "training.stages.dpo:run_dpo",
                 "DPO (TRL DPOTrainer) on the exported pairs: y* chosen, draft y0 rejected"),
    "processbench": Stage(cfg.ProcessbenchConfig, "training.stages.processbench:run_processbench",
                          "R2-Write's ProcessBench: score a model's <think> trajectories"),
    "flywheel": Stage(FlywheelConfig, "training.flywheel.run:run_flywheel",
                      "prompts → recorded loops → export → sft → gspo (checks reward) → "
                      "base and trained evaluated on held-out prompts, resumable"),
}
# `run` takes its own fields plus every option of these stages.
RUN_STAGES = ("export", "sft", "gspo")
RUN_LINKED = frozenset({"out", "data", "model", "tokenizer"})  # `run` sets these itself


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m training.distill", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    subs = top.add_subparsers(dest="stage", metavar="STAGE", required=True)
    for name, stage in STAGES.items():
        sub = subs.add_parser(name, help=stage.help, description=stage.help)
        sub.add_argument("--config", metavar="FILE", help="TOML or YAML file of option values")
        seen: set[str] = set()
        add_fields(sub, stage.config, seen=seen)
        if name == "run":
            for other in RUN_STAGES:
                add_fields(sub, STAGES[other].config, skip=RUN_LINKED, seen=seen)
    return top


def stage_values(name: str, file_values: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """A single stage's values: the config file's top level and its [stage] table, then the
    command line."""
    top = {k: v for k, v in file_values.items() if not isinstance(v, dict)}
    table = file_values.get(name, {})
    return {**top, **(table if isinstance(table, dict) else {}), **given}


def configure(name: str, given: dict[str, Any], file_values: dict[str, Any]) -> Any:
    """The stage's config dataclass, checked."""
    if name == "run":
        from training.stages.pipeline import run_configs

        return run_configs(given, file_values)
    tables = {k for k, v in file_values.items() if isinstance(v, dict)}
    if tables - {name}:
        raise UsageError(f"config file tables {sorted(tables - {name})} do not apply to {name}")
    return build(STAGES[name].config, stage_values(name, file_values, given))


def main(argv: list[str] | None = None) -> int:
    args = vars(parser().parse_args(argv))
    name = args.pop("stage")
    config_file = args.pop("config", None)
    try:
        file_values = read_config_file(config_file) if config_file else {}
        config = configure(name, args, file_values)
        code = STAGES[name].function()(config) or 0
        close()
        return code
    except UsageError as exc:
        print(f"python -m training.distill {name}: error: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{name}: interrupted; run it again with --resume to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

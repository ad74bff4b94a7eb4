"""`run`: export → sft → gspo into OUT/export, OUT/sft, OUT/gspo.

Options shared by several stages (e.g. --max-steps, --lora) apply to each stage that has
them; a config file's [export], [sft] and [gspo] tables set one stage only. With --resume,
stages already finished are kept and an interrupted one continues.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.config import ExportConfig, GspoConfig, RunConfig, SftConfig
from training.errors import UsageError
from training.options import build, flag

STAGE_CONFIGS = {"export": ExportConfig, "sft": SftConfig, "gspo": GspoConfig}


@dataclass(frozen=True)
class RunPlan:
    run: RunConfig
    export: ExportConfig
    sft: SftConfig | None
    gspo: GspoConfig


def _names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def run_configs(given: dict[str, Any], file_values: dict[str, Any]) -> RunPlan:
    top = {k: v for k, v in file_values.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in file_values.items() if isinstance(v, dict)}
    if set(tables) - {"run", *STAGE_CONFIGS}:
        raise UsageError(f"config file tables {sorted(set(tables) - {'run', *STAGE_CONFIGS})} "
                         "are not stages of `run` (run, export, sft, gspo)")
    merged = {**top, **tables.get("run", {}), **given}
    known = _names(RunConfig).union(*(_names(c) for c in STAGE_CONFIGS.values()))
    unknown = sorted(set(merged) - known)
    if unknown:
        raise UsageError(f"unknown option(s): {', '.join(flag(u) for u in unknown)}")
    run_names = _names(RunConfig)
    run = build(RunConfig, {k: v for k, v in merged.items() if k in run_names})
    out = Path(run.out)
    linked: dict[str, dict[str, Any]] = {
        "export": {"out": str(out / "export"), "model": run.loops_model,
                   "tokenizer": run.model},
        "sft": {"data": str(out / "export"), "model": run.model, "out": str(out / "sft")},
        "gspo": {"data": str(out / "export"), "out": str(out / "gspo"),
                 "model": run.model if run.skip_sft else str(out / "sft" / "final")},
    }
    configs = {}
    for name, cls in STAGE_CONFIGS.items():
        names = _names(cls) - set(linked[name])
        values = {k: v for k, v in {**top, **tables.get(name, {}), **given}.items()
                  if k in names and k not in run_names}
        configs[name] = build(cls, {**values, **linked[name]})
    return RunPlan(run, configs["export"], None if run.skip_sft else configs["sft"],
                   configs["gspo"])


def _done(config: Any) -> bool:
    return Path(config.out).is_dir()


def run_all(plan: RunPlan) -> int:
    from training.stages.export import run_export
    from training.stages.gspo import open_judge, run_gspo
    from training.stages.sft import run_sft

    resume = plan.gspo.resume
    if not resume and Path(plan.run.out).exists() and not plan.gspo.overwrite:
        raise UsageError(f"{plan.run.out} exists: pass --overwrite to replace its stages, "
                         "or --resume to continue")
    # Fail before writing anything when the judge is not there (export takes a while).
    if plan.gspo.uses_judge:
        open_judge(plan.gspo, retries=0).close()
    stages: list[tuple[Any, Any]] = [(run_export, plan.export)]
    if plan.sft is not None:
        stages.append((run_sft, plan.sft))
    stages.append((run_gspo, plan.gspo))
    for function, config in stages:
        if resume and _done(config):
            continue  # finished in an earlier attempt
        if resume and not Path(config.out).with_name(Path(config.out).name + ".partial").exists():
            config = dataclasses.replace(config, resume=False) \
                if hasattr(config, "resume") else config
        function(config)
    print(f"run finished: {plan.run.out} (python -m training.distill report {plan.run.out})")
    return 0

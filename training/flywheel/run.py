"""`python -m training.distill flywheel`: serve → record → export → variants → SFT → GSPO →
serve the checkpoint → evaluate base and trained on held-out prompts, in one resumable command.

Each stage writes one subfolder of OUT, whole or not at all (into NAME.partial, renamed to
NAME when it finishes); `--resume` skips the stages whose folder exists and continues an
interrupted one (record and evaluate keep their answers as they come, sft and gspo their
checkpoints); `--overwrite` starts every stage again (the base model converted from GGUF
into OUT/models is kept). What each stage took is kept in OUT/stages.json. The other
stages' JSON lines go to stderr: stdout carries one JSON line, the figures of the whole run
(report/report.json) with the seconds of each stage.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from training.data.prompts import generate, load, manifest
from training.errors import UsageError
from training.flywheel.config import FlywheelConfig
from training.flywheel.server import model_folder, stopped_by_sigterm
from training.stages.checkpoints import FINAL, StageDir, write_json

STAGES = ("prompts", "record", "export", "sft-data", "gspo-data", "sft", "dpo", "gspo",
          "evaluate", "report")
TIMES = "stages.json"
MODELS = "models"


def _prompts(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.data.dataset import write_jsonl

    train, heldout = generate(config.seed, config.train_prompts, config.heldout_prompts)
    write_jsonl(work / "train.jsonl", [p.record() for p in train])
    write_jsonl(work / "heldout.jsonl", [p.record() for p in heldout])
    write_json(work / "manifest.json", manifest(config.seed, train, heldout))


def _record(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.flywheel.record import record

    record(config, run, base, work)


def _sft_data(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.flywheel.asking import read_rows
    from training.flywheel.variants import write_sft_data

    counts = write_sft_data(work, run / "export", load(run / "prompts" / "train.jsonl"),
                            config.variants, config.seed,
                            recorded=read_rows(run / "record" / "answers.jsonl"))
    print(json.dumps({"out": str(run / "sft-data"), **counts}))


def _gspo_data(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.flywheel.asking import read_rows
    from training.flywheel.preference.rounds import dev_split
    from training.flywheel.record import draft_text
    from training.flywheel.rows import write_gspo_data

    pool, dev = dev_split(load(run / "prompts" / "train.jsonl"), config.dev_prompts)
    drafts = {key: text for key, row in read_rows(run / "record" / "answers.jsonl").items()
              if (text := draft_text(row.get("reflection"))) is not None}
    write_gspo_data(work, pool, config.seed, drafts, dev)


def _evaluate(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.flywheel.evaluate import evaluate

    evaluate(config, run, base, trained(run, base), work)


def _report(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.flywheel.report import write_report

    write_report(run, work, _times(run))


def trained(run: Path, base: Path) -> Path:
    """The last policy trained: GSPO's, else DPO's, else SFT's; `base` when no training
    stage ran."""
    for stage in ("gspo", "dpo", "sft"):
        if (run / stage / FINAL).is_dir():
            return run / stage / FINAL
    return base


def _skipped(run: Path, name: str, why: str) -> None:
    """An empty stage folder whose report says the stage did not run and why."""
    (run / name).mkdir()
    write_json(run / name / "report.json", {"stage": name, "summary": {"steps": 0,
                                                                       "skipped": why}})


def _in_folder(name: str, work: Callable[[FlywheelConfig, Path, Path, Path], None]
               ) -> Callable[[FlywheelConfig, Path, Path], None]:
    """A stage of ours, written into NAME.partial and renamed to NAME when it returns. Bad
    input removes the partial folder; any other failure keeps it for --resume."""

    def run_stage(config: FlywheelConfig, run: Path, base: Path) -> None:
        stage = StageDir(run / name, resume=config.resume and
                         (run / f"{name}.partial").is_dir())
        out = stage.open()
        try:
            work(config, run, base, out)
        except UsageError:
            stage.discard()
            raise
        stage.commit()

    return run_stage


def _export(config: FlywheelConfig, run: Path, base: Path) -> None:
    from training.flywheel.rows import export_config
    from training.stages.export import run_export

    database = f"sqlite+aiosqlite:///{run / 'record' / 'redraft.db'}"
    run_export(export_config(config, run, database, base))


def _sft(config: FlywheelConfig, run: Path, base: Path) -> None:
    if config.sft_steps == 0:  # the next stage starts from the base model
        _skipped(run, "sft", "--sft-steps 0")
        return
    from training.flywheel.rows import sft_config
    from training.stages.sft import run_sft

    run_sft(sft_config(config, run, base))


def _dpo(config: FlywheelConfig, run: Path, base: Path, work: Path) -> None:
    from training.flywheel.preference.rounds import prefer

    start = trained(run, base)
    if config.dpo_rounds == 0:
        write_json(work / "report.json", {"stage": "dpo", "summary": {
            "rounds": [], "skipped": "--dpo-rounds 0", "start": str(start)}})
        return
    prefer(config, run, start, work)


def _gspo(config: FlywheelConfig, run: Path, base: Path) -> None:
    from training.flywheel.rows import gspo_config
    from training.stages.gspo import run_gspo

    if config.gspo_steps == 0:
        _skipped(run, "gspo", "--gspo-steps 0")
        return
    run_gspo(gspo_config(config, run, trained(run, base)))


RUNNERS: dict[str, Callable[[FlywheelConfig, Path, Path], None]] = {
    "prompts": _in_folder("prompts", _prompts), "record": _in_folder("record", _record),
    "export": _export, "sft-data": _in_folder("sft-data", _sft_data),
    "gspo-data": _in_folder("gspo-data", _gspo_data), "sft": _sft,
    "dpo": _in_folder("dpo", _dpo), "gspo": _gspo, "evaluate": _in_folder("evaluate", _evaluate),
    "report": _in_folder("report", _report),
}


def _times(run: Path) -> dict[str, float]:
    path = run / TIMES
    return json.loads(path.read_text("utf-8")) if path.is_file() else {}


def _save_time(run: Path, name: str, seconds: float) -> None:
    times = {**_times(run), name: round(seconds, 1)}
    ordered = {s: times[s] for s in (MODELS, *STAGES) if s in times}
    tmp = run / f".{TIMES}.tmp"
    tmp.write_text(json.dumps(ordered, indent=2) + "\n", "utf-8")
    os.replace(tmp, run / TIMES)


def prepare(config: FlywheelConfig) -> Path:
    """The run directory, checked (a new one, or one to resume or to overwrite), not made."""
    run = Path(config.out)
    if run.exists() and not run.is_dir():
        raise UsageError(f"--out {run} exists and is not a directory")
    held = [s for s in STAGES if (run / s).exists() or (run / f"{s}.partial").exists()]
    if held and not (config.resume or config.overwrite):
        raise UsageError(f"{run} holds a flywheel run ({', '.join(held)}): pass --resume to "
                         "continue it or --overwrite to start again")
    return run


def clear(run: Path) -> None:
    """--overwrite: every stage goes; the base model converted into OUT/models is kept (the
    same file converts to the same folder)."""
    for name in [*STAGES, *(f"{s}.partial" for s in STAGES)]:
        shutil.rmtree(run / name, ignore_errors=True)
    (run / TIMES).unlink(missing_ok=True)


def run_flywheel(config: FlywheelConfig) -> int:
    run = prepare(config)
    given_folder = config.model is not None and Path(config.model).is_dir()
    converting = not given_folder and not (run / MODELS).is_dir()
    started = time.monotonic()
    base = model_folder(config.model, run / MODELS)  # a bad --model: exit 2, nothing written
    if config.overwrite:
        clear(run)
    run.mkdir(parents=True, exist_ok=True)
    if converting:  # a .gguf file (the embedded default) converted once into OUT/models
        _save_time(run, MODELS, time.monotonic() - started)
    with stopped_by_sigterm():  # a terminated run stops its servers as Ctrl-C does
        for name in STAGES:
            if (run / name).is_dir():
                print(f"flywheel: {name} is done; kept", file=sys.stderr)
                continue
            print(f"flywheel: {name} ...", file=sys.stderr, flush=True)
            started = time.monotonic()
            with contextlib.redirect_stdout(sys.stderr):  # stdout carries the one JSON line
                RUNNERS[name](config, run, base)
            _save_time(run, name, time.monotonic() - started)
    figures = json.loads((run / "report" / "report.json").read_text("utf-8"))
    print(json.dumps({"flywheel": str(run), "model": str(base), "seed": config.seed,
                      **figures, "stage_seconds": _times(run)}, ensure_ascii=False))
    return 0

"""`python -m training.distill flywheel` end to end on the tiny random model: every stage in
its folder, one JSON line whose figures add up, `--resume` keeping what is done, an
interrupted evaluation leaving no half-written stage and continuing where it stopped, and the
same evaluation twice giving the same figures."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from bench.fakes.methods_judge import MethodsResponder
from bench.fakes.upstream import run_in_thread
from training.distill import main
from training.flywheel import evaluate as evaluation
from training.flywheel import llamacpp
from training.flywheel.figures import timing_free
from training.flywheel.pairs import orders
from training.flywheel.run import STAGES

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings(
    r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")]

SIZES = ["--train-prompts", "10", "--heldout-prompts", "4", "--record-prompts", "5",
         "--max-rounds", "1", "--max-tokens", "12", "--sft-steps", "2", "--sft-batch-size",
         "2", "--sft-learning-rate", "1e-3", "--gspo-steps", "1", "--num-generations", "2",
         "--gspo-batch-size", "2", "--dev-prompts", "3", "--dpo-rounds", "1", "--dpo-prompts",
         "3", "--dpo-samples", "2", "--dpo-steps", "1",
         "--keep-dropped-task"]  # a random model's text drops it


def flywheel(out: Path, model: Path, *extra: str) -> tuple[int, list[str]]:
    """The command's exit status and its stdout lines."""
    stdout = io.StringIO()
    with redirect_stdout(stdout):
        code = main(["flywheel", "--out", str(out), "--model", str(model), *SIZES, *extra])
    return code, stdout.getvalue().splitlines()


@pytest.fixture(scope="module")
def run(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("flywheel") / "run"
    code, lines = flywheel(out, tiny_model_dir)
    assert code == 0
    assert len(lines) == 1, lines  # the stages' own lines went to stderr
    return {"out": out, "line": json.loads(lines[0])}


def test_every_stage_is_a_folder_and_the_json_line_adds_up(run, tiny_model_dir):
    out, line = run["out"], run["line"]
    assert sorted(p.name for p in out.iterdir()) == sorted([*STAGES, "stages.json"])
    assert list(line["stage_seconds"]) == list(STAGES)
    assert line["prompts"] == {"train": 10, "heldout": 4, "evaluated": 4,
                               "evaluated_checks": line["prompts"]["evaluated_checks"]}
    assert line["record"]["prompts"] == line["record"]["loops"] == 5
    assert line["export"]["loops_read"] == 5
    assert sum(line["export"]["sft"].values()) == line["export"]["prompts"]
    # a random model's text drops the task, so no variant of it holds and none is recovered
    assert line["variants"] == {"rows": line["export"]["sft"]["train"], "variants": 0,
                                "answers_changed_in_code": 0, "relabelled": 0, "twins": 0,
                                "recovered": 0, "recovered_answers": 0}
    assert line["sft"]["steps"] == 2 and line["gspo"]["steps"] == 1
    # one DPO round on the SFT policy's samples, its dev split answered before and after it
    dpo = line["dpo"]
    assert dpo["dev_prompts"] == 3 and [r["round"] for r in dpo["rounds"]] == [0, 1]
    assert dpo["rounds"][0]["samples"]["answers"] == 3 * 2
    assert dpo["rounds"][0]["pairs"] == sum(dpo["rounds"][0]["by_source"].values()) > 0
    assert dpo["rounds"][0]["steps"] == 1 and dpo["rounds"][1]["pairs"] is None
    assert line["gspo"]["per_step"]["step"] == [1]
    # one group of G = 2, and the 3 dev prompts answered before and after training
    assert line["gspo"]["reward_stats"]["scored"] == 2 + 2 * 3
    dev = line["gspo"]["dev"]
    assert dev["before"]["prompts"] == dev["after"]["prompts"] == 3 and dev["during"] == []

    summary = json.loads((out / "evaluate" / "summary.json").read_text())
    assert summary["models"] == {"base": str(tiny_model_dir),
                                 "trained": str(out / "gspo" / "final")}
    methods = line["evaluation"]["methods"]
    assert list(methods) == list(evaluation.METHODS)
    for name, figures in methods.items():
        full = summary["methods"][name]
        assert figures["prompts"] == 4 and figures["errors"] == 0
        assert full["checks"] == line["prompts"]["evaluated_checks"]
        assert sum(k["checks"] for k in full["per_kind"].values()) == full["checks"]
        assert figures["check_pass_rate"] == round(full["checks_passed"] / full["checks"], 4)
        assert figures["prompt_pass_rate"] == round(full["prompts_passed"] / 4, 4)
        assert set(figures["per_kind"]) == set(full["per_kind"])
    for name in ("base", "trained"):  # no call
        assert methods[f"{name}_conformed"]["tokens"] == methods[f"{name}_direct"]["tokens"]
    assert methods["base_mrpo"]["tokens"] > methods["base_direct"]["tokens"]
    assert methods["base_mrpo"]["loop"]["loops"] == 4
    assert "loop" not in methods["base_direct"]
    assert methods["base_direct"]["length_vs_base"] == 1.0
    assert line["evaluation"]["pair_judge"] == {"skipped": "no --pair-judge-url given"}
    assert line["plots"] == ["dpo_rounds.png", "gspo.png", "heldout_kinds.png"]
    report = (out / "report" / "report.md").read_text()
    assert "| base direct |" in report
    assert "; 0 from 0 recorded answers export left out" in report
    # what is served as "trained" is what SFT, DPO and GSPO wrote, not the base weights
    trained = (out / "gspo" / "final" / "model.safetensors").read_bytes()
    assert trained != (tiny_model_dir / "model.safetensors").read_bytes()


def test_resume_keeps_every_done_stage(run, tiny_model_dir, capsys):
    out = run["out"]
    times = (out / "stages.json").read_text()
    code, lines = flywheel(out, tiny_model_dir, "--resume")
    assert code == 0
    err = capsys.readouterr().err
    assert all(f"flywheel: {s} is done; kept" in err for s in STAGES)
    assert json.loads(lines[0]) == run["line"]
    assert (out / "stages.json").read_text() == times


def test_a_run_directory_in_use_needs_resume_or_overwrite(run, tiny_model_dir, capsys):
    assert flywheel(run["out"], tiny_model_dir)[0] == 2
    assert "pass --resume to continue it or --overwrite" in capsys.readouterr().err


def test_bad_options_write_nothing(tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert flywheel(out, tiny_model_dir, "--record-prompts", "11")[0] == 2
    assert "--record-prompts 11 is more than --train-prompts 10" in capsys.readouterr().err
    assert flywheel(out, tiny_model_dir, "--model", str(tmp_path / "none"))[0] == 2
    assert "no such folder or .gguf file" in capsys.readouterr().err
    assert not out.exists()


def test_an_interrupted_evaluation_continues_and_repeats_its_figures(run, tiny_model_dir,
                                                                     tmp_path, monkeypatch):
    copy = tmp_path / "run"
    shutil.copytree(run["out"], copy)
    for stage in ("evaluate", "report"):
        shutil.rmtree(copy / stage)

    def judge_went_away(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the judge went away")

    monkeypatch.setattr(evaluation, "pair_figures", judge_went_away)
    with pytest.raises(RuntimeError, match="went away"):
        flywheel(copy, tiny_model_dir, "--resume")
    assert not (copy / "evaluate").exists()  # no half-written stage
    answered = sorted((copy / "evaluate.partial" / "answers").glob("*.jsonl"))
    assert [p.stem for p in answered] == sorted(m for m in evaluation.METHODS
                                                if not m.endswith("_conformed"))
    assert all(len(p.read_text().splitlines()) == 4 for p in answered)

    monkeypatch.undo()

    class NoServer:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("every answer was kept: no server is started again")

    monkeypatch.setattr(llamacpp, "Server", NoServer)
    with run_in_thread(responder=MethodsResponder(verdict="B")) as (url, _):
        code, lines = flywheel(copy, tiny_model_dir, "--resume", "--pair-judge-url", url,
                               "--pair-judge-model", "judge")
    assert code == 0
    line = json.loads(lines[0])
    # the same evaluation (fresh servers, greedy) gives the same figures, timings aside
    assert timing_free(line["evaluation"]["methods"]) == \
        timing_free(run["line"]["evaluation"]["methods"])
    pair = line["evaluation"]["pair_judge"]
    trained_second = sum(not first for first in orders([f"heldout-{i:05d}" for i in range(4)],
                                                       seed=0).values())
    assert pair["wins"] == trained_second  # the judge always prefers response B
    assert pair["wins"] + pair["losses"] == pair["judged"] == 4 and pair["failed"] == 0

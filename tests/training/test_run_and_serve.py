"""`run` from a TOML config (export → sft → gspo), `report` on the run, and the final
checkpoint served by redraft's `local` backend to the official `openai` client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.training.serving import serve_and_ask
from training.distill import main

pytestmark = pytest.mark.filterwarnings(
    r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")


@pytest.fixture(scope="module")
def run_dir(recorded, tiny_model_dir, writer_fake, tmp_path_factory) -> Path:
    url, fake = writer_fake
    root = tmp_path_factory.mktemp("run")
    config = root / "run.toml"
    config.write_text(f"""
database = "{recorded['url']}"
judge_url = "{url}"
judge_model = "fake-model"
namespace = "team-a"
max_steps = 1
batch_size = 2
holdout = 0.2

[sft]
learning_rate = 1e-4

[gspo]
num_generations = 2
max_completion_length = 8
eval_prompts = 1
""")
    out = root / "out"
    assert main(["run", "--config", str(config), "--model", str(tiny_model_dir),
                 "--out", str(out)]) == 0
    return out


def test_run_writes_every_stage_and_report_summarises_it(run_dir, capsys):
    for stage in ("export", "sft", "gspo"):
        assert (run_dir / stage / "report.json").is_file(), stage
    sft = json.loads((run_dir / "sft" / "report.json").read_text())["summary"]
    gspo = json.loads((run_dir / "gspo" / "report.json").read_text())
    assert sft["steps"] == 1 and gspo["summary"]["steps"] == 1
    assert json.loads((run_dir / "export" / "manifest.json").read_text())[
        "filters"]["namespace"] == "team-a"
    assert gspo["summary"]["completions"] == 2  # one step of one group: the [gspo] table's G

    capsys.readouterr()
    for png in (run_dir / "gspo").glob("*.png"):
        png.unlink()
    assert main(["report", str(run_dir)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["stage", "steps", "loss"]
    assert [line.split()[0] for line in table[1:]] == ["export", "sft", "gspo"]
    assert {p.name for p in (run_dir / "gspo").glob("*.png")} == {"training.png", "holdout.png"}


def test_report_needs_a_run_directory(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "holds no stage reports" in capsys.readouterr().err


def test_the_checkpoint_is_served_by_the_local_backend(run_dir, tmp_path, monkeypatch):
    # REDRAFT_MODEL=out/gspo/final redraft serve
    reply = serve_and_ask(run_dir / "gspo" / "final", tmp_path, monkeypatch,
                          "Write a short note.", max_new_tokens=6)
    assert reply.choices[0].message.role == "assistant"
    assert reply.usage.completion_tokens == 6  # the tiny model never ends early
    assert reply.choices[0].message.content


def test_run_again_needs_resume_or_overwrite(run_dir, tiny_model_dir, capsys):
    config = run_dir.parent / "run.toml"
    argv = ["run", "--config", str(config), "--model", str(tiny_model_dir), "--out", str(run_dir)]
    before = (run_dir / "gspo" / "report.json").stat().st_mtime_ns
    capsys.readouterr()
    assert main(argv) == 2
    assert "pass --overwrite to replace its stages, or --resume" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0  # every stage finished: nothing is redone
    assert (run_dir / "gspo" / "report.json").stat().st_mtime_ns == before

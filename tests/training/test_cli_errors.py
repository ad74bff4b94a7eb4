"""Every bad input gets one clear line on stderr, exit status 2, and nothing written."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from training.distill import main

ROOT = Path(__file__).resolve().parents[2]


def fails(capsys: pytest.CaptureFixture[str], argv: list[str], message: str,
          *untouched: Path) -> None:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err
    for path in untouched:
        assert not path.exists(), path
        assert not Path(str(path) + ".partial").exists(), path


def test_database_unreachable_missing_or_not_migrated(capsys, tmp_path):
    out = tmp_path / "out"
    fails(capsys, ["export", "--database", "postgresql+asyncpg://nobody@127.0.0.1:1/none",
                   "--out", str(out)], "is unreachable", out)
    missing = tmp_path / "missing.db"
    fails(capsys, ["export", "--database", f"sqlite+aiosqlite:///{missing}", "--out", str(out)],
          "no such SQLite file", out, missing)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    fails(capsys, ["export", "--database", f"sqlite+aiosqlite:///{empty}", "--out", str(out)],
          "not migrated", out)
    fails(capsys, ["export", "--database", "not a url", "--out", str(out)],
          "is not a database URL", out)


def test_output_directory_exists_unless_overwrite(capsys, recorded, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    fails(capsys, ["export", "--database", recorded["url"], "--out", str(out)],
          "exists: pass --overwrite")
    assert (out / "keep.txt").read_text() == "mine"
    assert main(["export", "--database", recorded["url"], "--out", str(out), "--overwrite"]) == 0
    assert (out / "manifest.json").is_file() and not (out / "keep.txt").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--holdout", "2"], "--holdout must be at most 0.9"),
    (["--holdout", "lots"], "--holdout: 'lots' is not a float"),
    (["--min-gain", "-0.5"], "--min-gain must be at least 0.0"),
    (["--max-prompt-tokens", "3"], "--max-prompt-tokens must be at least 16"),
    (["--since", "yesterday"], "is not an ISO date/time"),
    (["--since", "2026-02-01", "--until", "2026-01-01"], "--since must be before --until"),
])
def test_export_options_out_of_range(capsys, recorded, tmp_path, args, message):
    out = tmp_path / "out"
    fails(capsys, ["export", "--database", recorded["url"], "--out", str(out), *args], message,
          out)


def test_training_inputs(capsys, dataset_dir, tiny_model_dir, tmp_path, writer_fake):
    out = tmp_path / "out"
    not_model = tmp_path / "not-a-model"
    not_model.mkdir()
    fails(capsys, ["sft", "--data", str(dataset_dir), "--model", str(not_model), "--out",
                   str(out)], "is not a model", out)
    fails(capsys, ["sft", "--data", str(dataset_dir), "--model", str(tmp_path / "nowhere"),
                   "--out", str(out)], "no such directory", out)
    fails(capsys, ["sft", "--data", str(tmp_path), "--model", str(tiny_model_dir), "--out",
                   str(out)], "is not an exported dataset", out)
    fails(capsys, ["sft", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--merge"], "--merge only applies with --lora", out)
    fails(capsys, ["sft", "--data", str(dataset_dir), "--out", str(out)], "--model is required",
          out)
    gspo = ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
            str(out), "--judge-model", "m"]
    fails(capsys, [*gspo, "--judge-url", "http://127.0.0.1:1/v1"],
          "the judge at http://127.0.0.1:1/v1 is unreachable", out)
    url = writer_fake[0]
    fails(capsys, [*gspo, "--judge-url", url, "--num-generations", "1"],
          "--num-generations must be at least 2", out)
    fails(capsys, [*gspo, "--judge-url", url, "--num-generations", "3", "--batch-size", "4"],
          "must be a multiple of --num-generations", out)
    fails(capsys, [*gspo, "--judge-url", url, "--reward", "vibes", "--num-generations", "2"],
          "--reward: 'vibes' is not one of checklist, pairwise, r3", out)
    # The judge options are required by the rewards that score with a judge (not by r3: its
    # GSPO run without them is in test_methods_gspo).
    fails(capsys, gspo, "--reward checklist scores completions with a judge: --judge-url is "
          "required", out)
    fails(capsys, [*gspo[:-2], "--judge-url", url, "--reward", "pairwise+process"],
          "--reward pairwise+process scores completions with a judge: --judge-model is required",
          out)
    fails(capsys, [*gspo, "--reward", "r3", "--judge-url", "127.0.0.1:8001"],
          "--judge-url '127.0.0.1:8001' must start with http:// or https://", out)
    fails(capsys, [*gspo, "--judge-url", url, "--top-p", "1.5"], "--top-p must be at most 1.0",
          out)


def test_run_checks_the_judge_before_writing(capsys, recorded, tiny_model_dir, tmp_path):
    out = tmp_path / "run"
    fails(capsys, ["run", "--database", recorded["url"], "--model", str(tiny_model_dir),
                   "--out", str(out), "--judge-url", "http://127.0.0.1:1/v1",
                   "--judge-model", "m"], "is unreachable", out)


def test_run_needs_the_judge_options_only_for_judge_rewards(capsys, recorded, tiny_model_dir,
                                                           tmp_path):
    out = tmp_path / "run"
    base = ["run", "--database", recorded["url"], "--model", str(tiny_model_dir), "--out",
            str(out)]
    out.mkdir()
    fails(capsys, base, "--reward checklist scores completions with a judge: --judge-url is "
          "required")
    # r3 needs no judge: the options pass their checks, and the run stops at the next one.
    fails(capsys, [*base, "--reward", "r3"], "exists: pass --overwrite")
    assert not any(out.iterdir())


def test_the_reward_names_are_the_registry():
    from training.config import JUDGE_FREE_REWARDS, REWARD_NAMES
    from training.rewards import REWARDS

    assert tuple(REWARDS) == REWARD_NAMES
    assert JUDGE_FREE_REWARDS < set(REWARD_NAMES)


def test_config_file_errors(capsys, recorded, tmp_path):
    out = tmp_path / "out"
    bad = tmp_path / "bad.toml"
    bad.write_text('holdout = "most"\n')
    fails(capsys, ["export", "--config", str(bad), "--database", recorded["url"],
                   "--out", str(out)], "--holdout: 'most' is not a float", out)
    typo = tmp_path / "typo.yaml"
    typo.write_text("holdot: 0.2\n")
    fails(capsys, ["export", "--config", str(typo), "--database", recorded["url"],
                   "--out", str(out)], "unknown option(s): --holdot", out)
    broken = tmp_path / "broken.toml"
    broken.write_text("holdout = = 1\n")
    fails(capsys, ["export", "--config", str(broken), "--out", str(out)], "is not valid", out)
    fails(capsys, ["export", "--config", str(tmp_path / "none.toml"), "--out", str(out)],
          "no such file", out)


def test_config_file_sets_options_and_the_command_line_wins(recorded, tmp_path):
    import json

    config = tmp_path / "export.yaml"
    config.write_text(f"database: {recorded['url']}\nnamespace: team-b\nholdout: 0\n")
    out = tmp_path / "from-file"
    assert main(["export", "--config", str(config), "--out", str(out)]) == 0
    assert json.loads((out / "manifest.json").read_text())["counts"]["prompts"] == 1
    out2 = tmp_path / "overridden"
    assert main(["export", "--config", str(config), "--out", str(out2),
                 "--namespace", "team-a"]) == 0
    assert json.loads((out2 / "manifest.json").read_text())["counts"]["prompts"] == 6


def test_the_module_runs_and_exits_2(tmp_path):
    """`python -m training.distill` itself: usage errors exit 2 on stderr."""
    proc = subprocess.run([sys.executable, "-m", "training.distill", "export", "--out",
                           str(tmp_path / "o"), "--holdout", "5"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--holdout must be at most 0.9" in proc.stderr


def test_database_urls_as_people_write_them(capsys, recorded, tmp_path):
    """A plain `sqlite:///path` (or a sync driver) is opened with the async driver."""
    from training.data.source import async_url

    path = recorded["url"].split(":///", 1)[1]
    for url in (f"sqlite:///{path}", f"sqlite+pysqlite:///{path}"):
        out = tmp_path / url.split(":")[0].replace("+", "_")
        assert main(["export", "--database", url, "--out", str(out)]) == 0
        assert (out / "manifest.json").is_file()
    assert async_url("postgresql://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert async_url("postgres://u:p@h:5/db") == "postgresql+asyncpg://u:p@h:5/db"
    assert async_url("postgresql+psycopg2://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert async_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    out = tmp_path / "out"
    fails(capsys, ["export", "--database", "postgresql://nobody@127.0.0.1:1/none", "--out",
                   str(out)], "is unreachable", out)
    fails(capsys, ["export", "--database", "mysql://u@h/db", "--out", str(out)],
          "the loop store is SQLite or PostgreSQL, not mysql", out)


def _prompt_lengths(dataset_dir: Path, kind: str, model_dir: Path) -> list[int]:
    from training.data.dataset import read_rows
    from training.models import load_tokenizer
    from training.stages.runner import prompt_tokens

    tokenizer = load_tokenizer(str(model_dir))
    return sorted(prompt_tokens(tokenizer, r["prompt"])
                  for r in read_rows(str(dataset_dir), kind, "train"))


@pytest.mark.parametrize(("stage", "kind", "noun"), [("sft", "sft", "rows"),
                                                      ("dpo", "pairs", "pairs")])
def test_every_prompt_longer_than_max_length(capsys, dataset_dir, tiny_model_dir, tmp_path,
                                             stage, kind, noun):
    lengths = _prompt_lengths(dataset_dir, kind, tiny_model_dir)
    out = tmp_path / "out"
    fails(capsys, [stage, "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--max-length", str(lengths[0])],
          f"all {len(lengths)} {noun} exceed --max-length {lengths[0]} tokens; raise it or "
          "shorten prompts at export", out)


def test_the_rows_dropped_for_max_length_are_counted(capsys, dataset_dir, tiny_model_dir,
                                                      tmp_path):
    lengths = _prompt_lengths(dataset_dir, "sft", tiny_model_dir)
    cut = lengths[-1]  # the longest prompt fills it; the others leave room
    dropped = sum(1 for n in lengths if n >= cut)
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["sft", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                 str(out), "--max-length", str(cut), "--max-steps", "1", "--batch-size",
                 "2"]) == 0
    err = capsys.readouterr().err
    assert f"sft: dropped {dropped} of {len(lengths)} train rows whose prompt fills " \
           f"--max-length {cut} tokens" in err, err
    assert (out / "final" / "config.json").is_file()


def test_gspo_that_would_take_zero_steps(capsys, dataset_dir, tiny_model_dir, tmp_path):
    from training.data.dataset import read_rows

    prompts = len(read_rows(str(dataset_dir), "prompts", "train"))
    batch = 2 * (prompts + 1)
    out = tmp_path / "out"
    fails(capsys, ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--reward", "r3", "--num-generations", "2", "--max-steps", "1",
                   "--batch-size", str(batch)],
          f"{prompts} training prompts make 0 steps: one step takes {prompts + 1} "
          f"(--batch-size {batch} x --grad-accum 1 x 1 process(es) / --num-generations 2)", out)
    fails(capsys, ["sft", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--epochs", "0"], "--epochs 0 with no --max-steps makes 0 steps",
          out)


def test_generation_batch_must_fit_the_batch_and_the_group(capsys, dataset_dir, tiny_model_dir,
                                                           tmp_path):
    out = tmp_path / "out"
    fails(capsys, ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--reward", "r3", "--num-generations", "2", "--batch-size", "2",
                   "--generation-batch-size", "3"],
          "--generation-batch-size (3) must be a multiple of --batch-size (2) and of "
          "--num-generations (2)", out)
    fails(capsys, ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--reward", "r3", "--num-generations", "2", "--batch-size", "2",
                   "--generation-batch-size", "40"],
          "training prompts make 0 steps: one step takes 20 (--generation-batch-size 40 / "
          "--num-generations 2)", out)


def test_local_rollouts_where_the_local_engine_cannot_decode(capsys, dataset_dir,
                                                             tiny_model_dir, tmp_path):
    out = tmp_path / "out"
    base = ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
            str(out), "--reward", "r3", "--num-generations", "2", "--batch-size", "2",
            "--rollouts", "local"]
    fails(capsys, [*base, "--paged-generation"],
          "--rollouts local decodes on redraft's local engine: it does not apply with "
          "--vllm-mode colocate/server or --paged-generation", out)
    fails(capsys, [*base, "--lora"],
          "--rollouts local needs a Llama-family model (Llama, SmolLM2, Qwen2, Mistral) trained "
          "on the CPU without --lora", out)


def test_a_length_ceiling_under_the_reference_exits_2(capsys, dataset_dir, tiny_model_dir,
                                                       tmp_path):
    out = tmp_path / "out"
    fails(capsys, ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--reward", "checks", "--length-ceiling", "0.9"],
          "--length-ceiling 0.9 would pay an answer of its reference's own length less: give 1 "
          "or more (or 0, no ceiling)", out)
    fails(capsys, ["gspo", "--data", str(dataset_dir), "--model", str(tiny_model_dir), "--out",
                   str(out), "--reward", "checks", "--length-floor", "1.5"],
          "--length-floor", out)

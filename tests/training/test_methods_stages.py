"""The writing-RL export options (margin selection with a competitor model, the think
format with a voice model), the `dpo` stage and `processbench`, end to end on the recorded loops."""

from __future__ import annotations

import json
import math

import pytest

from bench.fakes.methods_judge import MethodsResponder
from bench.fakes.upstream import run_in_thread
from training.data.dataset import read_rows
from training.data.think import split_think
from training.distill import main


@pytest.fixture(scope="module")
def upstream():
    responder = MethodsResponder()
    with run_in_thread(responder=responder) as (url, fake):
        yield url, responder


def _p(row: dict) -> float:
    draft = next(c["score"] for c in row["candidates"] if c["kind"] == "draft")
    return max(c["score"] for c in row["candidates"]
               if c["kind"] != "draft" and c["score"] is not None) - draft


def test_export_selects_by_margin_and_writes_think_trajectories(
        recorded, dataset_dir, tiny_model_dir, upstream, tmp_path):
    url, responder = upstream
    responder.reset()
    out = tmp_path / "data"
    code = main(["export", "--database", recorded["url"], "--out", str(out),
                 "--namespace", "team-a", "--holdout", "0", "--tokenizer", str(tiny_model_dir),
                 "--select", "margin", "--select-top-k", "2",
                 "--competitor-url", url, "--competitor-model", "competitor",
                 "--format", "think", "--voice-url", url, "--voice-model", "voice"])
    assert code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    selection, think = manifest["counts"]["selection"], manifest["counts"]["think"]
    assert manifest["format"] == "think" and manifest["counts"]["prompts"] == 2
    # One competitor answer per prompt, generated and judged on its stored checklist.
    assert selection["competitor_answers"] == 6 and selection["competitor_failures"] == 0
    assert selection["kept"] == 2 and selection["dropped_below_top_k"] == 4
    # The two kept have the largest margins of the six (the competitor, a plain draft,
    # never beats the loop's own rewrites here).
    everything = read_rows(str(dataset_dir), "prompts", "train") + \
        read_rows(str(dataset_dir), "prompts", "holdout")
    margins = sorted((_p(r) for r in everything), reverse=True)
    assert selection["p_min"] == pytest.approx(margins[1])
    assert selection["p_max"] == pytest.approx(margins[0])
    rows = read_rows(str(out), "sft", "train")
    prompts = {r["id"]: r for r in read_rows(str(out), "prompts", "train")}
    assert len(rows) == 2
    for row in rows:
        thought, answer = split_think(row["completion"][0]["content"])
        assert thought and answer == prompts[row["id"]]["reference"]
        assert thought.startswith(prompts[row["id"]]["candidates"][0]["text"].strip())
    # Each reflection on the way to y* was rewritten once by the voice model.
    assert think["voice_calls"] >= 2 and think["voice_fallbacks"] == 0


def test_export_refuses_a_competitor_without_margin_selection(recorded, tmp_path, capsys):
    code = main(["export", "--database", recorded["url"], "--out", str(tmp_path / "d"),
                 "--competitor-url", "http://127.0.0.1:9/v1", "--competitor-model", "m"])
    assert code == 2 and "--select margin" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
def test_dpo_trains_on_the_pairs_and_writes_a_loadable_checkpoint(dataset_dir, tiny_model_dir,
                                                                  tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "dpo"
    code = main(["dpo", "--data", str(dataset_dir), "--model", str(tiny_model_dir),
                 "--out", str(out), "--max-steps", "2", "--batch-size", "2",
                 "--save-steps", "2", "--max-length", "128"])
    assert code == 0
    summary = json.loads((out / "report.json").read_text())["summary"]
    assert summary["steps"] == 2 and math.isfinite(summary["train_loss"])
    assert summary["rows"] == {"train": 5, "holdout": 1}
    assert math.isfinite(summary["holdout_loss"]["before"])
    assert math.isfinite(summary["holdout_loss"]["after"])
    AutoModelForCausalLM.from_pretrained(out / "final")


def test_dpo_without_pairs_is_a_clear_error(tmp_path, dataset_dir, tiny_model_dir, capsys):
    data = tmp_path / "data"
    data.mkdir()
    for kind in ("sft", "prompts", "pairs"):
        (data / kind).mkdir()
        for split in ("train", "holdout"):
            (data / kind / f"{split}.jsonl").write_text(
                "" if kind == "pairs" else (dataset_dir / kind / f"{split}.jsonl").read_text())
    (data / "manifest.json").write_text((dataset_dir / "manifest.json").read_text())
    code = main(["dpo", "--data", str(data), "--model", str(tiny_model_dir),
                 "--out", str(tmp_path / "out")])
    assert code == 2 and "no preference pairs" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_processbench_scores_a_thinking_models_trajectories(dataset_dir, upstream, tmp_path,
                                                            capsys):
    url, responder = upstream
    responder.reset()
    out = tmp_path / "bench.json"
    code = main(["processbench", "--data", str(dataset_dir), "--url", url,
                 "--model", "thinks-model", "--judge-model", "judge", "--split", "train",
                 "--out", str(out)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # One reflection per trajectory ("add Friday"), carried out by the final answer.
    assert summary["prompts"] == 5 and summary["generated"] == 5
    assert summary["mean_r_p"] == 1.0 and summary["segments_per_answer"] == 1.0
    assert summary["with_think"] == 1.0 and summary["judge_failures"] == 0
    assert responder.counts["think"] == 5 and responder.counts["judgments"] == 5
    assert len(json.loads(out.read_text())["prompts"]) == 5


def test_processbench_with_an_unreachable_model_exits_2(dataset_dir, tmp_path, capsys):
    code = main(["processbench", "--data", str(dataset_dir), "--url", "http://127.0.0.1:9/v1",
                 "--model", "m"])
    assert code == 2 and "unreachable" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["export", "--out", "OUT", "--voice-url", "http://127.0.0.1:9/v1"], "--voice-model"),
    (["export", "--out", "OUT", "--select", "best"], "--select"),
    (["gspo", "--data", "D", "--model", "M", "--out", "OUT", "--judge-url", "http://x/v1",
      "--judge-model", "j", "--filter-every", "2"], "--r3-filter"),
    (["gspo", "--data", "D", "--model", "M", "--out", "OUT", "--judge-url", "http://x/v1",
      "--judge-model", "j", "--alpha", "1.5"], "--alpha"),
    (["dpo", "--data", "D", "--model", "M", "--out", "OUT", "--loss", "kto"], "--loss"),
])
def test_bad_method_options_exit_2_with_the_option_named(argv, message, tmp_path, capsys):
    argv = [str(tmp_path / a) if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "OUT").exists()

"""Checks in the trainer: the checklist reward mixes in the stored checks as the loop's
selection does (a bounded bonus), `--reward checks` trains on checks alone with no judge, and
export keeps the checks in the prompt rows with the loop's own answer as y*."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from loops.answer import CHECK_WEIGHT
from loops.record import ANSWER_KEY
from store.records import CandidateRecord, LoopRecord
from training.data.dataset import read_rows
from training.data.rows import best, rows_of
from training.distill import main
from training.rewards import make_reward
from training.rewards.checklist import stored_checks, with_checks

pytestmark = pytest.mark.filterwarnings(
    r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")

AT_LEAST_3 = {"kind": "word_count", "params": {"relation": "at least", "n": 3, "upper": None},
              "quote": "at least three words", "source": "prepass"}
AT_MOST_2 = {"kind": "word_count", "params": {"relation": "at most", "n": 2, "upper": None},
             "quote": "", "source": "prepass"}
CHECKLIST = {"dimensions": [{"name": "Clarity", "description": "clear", "bands": [
    {"low": 1, "high": 5, "description": "muddled"},
    {"low": 6, "high": 10, "description": "clear"}]}], "checks": [AT_LEAST_3]}


def said(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def test_checks_reward_is_the_pass_rate_and_none_without_checks():
    reward = make_reward("checks", None)
    both = {**CHECKLIST, "checks": [AT_LEAST_3, AT_MOST_2]}
    no_checks = {**CHECKLIST, "checks": []}
    got = reward(prompts=["p"] * 4,
                 completions=[said("one two three"), said("one"), said("a b c"), said("x")],
                 checklist=[both, both, json.dumps(CHECKLIST), no_checks])
    assert got == [0.5, 0.5, 1.0, None]
    assert reward.stats() == {"scored": 3, "unscorable": 1, "no_checks": 1, "checks_run": 5,
                              "checks_passed": 3, "dropped_task": 0, "off_length": 0,
                              "cut": 0}


NO_COMMAS = {"kind": "no_commas", "params": {}, "quote": "no commas", "source": "user"}


def test_checks_reward_scales_a_completion_off_its_prompts_length_band():
    """A completion far shorter or longer than the row's reference answer earns that share of
    its pass rate; a prompt whose checks set the length, or a row without a reference, is
    paid its pass rate whatever the length."""
    reward = make_reward("checks", None)
    apples = lambda n: said(" ".join(["apples", *(f"w{i}" for i in range(n - 1))]))  # noqa: E731
    commas = {"checks": [NO_COMMAS]}
    got = reward(prompts=["Write about apples with no commas."] * 6,
                 completions=[apples(5), apples(10), apples(26), apples(5), apples(2), apples(5)],
                 checklist=[commas, commas, commas, commas, {"checks": [AT_MOST_2]}, commas],
                 reference_words=[10, 10, 10, None, 10, 0])
    assert got == pytest.approx([5 / 7, 1.0, 13 / 26, 1.0, 1.0, 1.0])
    assert reward.stats()["off_length"] == 2


def test_a_length_band_of_zeros_leaves_the_pass_rate():
    config = type("Config", (), {"length_floor": 0.0, "length_ceiling": 0.0})()
    reward = make_reward("checks", config)
    got = reward(prompts=["Write about apples."], completions=[said("apples")],
                 checklist=[{"checks": [NO_COMMAS]}], reference_words=[100])
    assert got == [1.0]


def test_a_completion_cut_at_the_token_limit_earns_the_cut_factor_of_its_reward():
    """The token limit is the config's completion length: a completion whose ids reach it
    keeps `cut_factor` of its reward (half by default); one that ended before keeps it all; 1
    turns the guard off; without token ids (held-out texts) nothing counts as cut."""
    checks = [{"checks": [NO_COMMAS]}] * 3
    texts = [said("Apples are red"), said("Apples are green"), said("Apples are ripe")]
    ids = [[1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 4, 5]]

    def scored(**options: Any) -> tuple[list[float | None], Any]:
        config = type("Config", (), {"max_completion_length": 4, **options})()
        reward = make_reward("checks", config)
        return reward(prompts=["Write about apples."] * 3, completions=texts,
                      completion_ids=ids, checklist=checks), reward

    got, reward = scored()
    assert got == [1.0, 0.5, 0.5]
    assert reward.stats()["cut"] == 2
    assert scored(cut_factor=0.0)[0] == [1.0, 0.0, 0.0]
    assert scored(cut_factor=1.0)[0] == [1.0, 1.0, 1.0]
    unbounded = make_reward("checks", None)
    assert unbounded(prompts=["Write about apples."] * 3, completions=texts,
                     completion_ids=ids, checklist=checks) == [1.0, 1.0, 1.0]


def test_stored_checks_skip_unknown_kinds_and_bad_entries():
    data = {**CHECKLIST, "checks": [AT_LEAST_3, {"kind": "from_the_future", "params": {}},
                                    {"nonsense": 1}]}
    assert [c.kind for c in stored_checks(data)] == ["word_count"]
    assert stored_checks(None) == () and stored_checks("not json") == ()


def test_the_checklist_reward_loses_at_most_the_check_weight():
    checks = stored_checks({**CHECKLIST, "checks": [AT_LEAST_3, AT_MOST_2]})
    assert with_checks(0.8, "a b c", checks) == pytest.approx(0.8 - CHECK_WEIGHT / 2)
    assert with_checks(0.8, "a", checks) == pytest.approx(0.8 - CHECK_WEIGHT / 2)
    assert with_checks(0.8, "a b c", checks[:1]) == 0.8
    assert with_checks(0.8, "a", ()) == 0.8
    # A content gap above the weight is never overturned by checks.
    assert with_checks(0.7, "a b c", checks[:1]) < with_checks(0.8, "a", checks[:1]) + 0.1


def test_export_rows_keep_the_checks_and_take_the_loops_answer():
    scores = {"Clarity": {"score": 6, "evidence": "", "band": 1}}
    record = LoopRecord(
        namespace="d", model="m", backend="scripted", checklist=CHECKLIST, stop_reason="threshold",
        request={"messages": [{"role": "user", "content": "Write three words or more."}]},
        candidates=(
            CandidateRecord(0, 0, "draft", "ab", None, scores, 0.56),
            CandidateRecord(1, 1, "rewrite", "a b c", 0, {**scores, ANSWER_KEY: True}, 0.55),
        ))
    assert best(record).position == 1  # the loop's choice, not the higher total score
    rows = rows_of(record, max_prompt_tokens=1000, count=len, min_gain=0.0)
    assert rows["prompt"]["checklist"]["checks"] == [AT_LEAST_3]
    assert rows["sft"]["completion"][0]["content"] == "a b c"


def with_checks_dataset(source: Path, out: Path, skip: int) -> Path:
    """A copy of the exported dataset whose prompts carry a word-count check, but for the
    first `skip` training prompts."""
    shutil.copytree(source, out)
    for name in ("train", "holdout"):
        path = out / "prompts" / f"{name}.jsonl"
        rows = read_rows(str(out), "prompts", name)
        for i, row in enumerate(rows):
            if name == "holdout" or i >= skip:
                row["checklist"] = {**row["checklist"], "checks": [AT_LEAST_3]}
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def run_checks_gspo(data: Path, model: Path, out: Path, *args: str) -> int:
    return main(["gspo", "--data", str(data), "--model", str(model), "--out", str(out),
                 "--reward", "checks", "--num-generations", "2", "--batch-size", "2",
                 "--max-completion-length", "8", *args])


def test_gspo_trains_on_checks_alone_without_a_judge(dataset_dir, tiny_model_dir, tmp_path,
                                                     capsys):
    data = with_checks_dataset(dataset_dir, tmp_path / "data", skip=1)
    out = tmp_path / "gspo"
    assert run_checks_gspo(data, tiny_model_dir, out, "--max-steps", "2",
                           "--eval-prompts", "1", "--holdout-every", "1") == 0
    train = len(read_rows(str(data), "prompts", "train"))
    err = capsys.readouterr().err
    assert f"1 of {train} training prompts" in err
    # the held-out answers per check kind before, every step but the last, and after
    said = re.findall(r"gspo: held-out answers, ([^:]+):", err)
    assert said == ["before training", "step 1", "after training"]
    summary: dict[str, Any] = json.loads((out / "report.json").read_text())["summary"]
    assert summary["judge_calls"] == 0
    assert summary["prompts_with_checks"]["train_without_checks"] == 1
    stats = summary["reward_stats"]
    assert stats["no_checks"] == 0 and stats["checks_run"] == stats["scored"] > 0
    assert 0.0 <= summary["holdout_reward"]["before"] <= 1.0
    checks = summary["holdout_checks"]
    assert [d["step"] for d in checks["during"]] == [1]
    for figures in (checks["before"], checks["after"], *checks["during"]):
        assert figures["prompts"] == 1 and set(figures["per_kind"]) == set(
            figures["checks_per_kind"])


def test_gspo_checks_with_no_checks_anywhere_exits_2(dataset_dir, tiny_model_dir, tmp_path,
                                                     capsys):
    out = tmp_path / "gspo"
    capsys.readouterr()
    assert run_checks_gspo(dataset_dir, tiny_model_dir, out, "--max-steps", "1") == 2
    err = capsys.readouterr().err
    train = len(read_rows(str(dataset_dir), "prompts", "train"))
    assert f"--reward checks: none of the {train} training prompts has checks" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


class ScriptedJudge:
    """Stands in for training.rewards.judge.Judge: a scripted backend scoring Clarity 8/10."""

    def __init__(self) -> None:
        import asyncio

        from generation.scripted import ScriptedBackend
        from generation.types import ChatParams

        reply = json.dumps({"scores": {"Clarity": {"evidence": "", "score": 8}}})
        self.backend = ScriptedBackend(default=reply)
        self.params = ChatParams(model="judge")
        self.calls = 0
        self._run = asyncio.run

    def map(self, work, items):
        return [self._run(work(item)) for item in items]


def test_the_checklist_reward_is_the_judges_score_less_the_failed_checks_share():
    judge = ScriptedJudge()
    reward = make_reward("checklist", None, judge=judge)
    unknown = {"kind": "from_the_future", "params": {}}
    got = reward(prompts=["p"] * 3, completions=[said("a b c"), said("a"), said("a")],
                 checklist=[CHECKLIST, CHECKLIST, {**CHECKLIST, "checks": [unknown]}])
    content = (8 - 1) / 9
    assert got == [pytest.approx(content), pytest.approx(content - CHECK_WEIGHT),
                   pytest.approx(content)]
    assert reward.stats()["bad_checklist"] == 0  # a check of an unknown kind costs nothing


def test_the_think_trajectory_ends_at_the_loops_answer():
    from training.data.think import trajectory

    candidates = [{"position": 0, "kind": "draft", "score": 0.56, "parent": None},
                  {"position": 1, "kind": "rewrite", "score": 0.55, "parent": 0,
                   "answer": True},
                  {"position": 2, "kind": "rewrite", "score": 0.50, "parent": 1}]
    assert [c["position"] for c in trajectory(candidates)] == [0, 1]
    unmarked = [{k: v for k, v in c.items() if k != "answer"} for c in candidates]
    assert [c["position"] for c in trajectory(unmarked)] == [0]

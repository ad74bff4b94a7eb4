"""The flywheel's parts that need no model: a loop whose answer is its draft's text is no gain
for export, the checks reward pays nothing for a text that drops the task, and the evaluation's
figures and pair tallies add up; a terminated run stops the servers it started."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loops.record import ANSWER_KEY, CUT_KEY, candidate_record
from loops.trace import Candidate
from store import Store
from store.records import CandidateRecord, LoopRecord
from training.data.prompts import generate
from training.data.rows import gained, rows_of
from training.data.selection import potential
from training.distill import main
from training.flywheel.figures import distinct_2, summarise, timing_free
from training.flywheel.pairs import orders, outcome, tally
from training.rewards import make_reward
from training.rewards.task import drops_task

CHECKS = {"checks": [{"kind": "lowercase", "params": {}, "quote": "in lowercase",
                      "source": "user"}]}
DRAFT = "the lighthouse keeper climbs the stairs."


def loop(answer_text: str, answer_score: float, draft_score: float = 0.0,
         request: str = "Write about a lighthouse keeper, in lowercase.") -> LoopRecord:
    """A loop scored by checks: a draft, and a rewrite the loop returned."""
    return LoopRecord(
        namespace="n", model="m", backend="scripted", checklist=CHECKS, stop_reason="max_rounds",
        checklist_source="user", request={"messages": [{"role": "user", "content": request}]},
        candidates=(CandidateRecord(0, 0, "draft", DRAFT, None, {}, draft_score),
                    CandidateRecord(1, 1, "rewrite", answer_text, 0, {ANSWER_KEY: True},
                                    answer_score)))


def test_an_answer_with_the_drafts_text_is_no_gain_whatever_its_score():
    same = loop(DRAFT + "\n", answer_score=1.0)
    other = loop("the keeper climbs.", answer_score=1.0)
    assert not gained(same) and gained(other)
    assert rows_of(same, max_prompt_tokens=500, count=len, min_gain=0.1)["pair"] is None
    assert rows_of(other, max_prompt_tokens=500, count=len, min_gain=0.1)["pair"] is not None
    # margin selection: the loop's candidates do not compete when it kept the draft's words
    same_row = rows_of(same, max_prompt_tokens=500, count=len, min_gain=0.1)["prompt"]
    other_row = rows_of(other, max_prompt_tokens=500, count=len, min_gain=0.1)["prompt"]
    assert potential(same_row) is None
    assert potential(same_row, extra=[0.5]).p == 0.5  # another model's answer still competes
    assert potential(other_row).p == 1.0


def save_loops(url: str, *loops: LoopRecord) -> None:
    async def save() -> None:
        store = await Store.open(url)
        try:
            for record in loops:
                await store.loops.save(record)
        finally:
            await store.close()

    asyncio.run(save())


def export(url: str, out: Path, capsys, *extra: str) -> dict:
    """`python -m training.distill export` of `url` into `out`; its manifest's counts."""
    assert main(["export", "--database", url, "--out", str(out), "--holdout", "0", *extra]) == 0
    capsys.readouterr()
    return json.loads((out / "manifest.json").read_text())["counts"]


def test_export_counts_no_gain_and_makes_no_pair_for_the_drafts_text(tmp_path: Path, capsys):
    url = f"sqlite+aiosqlite:///{tmp_path / 'loops.db'}"
    save_loops(url, loop(DRAFT, answer_score=1.0),
               loop("the keeper climbs.", answer_score=1.0,
                    request="Write about a keeper, in lowercase."))
    counts = export(url, tmp_path / "data", capsys)
    assert counts["prompts"] == 2
    assert counts["gained"] == 1 and counts["pairs"]["train"] == 1
    pair = json.loads((tmp_path / "data" / "pairs" / "train.jsonl").read_text())
    assert pair["chosen"][0]["content"] != pair["rejected"][0]["content"]


def test_export_leaves_out_a_best_text_that_passes_its_checks_by_dropping_the_task(
        tmp_path: Path, capsys):
    url = f"sqlite+aiosqlite:///{tmp_path / 'loops.db'}"
    looping = "the keeper climbs the stairs and the light turns. " * 12
    save_loops(url, loop(looping, answer_score=1.0),
               loop("", answer_score=1.0, request="Write about a keeper, in lowercase."),
               loop("the keeper climbs.", answer_score=1.0,
                    request="Write about a keeper at night, in lowercase."))
    counts = export(url, tmp_path / "data", capsys)
    assert counts["left_out"]["dropped_task"] == 2 and counts["prompts"] == 1
    (row,) = [json.loads(line) for line in
              (tmp_path / "data" / "sft" / "train.jsonl").read_text().splitlines()]
    assert "the keeper climbs." in json.dumps(row)
    counts = export(url, tmp_path / "kept", capsys, "--keep-dropped-task")
    assert counts["left_out"]["dropped_task"] == 0 and counts["prompts"] == 3


def cut_loop(answer_text: str, limit: dict, scores: dict, used: int) -> LoopRecord:
    """A loop whose answer is its draft, written with `used` completion tokens; its request
    asks for the answer's own words, with the token `limit` it names ({} or max_tokens)."""
    asked = f"Write about a keeper, in lowercase: {answer_text}"
    return LoopRecord(
        namespace="n", model="m", backend="scripted", checklist=CHECKS, stop_reason="threshold",
        checklist_source="user",
        request={"messages": [{"role": "user", "content": asked}], **limit},
        candidates=(CandidateRecord(0, 0, "draft", answer_text, None,
                                    {ANSWER_KEY: True, **scores}, 1.0,
                                    usage={"prompt_tokens": 20, "completion_tokens": used,
                                           "total_tokens": 20 + used}),))


def test_export_leaves_out_a_best_text_cut_at_the_token_limit(tmp_path: Path, capsys):
    url = f"sqlite+aiosqlite:///{tmp_path / 'loops.db'}"
    # a call that stopped at the limit is marked when the loop is recorded
    marked = candidate_record(Candidate(0, 0, "draft", "the keeper", finish_reason="length"))
    assert marked.scores == {CUT_KEY: True}
    assert candidate_record(Candidate(0, 0, "draft", "x", finish_reason="stop")).scores == {}
    save_loops(url,
               cut_loop("the keeper climbs the", {}, {CUT_KEY: True}, 12),
               # recorded before the mark: every completion token the request allowed
               cut_loop("the keeper climbs the stairs and", {"max_tokens": 16}, {}, 16),
               cut_loop("the keeper climbs.", {"max_tokens": 16}, {}, 5))
    counts = export(url, tmp_path / "data", capsys)
    assert counts["left_out"]["cut_off"] == 2 and counts["prompts"] == 1
    assert "the keeper climbs." in (tmp_path / "data" / "sft" / "train.jsonl").read_text()
    counts = export(url, tmp_path / "kept", capsys, "--keep-dropped-task")
    assert counts["left_out"]["cut_off"] == 0 and counts["prompts"] == 3
    # nothing left: the error names the reason and the switch that keeps such loops
    only = f"sqlite+aiosqlite:///{tmp_path / 'cut.db'}"
    save_loops(only, cut_loop("the keeper climbs the", {}, {CUT_KEY: True}, 12))
    assert main(["export", "--database", only, "--out", str(tmp_path / "none")]) == 2
    error = capsys.readouterr().err
    assert "1 cut_off" in error and "--keep-dropped-task" in error


REQUEST = "Write a short note inviting the team to a picnic on Friday. Use all lowercase."
LOWER = {"checks": [{"kind": "lowercase", "params": {}, "quote": "Use all lowercase.",
                     "source": "user"}]}


@pytest.mark.parametrize(("text", "reward", "dropped"), [
    ("hi team, join our picnic on friday in the park!", 1.0, 0),
    ("Hi team, join our picnic on Friday!", 0.0, 0),    # on the task, fails the check
    ("", 0.0, 1),                                       # meets the check by saying nothing
    ("ok.", 0.0, 1),                                    # says nothing of the task
    ("the cat sat. " * 30, 0.0, 1),                     # loops to its limit
])
def test_the_checks_reward_pays_nothing_for_a_text_that_drops_the_task(text, reward, dropped):
    scorer = make_reward("checks", None)
    got = scorer(prompts=[[{"role": "user", "content": REQUEST}]],
                 completions=[[{"role": "assistant", "content": text}]], checklist=[LOWER])
    assert got == [reward]
    assert scorer.stats()["dropped_task"] == dropped


def test_the_task_is_the_request_without_its_requirements_words():
    checks = tuple(c.check() for c in generate(0, 1, 0)[0][0].checks)
    request = generate(0, 1, 0)[0][0].query  # "Explain how a battery stores energy. Stay ..."
    assert drops_task("A battery keeps chemical energy.", request, checks) is None
    assert drops_task("I will stay within a limit.", request, checks) == "off_task"
    # a short topic word is a topic word: the story of a lost dog may never say "lost"
    assert drops_task("Max, a small dog, waited at the shelter.",
                      "Write a story about a lost dog finding its way home.", ()) is None
    assert drops_task("The answer meets every requirement the request states.",
                      "Write a story about a lost dog finding its way home.", ()) == "off_task"
    # another language asked for: the words of the task cannot be matched, nothing is dropped
    french = (*checks, checks[0].model_copy(update={"kind": "language",
                                                    "params": {"language": "fr"}}))
    assert drops_task("Une pile garde l'énergie.", request, french) is None


PICNIC = "Write a short note inviting the team to a picnic on Friday."


@pytest.mark.parametrize("text", [
    "As a chatbot, I don't have the capability to plan a picnic for the team on Friday.",
    "I'm sorry, but I can't write a note about a picnic.",
    "I am unable to create that picnic note for Friday.",
    "As an AI language model, I cannot invite the team to a picnic.",
    "I\u2019m sorry, but I won\u2019t do that picnic note.",
    "Sorry, I am not able to fulfill this request about the picnic.",
    "I'm sorry for any confusion, but as a language learning AI, I'm designed to assist with "
    "language learning, not with a picnic note.",
    "i'm sorry for any confusion but as a chatbot designed for work matters i'm not equipped to "
    "provide a picnic note for friday.",
    "I'm sorry for the confusion, but as a helpful AI, I'm designed to provide assistance with "
    "various tasks. I'm unable to assist with writing a picnic note.",
    "I'm unable to assist with writing a picnic note for Friday.",
])
def test_a_refusal_on_the_topic_drops_the_task(text):
    assert drops_task(text, PICNIC, ()) == "refused"


@pytest.mark.parametrize("text", [
    "I'm sorry for the short notice: join our picnic on Friday!",
    "I cannot wait to see the team at the picnic on Friday.",
    "I don't have the means to bring chairs, so the picnic on Friday is on blankets.",
    "As an assistant, I booked the park for the team picnic on Friday.",
    "As an AI-powered planner helps the team, the picnic on Friday is set.",
    "I'm sorry for any confusion about the date: the picnic is on Friday, not Thursday.",
    "I'm not equipped with a car, so I will walk to the picnic on Friday.",
    "I'm unable to attend the planning call, but the picnic is on Friday.",
    "I'm sorry for the inconvenience, but the picnic moves to Friday.",
])
def test_words_of_apology_or_inability_in_the_task_itself_are_no_refusal(text):
    assert drops_task(text, PICNIC, ()) is None


def test_the_figures_of_a_method_add_up():
    _, prompts = generate(0, 0, 6)
    rows = [{"text": "a plain answer, in words." if i % 2 else "", "total_tokens": 10 + i,
             "prompt_tokens": 8, "completion_tokens": 2 + i, "seconds": 0.5,
             "error": None if i else "APIError: gone"} for i in range(6)]
    f = summarise(prompts, rows, base_words=2.0)
    assert f["prompts"] == 6 and f["errors"] == 1
    assert f["checks"] == sum(len(p.checks) for p in prompts)
    assert sum(k["checks"] for k in f["per_kind"].values()) == f["checks"]
    assert sum(k["passed"] for k in f["per_kind"].values()) == f["checks_passed"]
    assert f["check_pass_rate"] == round(f["checks_passed"] / f["checks"], 4)
    assert f["prompt_pass_rate"] == round(f["prompts_passed"] / 6, 4)
    assert f["tokens"] == 12.5 and f["words"] == 2.5 and f["length_vs_base"] == 1.25
    assert "seconds" not in timing_free(f)


def test_distinct_2_counts_word_pairs_within_each_answer():
    assert distinct_2(["a b a b", "a b"]) == round(2 / 4, 4)  # (a b), (b a) of 4 pairs
    assert distinct_2(["one"]) is None


def test_the_pair_tally_follows_the_order_shown():
    first = orders([f"p{i}" for i in range(40)], seed=0)
    assert first == orders([f"p{i}" for i in range(40)], seed=0)
    assert 5 < sum(first.values()) < 35  # both orders are drawn
    # a judge that always prefers response B: the trained answer wins where it came second
    results = [outcome(1.0, trained_first) for trained_first in first.values()]
    got = tally(results + ["tie", "failed"])
    assert got["wins"] == sum(not t for t in first.values())
    assert got["wins"] + got["losses"] + got["ties"] == got["judged"] == 41
    assert got["win_rate"] == round((got["wins"] + 0.5) / 41, 4)
    assert outcome(None, True) == "failed" and outcome(0.5, False) == "tie"


def test_the_pair_judge_compares_the_first_n_evaluated_prompts(monkeypatch, tmp_path: Path):
    from training.flywheel import evaluate as evaluation
    from training.flywheel.config import FlywheelConfig

    shown: list[dict] = []

    def judge(config, items):
        shown.extend(items)
        return [{"key": i["key"], "outcome": "tie"} for i in items]

    monkeypatch.setattr(evaluation, "judge_pairs", judge)
    _, prompts = generate(0, 1, 4)
    answers = {"trained_direct": [{"text": f"t{i}"} for i in range(4)],
               "base_direct": [{"text": f"b{i}"} for i in range(4)]}
    config = FlywheelConfig(out=str(tmp_path), heldout_prompts=4, pair_judge_prompts=2,
                            pair_judge_url="http://127.0.0.1:9/v1", pair_judge_model="judge")
    figures = evaluation.pair_figures(config, prompts, answers, tmp_path)
    assert [(i["key"], i["trained"], i["base"]) for i in shown] == [
        (prompts[0].id, "t0", "b0"), (prompts[1].id, "t1", "b1")]
    assert figures["prompts"] == 2 and figures["ties"] == 2
    assert len((tmp_path / "pairs.jsonl").read_text("utf-8").splitlines()) == 2


SLEEPER = """
import sys, time
from pathlib import Path
from training.flywheel.server import ServedProcess, stopped_by_sigterm

class Sleeper(ServedProcess):
    name = "sleeper"

    def __init__(self, log):
        super().__init__(log)
        self.command = [sys.executable, "-c", "import time; time.sleep(600)"]

    def ready(self, http):
        return True

try:
    with stopped_by_sigterm(), Sleeper(Path(sys.argv[1])) as served:
        print(served.proc.pid, flush=True)
        time.sleep(600)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_a_terminated_run_stops_the_servers_it_started(tmp_path: Path):
    root = Path(__file__).resolve().parents[2]
    parent = subprocess.Popen([sys.executable, "-c", SLEEPER, str(tmp_path / "log")], cwd=root,
                              env={**os.environ, "PYTHONPATH": str(root)},
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=60) == 0
    assert parent.stdout.read().strip() == "interrupted"
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


@pytest.mark.parametrize(("record_rounds", "recorded"), [(None, 2), (0, 0)])
def test_recorded_loops_take_record_rounds_and_evaluated_ones_max_rounds(
        monkeypatch, tmp_path: Path, record_rounds, recorded):
    import contextlib

    from training.data.dataset import write_jsonl
    from training.flywheel import record as stage
    from training.flywheel.config import FlywheelConfig

    train, _ = generate(0, 3, 1)
    write_jsonl(tmp_path / "prompts" / "train.jsonl", [p.record() for p in train])
    sent = []

    @contextlib.contextmanager
    def served(*args):
        yield type("S", (), {"base_url": "http://x/v1", "model": "m"})()

    def ask_all(url, model, asks, out, **kw):
        sent.extend(asks)
        return {a.key: {"text": "", "total_tokens": 0, "seconds": 0.0, "error": None,
                        "reflection": None} for a in asks}

    monkeypatch.setattr(stage, "served", served)
    monkeypatch.setattr(stage, "ask_all", ask_all)
    config = FlywheelConfig(out=str(tmp_path), record_prompts=3, max_rounds=2,
                            record_rounds=record_rounds)
    (tmp_path / "record").mkdir()
    stage.record(config, tmp_path, tmp_path, tmp_path / "record")
    assert [a.reflection["max_rounds"] for a in sent] == [recorded] * 3
    assert config.max_rounds == 2   # what the evaluation's MRPO answers take


def test_gspo_rows_keep_the_drafted_prompts_with_their_drafts_length(tmp_path: Path):
    from training.data.dataset import read_rows
    from training.flywheel.record import draft_text
    from training.flywheel.rows import write_gspo_data

    prompts = generate(0, 30, 10)[0][:3]
    reflection = {"trace": {"candidates": [
        {"kind": "draft", "text": "one two three four"}, {"kind": "rewrite", "text": "five"}]}}
    draft = draft_text(reflection)
    assert draft == "one two three four" and draft_text(None) is None
    manifest = write_gspo_data(tmp_path / "a", prompts, 0, {prompts[1].id: draft})
    rows = read_rows(tmp_path / "a", "prompts", "train")
    assert [(r["prompt_id"], r["reference_words"]) for r in rows] == [(prompts[1].id, 4)]
    assert manifest["counts"]["with_reference_words"] == 1
    # no drafts recorded: every prompt, none with a band
    write_gspo_data(tmp_path / "b", prompts, 0)
    rows = read_rows(tmp_path / "b", "prompts", "train")
    assert len(rows) == 3 and all("reference_words" not in r for r in rows)

"""Dynamic reference scheduling (Writing-RL) and the pairwise reward (reference first)."""

from __future__ import annotations

import json

from generation.scripted import ScriptedBackend
from tests.training.methods_cases import FakeJudge, row
from training.rewards.pairwise import PairwiseReward
from training.rewards.references import ReferenceScheduler, SchedulerCallback, ladder


def verdict(v: str) -> str:
    return json.dumps({"reason": "because", "verdict": v})


def test_the_ladder_is_the_candidates_by_ascending_score_then_y_star():
    r = row("p", 0.6, 0.2, None, 0.9)
    assert ladder(r) == ["p rewrite 1", "p draft", "p rewrite 3"]


def test_promotes_exactly_the_prompts_that_won_once_each_and_stops_at_the_top():
    s = ReferenceScheduler.from_rows([row("a", 0.1, 0.5, 0.9), row("b", 0.1, 0.5),
                                      row("c", 0.1, 0.5)])
    assert s.current("a") == "a draft"
    assert s.promote(["a", "a", "c"]) == ["a", "c"]
    assert (s.stage("a"), s.stage("b"), s.stage("c")) == (1, 0, 1)
    assert s.promote(["c"]) == []                        # c is at its strongest
    assert s.report() == {"prompts": 3, "promotions": 2, "at_stage": {"0": 1, "1": 2},
                          "at_strongest": 1}


def test_pointers_are_saved_with_the_checkpoint_and_restored(tmp_path):
    rows = [row("a", 0.1, 0.5, 0.9), row("b", 0.1, 0.5)]
    s = ReferenceScheduler.from_rows(rows)
    s.promote(["a"])
    s.promote(["a"])
    callback = SchedulerCallback(s)
    args = type("Args", (), {"output_dir": str(tmp_path)})()
    state = type("State", (), {"global_step": 7, "is_world_process_zero": True})()
    callback.on_save(args, state, None)
    saved = json.loads((tmp_path / "checkpoint-7" / "reference_pointers.json").read_text())
    assert saved["report"]["at_strongest"] == 1
    # A resumed run begins at the checkpoint's step and takes its pointers.
    again = ReferenceScheduler.from_rows(rows)
    SchedulerCallback(again).on_train_begin(args, state, None)
    assert again.current("a") == "a rewrite 2" and again.current("b") == "b draft"
    fresh = ReferenceScheduler.from_rows(rows)
    SchedulerCallback(fresh).on_train_begin(args, type("S", (), {"global_step": 0})(), None)
    assert fresh.current("a") == "a draft"


def test_pairwise_puts_the_reference_first_and_scores_win_tie_loss():
    judge = ScriptedBackend([verdict("B"), verdict("tie"), verdict("A")])
    reward = PairwiseReward(FakeJudge(judge), concurrency=1)
    r = row("q", 0.2, 0.9)
    out = reward([r["prompt"]] * 3, [[{"role": "assistant", "content": t}] for t in
                                     ("mine one", "mine two", "<think>x</think>mine three")],
                 id=["q"] * 3, reference=["THE REFERENCE"] * 3, checklist=[r["checklist"]] * 3)
    assert out == [1.0, 0.5, 0.0]
    prompt = judge.calls[2].messages[-1]["content"]
    assert prompt.index("THE REFERENCE") < prompt.index("mine three")
    assert "<think>" not in prompt and "Clarity" in prompt
    assert judge.calls[0].schema["properties"]["verdict"]["enum"] == ["A", "B", "tie"]
    assert reward.stats() == {"scored": 3, "unscorable": 0}


def test_pairwise_without_a_usable_verdict_is_none_and_counted():
    judge = ScriptedBackend(default="not json")
    reward = PairwiseReward(FakeJudge(judge), retries=1)
    metrics = {}
    out = reward([[{"role": "user", "content": "q"}]], ["answer"], id=["q"], reference=["ref"],
                 log_metric=metrics.__setitem__)
    assert out == [None] and reward.unavailable == 1
    assert metrics["pairwise/unavailable"] == 1.0 and len(judge.calls) == 2


def test_the_scheduler_promotes_the_prompts_whose_completion_beat_its_reference():
    rows = {k: row(k, 0.1, 0.5, 0.9) for k in "abc"}
    scheduler = ReferenceScheduler.from_rows(rows.values())
    # Completions of a win, of b tie, of c lose: only a moves up, once.
    answers = {"a": [verdict("B"), verdict("A")], "b": [verdict("tie")] * 2,
               "c": [verdict("A")] * 2}

    def reply(messages, params, schema):
        content = messages[-1]["content"]
        key = next(k for k in "abc" if f"Write {k}." in content)
        return answers[key].pop(0)

    judge = ScriptedBackend(default=reply)
    reward = PairwiseReward(FakeJudge(judge), scheduler=scheduler, concurrency=1)
    ids = ["a", "a", "b", "b", "c", "c"]
    out = reward([rows[i]["prompt"] for i in ids], ["text"] * 6, id=ids,
                 checklist=[None] * 6)
    assert out == [1.0, 0.0, 0.5, 0.5, 0.0, 0.0]
    assert [scheduler.stage(k) for k in "abc"] == [1, 0, 0]
    # The comparison used each prompt's weakest reference, the draft.
    assert all(f"{k} draft" in c.messages[-1]["content"] for c in judge.calls
               for k in "abc" if f"Write {k}." in c.messages[-1]["content"])
    assert scheduler.current("a") == "a rewrite 1"


def test_pairwise_takes_the_checks_off_a_verdict_and_hides_them_from_the_judge():
    judge = ScriptedBackend([verdict("B"), verdict("B"), verdict("tie")])
    reward = PairwiseReward(FakeJudge(judge), concurrency=1)
    r = row("q", 0.2, 0.9)
    checklist = {**r["checklist"], "checks": [
        {"kind": "lowercase", "params": {}, "quote": "all lowercase", "source": "prepass"},
        {"kind": "no_commas", "params": {}, "quote": "no commas", "source": "prepass"}]}
    texts = ("plain words here", "Capitals, and commas", "Capitals only")
    out = reward([r["prompt"]] * 3, list(texts), id=["q"] * 3, reference=["REF"] * 3,
                 checklist=[checklist] * 3)
    # both checks kept: the win; both failed: the win less 0.05; a tie failing one: 0.475
    assert out == [1.0, 0.95, 0.475]
    prompt = judge.calls[0].messages[-1]["content"]
    assert "Clarity" in prompt and "lowercase" not in prompt and "no_commas" not in prompt

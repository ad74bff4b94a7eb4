"""R2-Write process reward: segments extracted by an LLM, three +/-1 aspects each, R_p the
mean, and R_all = a R_a + (1 - a) R_p when R_a > 0, else R_a."""

from __future__ import annotations

import json

import pytest

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from tests.training.methods_cases import CHECKLIST, FakeJudge
from training.rewards.process import ProcessReward, combine, process_score

PROMPT = [{"role": "user", "content": "Invite the team to a picnic."}]
COMPLETION = ("<think>Come to a picnic.\n\nI never said which day; I will say Friday.\n\n"
              "I forgot the time; I will add noon.</think>\nCome to a picnic on Friday.")


def segments(*pairs: tuple[str, str]) -> str:
    return json.dumps({"segments": [{"issue": i, "revision": r} for i, r in pairs]})


def judgments(*triples: tuple[int, int, int]) -> str:
    return json.dumps({"judgments": [
        {"issue_real": a, "rubric_aligned": b, "carried_out": c} for a, b, c in triples]})


TWO = segments(("no day", "say Friday"), ("no time", "add noon"))


async def test_a_segment_whose_revision_is_not_carried_out_scores_minus_one():
    # The answer says Friday but never gives the time: segment 2 is not carried out.
    judge = ScriptedBackend([TWO, judgments((1, 1, 1), (1, 1, -1))])
    score = await process_score(judge, ChatParams(), PROMPT, COMPLETION, CHECKLIST)
    assert score.r_p == pytest.approx(0.0) and score.segments == 2
    judged = judge.calls[1].schema["properties"]["judgments"]
    assert judged["minItems"] == judged["maxItems"] == 2
    assert judged["items"]["properties"]["carried_out"]["enum"] == [1, -1]
    assert judge.calls[0].schema["properties"]["segments"]["maxItems"] == 8
    prompt = judge.calls[1].messages[-1]["content"]
    assert "Come to a picnic on Friday." in prompt and "Clarity" in prompt


async def test_only_all_three_aspects_make_plus_one():
    judge = ScriptedBackend([TWO, judgments((1, -1, 1), (-1, 1, 1))])
    assert (await process_score(judge, ChatParams(), PROMPT, COMPLETION, None)).r_p == -1.0
    judge = ScriptedBackend([TWO, judgments((1, 1, 1), (1, 1, 1))])
    assert (await process_score(judge, ChatParams(), PROMPT, COMPLETION, None)).r_p == 1.0


async def test_a_wrong_number_of_judgments_is_retried():
    judge = ScriptedBackend([TWO, judgments((1, 1, 1)), judgments((1, 1, 1), (-1, -1, -1))])
    score = await process_score(judge, ChatParams(), PROMPT, COMPLETION, None)
    assert score.r_p == 0.0 and len(judge.calls) == 3
    assert "expected 2 judgments" in judge.calls[2].messages[-1]["content"]


async def test_no_think_part_or_no_reflection_is_minus_one():
    judge = ScriptedBackend([segments()])
    assert (await process_score(judge, ChatParams(), PROMPT, "plain answer", None)).r_p == -1.0
    assert judge.calls == []
    none = await process_score(judge, ChatParams(), PROMPT, "<think>ok</think>answer", None)
    assert (none.r_p, none.segments) == (-1.0, 0)


def test_combine_follows_the_formula():
    assert combine(0.8, 0.0, 0.25) == pytest.approx(0.2)
    assert combine(0.8, -1.0, 0.25) == pytest.approx(0.2 - 0.75)
    assert combine(0.0, 1.0, 0.25) == 0.0          # R_a <= 0: R_a alone
    assert combine(None, 1.0, 0.25) is None
    assert combine(0.5, None, 0.25) is None


def test_the_combined_reward_scores_the_answer_without_the_think_part():
    seen = []

    def answer_reward(prompts, completions, completion_ids=None, **columns):
        seen.extend(c[0]["content"] for c in completions)
        return [1.0 for _ in completions]

    answer_reward.__name__ = "checklist"
    answer_reward.callbacks = ["scheduler"]
    judge = ScriptedBackend([TWO, judgments((1, 1, 1), (1, 1, 1))])
    reward = ProcessReward(answer_reward, FakeJudge(judge), alpha=0.25)
    metrics = {}
    out = reward([PROMPT], [[{"role": "assistant", "content": COMPLETION}]],
                 checklist=[CHECKLIST], log_metric=metrics.__setitem__)
    assert out == [pytest.approx(0.25 * 1.0 + 0.75 * 1.0)]
    assert seen == ["Come to a picnic on Friday."]
    assert reward.__name__ == "checklist+process" and reward.callbacks == ["scheduler"]
    assert metrics["process/r_p"] == 1.0

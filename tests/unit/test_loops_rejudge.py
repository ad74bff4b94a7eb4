"""A judge that gives a substantially different revision its parent's scores on every
dimension is asked once more, shown the earlier scores and what differs; the trace says so."""

from __future__ import annotations

import asyncio
import json

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.judges.assess import judged_alike, word_jaccard
from loops.options import LoopOptions
from loops.record import REJUDGED_KEY, candidate_record, dimension_scores
from rubrics.checklist import Evaluation
from tests.unit.test_loops_controller import CHECKLIST, DIMS, QUERY, answer_of, make_loop

DRAFT = "The kettle boils water. It is made of steel."
REWRITE = ("Our kettle brings a litre to the boil in ninety seconds, switches itself off, "
           "and its brushed steel body stays cool to the touch.")
NEAR = "The kettle boils water. It is made of good steel."


def scores(value: int) -> Evaluation:
    return Evaluation(scores=tuple(d.scored(value, "q") for d in CHECKLIST.dimensions))


def test_alike_means_the_same_scores_on_every_dimension_for_differing_texts() -> None:
    assert word_jaccard(DRAFT, REWRITE) < 0.8 <= word_jaccard(DRAFT, NEAR)
    assert judged_alike(scores(5), scores(5), DRAFT, REWRITE)
    assert not judged_alike(scores(5), scores(5), DRAFT, NEAR)       # the texts barely differ
    assert not judged_alike(scores(5), scores(6), DRAFT, REWRITE)    # the judge saw a change
    assert not judged_alike(None, scores(5), DRAFT, REWRITE)


class Judge:
    """Scores every text 5 on every dimension, unless told what changed (then `told`)."""

    def __init__(self, told: int) -> None:
        self.told = told
        self.prompts: list[str] = []

    def __call__(self, messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        score = self.told if "an earlier version of this response" in prompt else 5
        reply = {"scores": {n: {"evidence": "q", "score": score} for n in DIMS}}
        if "Then write the reflection" in prompt:
            reply |= {"summary": "be concrete", "items": [{
                "dimension": "Clarity", "evidence": "x", "objective": "concrete",
                "actions": ["give numbers"]}]}
        return json.dumps(reply)


class World:
    def __init__(self, texts: list[str], told: int) -> None:
        texts = list(texts)
        self.writer = ScriptedBackend(default=lambda m, p, s: texts.pop(0), model="writer")
        self.judge_calls = Judge(told)
        self.judge = ScriptedBackend(default=self.judge_calls, model="judge")


def run(world: World):
    return asyncio.run(make_loop(world).run(QUERY, ChatParams(), LoopOptions(
        max_rounds=1, threshold=1.0), namespace="default"))


def test_a_revision_scored_exactly_like_its_differing_parent_is_judged_again() -> None:
    world = World([DRAFT, REWRITE], told=8)
    trace = run(world)
    draft, rewrite = trace.candidates
    assert not draft.rejudged and rewrite.rejudged
    # The second judgement is the one kept, so the loop can tell the two texts apart.
    assert {s.score for s in rewrite.evaluation.scores} == {8}
    assert trace.answer.text == REWRITE
    again = world.judge_calls.prompts[-1]
    assert answer_of(again) == REWRITE
    assert "Clarity: 5" in again and "ninety seconds" in again and "made of steel" in again
    assert trace.ledger.calls["evaluate"] == 3
    assert dimension_scores(candidate_record(rewrite).scores).keys() == set(DIMS)
    assert candidate_record(rewrite).scores[REJUDGED_KEY] is True


def test_a_judge_that_still_sees_no_difference_is_asked_only_once_more() -> None:
    world = World([DRAFT, REWRITE], told=5)
    trace = run(world)
    assert trace.candidates[1].rejudged and trace.ledger.calls["evaluate"] == 3
    assert trace.answer.text == DRAFT  # a tie keeps the earlier text


def test_a_near_copy_with_equal_scores_is_not_judged_again() -> None:
    world = World([DRAFT, NEAR], told=8)
    trace = run(world)
    assert not trace.candidates[1].rejudged and trace.ledger.calls["evaluate"] == 2
    assert REJUDGED_KEY not in candidate_record(trace.candidates[1]).scores

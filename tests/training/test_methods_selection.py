"""Margin-aware selection (Writing-RL): p = best competitor - draft, top-k by p, a floor on the
best competitor, and competitor answers generated and judged at export time."""

from __future__ import annotations

import json

import pytest

from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from tests.training.methods_cases import row
from training.data.selection import Competitor, select_margin, select_with_competitor


def test_keeps_the_top_k_prompts_by_learning_potential():
    rows = [row("a", 0.5, 0.6),          # p = 0.1
            row("b", 0.2, 0.4, 0.9),     # p = 0.7
            row("c", 0.1, 0.5),          # p = 0.4
            row("d", 0.8, 0.7)]          # p = -0.1: the draft was already best
    selection = select_margin(rows, top_k=2)
    assert selection.kept == ("b", "c")
    assert selection.potentials["b"].p == pytest.approx(0.7)
    assert selection.counts()["dropped_below_top_k"] == 2


def test_drops_prompts_whose_competitors_all_score_low_and_unscored_ones():
    rows = [row("weak", 0.05, 0.2, 0.25), row("strong", 0.5, 0.9), row("blank", None, 0.9),
            row("alone", 0.4)]
    selection = select_margin(rows, top_k=10, min_competitor_score=0.3)
    assert selection.kept == ("strong",)
    assert selection.dropped_low_competitor == 1
    assert selection.dropped_unscored == 2


def test_rejects_a_non_positive_top_k():
    with pytest.raises(ValueError, match="top_k"):
        select_margin([row("a", 0.1, 0.2)], top_k=0)


def _judged(score: int) -> str:
    return json.dumps({"scores": {"Clarity": {"evidence": "it says Friday", "score": score}}})


async def test_competitor_answers_are_generated_judged_and_raise_the_margin():
    # Loop data alone ranks x (p 0.2) over y (p 0.1); a competitor answer for y scored 10/10
    # (normalised 1.0) lifts y's p to 0.9.
    rows = [row("x", 0.3, 0.5), row("y", 0.1, 0.2)]
    writer = ScriptedBackend(["x by another model", "y by another model"])
    judge = ScriptedBackend(default=lambda messages, params, schema: _judged(
        10 if "y by another model" in messages[-1]["content"] else 1))
    selection = await select_with_competitor(
        rows, top_k=1, min_competitor_score=0.0, progress=False,
        competitor=Competitor(writer=writer, judge=judge, concurrency=1))
    assert selection.kept == ("y",)
    assert selection.potentials["y"].p == pytest.approx(0.9)
    assert selection.competitor_answers == 2
    # The competitor saw each prompt's own conversation; the judge got the stored checklist.
    assert [c.messages[-1]["content"] for c in writer.calls] == ["Write x.", "Write y."]
    assert all("Clarity" in json.dumps(c.schema) for c in judge.calls)


async def test_a_failing_competitor_is_counted_not_guessed():
    rows = [row("x", 0.3, 0.5)]
    writer = ScriptedBackend([UpstreamUnavailable("down")])
    selection = await select_with_competitor(
        rows, top_k=1, min_competitor_score=0.0, progress=False,
        competitor=Competitor(writer=writer, judge=ScriptedBackend(), concurrency=1))
    assert selection.kept == ("x",)
    assert selection.potentials["x"].p == pytest.approx(0.2)
    assert selection.counts()["competitor_failures"] == 1

"""Algorithm 1 with scripted writer and judge: the answer is the best evaluated candidate, the
loop stops exactly at the threshold or after T rounds, k candidates per round."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fakes.writer import revision_parts
from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from generation.types import ChatParams, Usage
from loops.checklists import ChecklistSpec, Resolved
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from rubrics.checklist import Band, Checklist, Dimension

DIMS = ("Clarity", "Coverage")
CHECKLIST = Checklist(dimensions=tuple(
    Dimension(name=n, description=f"{n} of the answer", bands=(
        Band(low=1, high=4, description="weak"), Band(low=5, high=7, description="fair"),
        Band(low=8, high=10, description="strong"))) for n in DIMS), source="user")
QUERY = [{"role": "system", "content": "You write briefs."},
         {"role": "user", "content": "Write a product brief for a tea kettle."}]


class FixedProvider:
    """Test double: always this checklist, as if built by the agents (no calls)."""

    def __init__(self, checklist: Checklist = CHECKLIST) -> None:
        self.checklist = checklist
        self.built = 0

    async def fixed(self, spec: ChecklistSpec, namespace: str) -> Resolved:
        return Resolved(self.checklist, "user", "fixed")

    async def build(self, query, model, namespace, mode) -> Resolved:
        self.built += 1
        return Resolved(self.checklist, "generated", "built", Usage(10, 5), 1)

    async def cached(self, query, model, mode) -> Checklist | None:
        return None

    def generic(self, query) -> Checklist:
        return self.checklist


def answer_of(prompt: str) -> str:
    return re.search(r"<response>\n(.*?)\n</response>", prompt, re.DOTALL).group(1)


def judge_reply(prompt: str, score: int) -> str:
    """Whatever the prompt asks for: fused assess, joint or per-dimension scores, reflection."""
    if "Score it on this one dimension only" in prompt:
        return json.dumps({"evidence": "q", "score": score})
    reflection = {"summary": "tighten", "items": [
        {"dimension": "Clarity", "evidence": "x", "objective": "clearer", "actions": ["cut"]}]}
    if "The judge's scores" in prompt:
        return json.dumps(reflection)
    scores = {"scores": {n: {"evidence": "q", "score": score} for n in DIMS}}
    if "Then write the reflection" in prompt:
        return json.dumps({**scores, **reflection})
    return json.dumps(scores)


class World:
    """A writer that numbers its texts and a judge that scores text i with scores[i]."""

    def __init__(self, scores: list[int]) -> None:
        self.scores = scores
        self.count = 0
        self.writer = ScriptedBackend(default=self._write, model="writer")
        self.judge = ScriptedBackend(default=self._judge, model="judge")

    def _write(self, messages, params, schema) -> str:
        text = f"text-{self.count}"
        self.count += 1
        return text

    def _judge(self, messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        index = int(answer_of(prompt).split("-")[1])
        return judge_reply(prompt, self.scores[index % len(self.scores)])

    def normalised(self, text: str) -> float:
        return (self.scores[int(text.split("-")[1]) % len(self.scores)] - 1) / 9


def make_loop(world: World, provider=None) -> ReflectionLoop:
    return ReflectionLoop(world.writer, world.judge, provider or FixedProvider(),
                          judge_params=ChatParams(model="judge"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scores=st.lists(st.integers(1, 10), min_size=1, max_size=40),
       threshold=st.floats(0, 1), rounds=st.integers(0, 5), k=st.integers(1, 3))
def test_algorithm_1_properties(scores, threshold, rounds, k):
    world = World(scores)
    opts = LoopOptions(max_rounds=rounds, threshold=threshold, candidates=k)
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(model="writer"), opts,
                                             namespace="default"))
    evaluated = [c for c in trace.candidates if c.score is not None]
    assert len(evaluated) == len(trace.candidates) == 1 + trace.rounds * k
    for c in evaluated:
        assert c.score == pytest.approx(world.normalised(c.text))
    best = max(c.score for c in evaluated)
    # The answer is the candidate with the highest evaluated score.
    assert trace.answer.score == best
    # Stop exactly when the best reaches tau, or after T rounds.
    running_best = []
    for r in range(trace.rounds + 1):
        running_best.append(max(c.score for c in evaluated if c.round <= r))
    assert all(b < threshold for b in running_best[:-1])
    if trace.stop_reason == "threshold":
        assert running_best[-1] >= threshold
    else:
        assert trace.stop_reason == "max_rounds"
        assert trace.rounds == rounds and running_best[-1] < threshold
    # Each round has exactly k candidates, children of one parent.
    for r in range(1, trace.rounds + 1):
        children = [c for c in trace.candidates if c.round == r]
        assert len(children) == k and len({c.parent for c in children}) == 1


def test_current_text_follows_the_newest_candidate_not_the_best():
    # Draft scores 9 (best overall); round 1's rewrite scores 2; round 2 must revise round 1's
    # text (the newest), while the answer stays the draft.
    world = World([9, 2, 3, 4])
    opts = LoopOptions(max_rounds=2, threshold=1.0)
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), opts, namespace="default"))
    # A rewrite quotes the current text as the draft in its last turn.
    current_texts = [revision_parts(c.messages[-1]["content"])[1] for c in world.writer.calls
                     if c.messages[-1]["content"].startswith("Request:\n")]
    assert current_texts == ["text-0", "text-1"]
    assert trace.answer.text == "text-0" and trace.stop_reason == "max_rounds"


def test_fused_reflection_takes_four_sequential_calls_for_a_cached_one_round_loop():
    world = World([1, 10])
    opts = LoopOptions(max_rounds=1, threshold=0.9)
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), opts, namespace="default",
                                             spec=ChecklistSpec(ref="x:y")))
    assert len(world.writer.calls) == 2  # draft, rewrite
    assert len(world.judge.calls) == 2   # evaluate+reflect, evaluate
    assert trace.ledger.calls["reflect"] == 0 and trace.stop_reason == "threshold"


def test_per_dimension_mode_reflects_in_a_separate_call():
    world = World([1, 10])
    opts = LoopOptions(max_rounds=1, threshold=0.9, evaluation="per_dimension")
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), opts, namespace="default"))
    assert trace.ledger.calls["reflect"] == 1
    assert trace.ledger.calls["evaluate"] == 2 * len(DIMS)
    assert trace.answer.text == "text-1"


def test_garbage_judge_degrades_to_the_draft_without_raising():
    world = World([5])
    world.judge = ScriptedBackend(default="I refuse to output JSON")
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), LoopOptions(), namespace="d"))
    assert trace.stop_reason == "degraded" and trace.answer.text == "text-0"


def test_upstream_failure_mid_loop_returns_best_so_far_degraded():
    world = World([4, 6])
    writes = iter(["text-0"])

    def writer(messages, params, schema):
        try:
            return next(writes)
        except StopIteration:
            raise UpstreamUnavailable("writer down") from None

    world.writer = ScriptedBackend(default=writer)
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), LoopOptions(threshold=1.0),
                                             namespace="d"))
    assert trace.stop_reason == "degraded" and trace.answer.text == "text-0"


def test_token_budget_stops_the_loop():
    world = World([1])
    opts = LoopOptions(max_rounds=5, threshold=1.0, token_budget=1)
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), opts, namespace="d"))
    assert trace.stop_reason == "budget" and trace.rounds == 0


def test_time_budget_stops_the_loop():
    world = World([1])
    world.writer.latency = 0.05
    opts = LoopOptions(max_rounds=5, threshold=1.0, time_budget=0.12)
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), opts, namespace="d"))
    assert trace.stop_reason == "budget" and trace.rounds < 5


def test_checklist_is_built_concurrently_with_the_draft():
    world = World([10])
    world.writer.latency = 0.2

    class SlowProvider(FixedProvider):
        async def build(self, query, model, namespace, mode):
            await asyncio.sleep(0.2)
            return await super().build(query, model, namespace, mode)

    async def timed():
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await make_loop(world, SlowProvider()).run(QUERY, ChatParams(), LoopOptions(),
                                                   namespace="d")
        return loop.time() - t0

    assert asyncio.run(timed()) < 0.35


def test_usage_adds_up_over_every_hidden_call():
    world = World([1, 2, 10])
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(), LoopOptions(threshold=0.95),
                                             namespace="d"))
    calls = world.writer.calls + world.judge.calls
    total = trace.ledger.total
    expected = sum(len(f"text-{i}".split()) for i in range(world.count)) + sum(
        len(world._judge(c.messages, None, None).split()) for c in world.judge.calls)
    checklist = 5  # FixedProvider.build reports Usage(10, 5) for one call
    assert total.completion_tokens == expected + checklist
    assert trace.ledger.total_calls == len(calls) + 1

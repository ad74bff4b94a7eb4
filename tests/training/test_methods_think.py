"""R2-Write think format: <think> draft, reflections in the writer's voice, revisions
</think> then the best answer; voice by a model when given, else by the template."""

from __future__ import annotations

from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from tests.training.methods_cases import candidate, reflection, row
from training.data.think import Voice, split_think, think_text, trajectory


def test_the_trajectory_follows_parents_from_the_draft_to_the_best():
    cands = [candidate(0, 0.2, "draft", kind="draft"),
             candidate(1, 0.5, "first", parent=0, reflection=reflection()),
             candidate(2, 0.4, "side branch", parent=0, reflection=reflection()),
             candidate(3, 0.9, "best", parent=1, reflection=reflection()),
             candidate(4, 0.6, "after best", parent=3, reflection=reflection())]
    assert [c["text"] for c in trajectory(cands)] == ["draft", "first", "best"]


async def test_think_text_orders_draft_reflection_revision_then_the_answer():
    r = row("q", 0.2, 0.5, 0.9)
    text = await think_text(r["prompt"], r["candidates"], Voice(None))
    think, answer = split_think(text)
    assert text.startswith("<think>\n") and answer == "q rewrite 2"
    order = [think.index(s) for s in ("q draft", "weak on Clarity", "q rewrite 1", "q rewrite 2")]
    assert order == sorted(order)
    # The template speaks as the writer, with the reflection's evidence and actions.
    assert 'Where I wrote "a nice day"' in think and "say Friday; give the time" in think
    assert think.count("weak on Clarity") == 2


async def test_the_voice_model_rewrites_each_reflection_and_falls_back_when_it_fails():
    r = row("q", 0.2, 0.5, 0.9)
    backend = ScriptedBackend(["I kept it vague; I will name Friday.",
                               UpstreamUnavailable("gone")])
    voice = Voice(backend, concurrency=1)
    think, answer = split_think(await think_text(r["prompt"], r["candidates"], voice))
    assert "I kept it vague; I will name Friday." in think
    assert "weak on Clarity" in think           # the second reflection fell back
    assert (voice.calls, voice.fallbacks) == (2, 1)
    assert answer == "q rewrite 2"
    # The model was given the writing task and the critique.
    assert "Write q." in backend.calls[0].messages[-1]["content"]
    assert "name the day" in backend.calls[0].messages[-1]["content"]


def test_split_think_without_a_think_part_is_all_answer():
    assert split_think("just text ") == (None, "just text")
    assert split_think("<think>a</think>b") == ("a", "b")

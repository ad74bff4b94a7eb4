"""Checks in the loop, with scripted writer and judge: every candidate's checks are run in code
and kept, a failed check leads the reflection with what was measured and what is needed, the
loop never stops at tau on a text that fails a check, and the selection rule (loops.answer)
lets checks break near-ties but never overturn a content gap, nor crown a rewrite that
dropped most of the text it revised."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from bench.fakes.writer import revision_parts
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.answer import CHECK_WEIGHT, SHRINK_PENALTY, asks_shorter, best, finished, rank, shrank
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from loops.record import (
    ANSWER_KEY,
    CHECKS_KEY,
    CONFORMED_KEY,
    dimension_scores,
    stored_checks,
    to_record,
)
from loops.reflection import CHECK_PREFIX, with_checks
from loops.trace import Candidate, Reflection, ReflectionItem
from rubrics.checklist import Checklist
from rubrics.checks import Check, CheckOutcome
from rubrics.checks.kinds import KINDS, CheckKind
from tests.unit.test_loops_controller import CHECKLIST, QUERY, FixedProvider, answer_of, judge_reply

AT_LEAST_12 = Check(kind="word_count", params={"relation": "at least", "n": 12, "upper": None},
                    quote="at least 12 words")
NO_COMMAS = Check(kind="no_commas", params={})


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


class Script:
    """The writer returns `texts` in order; the judge scores each text by `scores[text]`."""

    def __init__(self, texts: list[str], scores: Mapping[str, int]) -> None:
        replies = iter(texts)
        self.scores = scores
        self.writer = ScriptedBackend(default=lambda m, p, s: next(replies), model="writer")
        self.judge = ScriptedBackend(default=self._judge, model="judge")

    def _judge(self, messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        return judge_reply(prompt, self.scores[answer_of(prompt)])

    def run(self, checks: tuple[Check, ...], query=QUERY, **opts: Any):
        checklist = CHECKLIST.model_copy(update={"checks": checks})
        loop = ReflectionLoop(self.writer, self.judge, FixedProvider(checklist),
                              judge_params=ChatParams(model="judge"))
        options = LoopOptions(**{"memory": False, **opts})
        return asyncio.run(loop.run(query, ChatParams(), options, namespace="d"))


def test_each_candidate_carries_its_check_outcomes():
    short, long = words(5, "a"), words(14, "b")
    trace = Script([short, long], {short: 5, long: 5}).run((AT_LEAST_12,), max_rounds=1,
                                                           threshold=1.0)
    first, second = trace.candidates
    assert [(o.kind, o.passed, o.measured, o.target) for o in first.checks] == \
        [("word_count", False, "5 words", "at least 12 words")]
    assert first.checks[0].line() == "[FAIL] word_count: 5 words; needs at least 12 words"
    assert second.checks[0].passed and second.checks[0].measured == "14 words"


def test_a_failed_check_leads_the_reflection_the_rewriter_sees():
    short, long = words(5, "a"), words(14, "b")
    script = Script([short, long], {short: 5, long: 5})
    trace = script.run((AT_LEAST_12, NO_COMMAS), max_rounds=1, threshold=1.0)
    request = script.writer.calls[1].messages[-1]["content"]
    # measured and stated once, before the judge's items, with what already passes to keep
    assert "- It has 5 words; it must have at least 12 words." in request
    assert "Keep what it already meets: no commas." in request
    assert request.count("at least 12 words") == 1 and CHECK_PREFIX not in request
    assert request.index("It has 5 words") < request.index("Clarity")
    items = trace.candidates[1].reflection.items
    assert items[0].dimension == "check: word_count" and items[1].dimension == "Clarity"


def test_a_separate_reflection_call_shows_the_measured_checks_to_the_judge():
    short, long = words(5, "a"), words(14, "b")
    script = Script([short, long], {short: 5, long: 5})
    script.run((AT_LEAST_12,), max_rounds=1, threshold=1.0, fuse_reflection=False)
    reflect = [c for c in script.judge.calls if "The judge's scores" in c.messages[-1]["content"]]
    assert "[FAIL] word_count: 5 words; needs at least 12 words" in \
        reflect[0].messages[-1]["content"]


def test_the_loop_does_not_stop_at_tau_on_a_text_that_fails_a_check():
    short, long = words(5, "a"), words(14, "b")
    trace = Script([short, long], {short: 10, long: 10}).run(
        (AT_LEAST_12,), max_rounds=3, threshold=0.9)
    # The draft scores 1.0 on content but fails the check: one more round, then stop.
    assert trace.rounds == 1 and trace.stop_reason == "threshold"
    assert trace.answer.text == long


def test_without_a_passing_text_the_loop_runs_to_max_rounds():
    texts = [words(5, "a"), words(6, "b"), words(7, "c")]
    trace = Script(texts, dict.fromkeys(texts, 10)).run((AT_LEAST_12,), max_rounds=2,
                                                        threshold=0.5)
    assert trace.stop_reason == "max_rounds" and trace.rounds == 2
    assert trace.answer.text == texts[0]  # equal content, equal checks: the earliest


def test_checks_break_a_content_tie():
    short, long = words(5, "a"), words(14, "b")
    trace = Script([short, long], {short: 7, long: 7}).run((AT_LEAST_12,), max_rounds=1,
                                                           threshold=1.0)
    assert trace.answer.text == long


def test_checks_do_not_overturn_a_content_gap():
    short, long = words(5, "a"), words(14, "b")
    # 8/10 against 7/10: a content gap of 0.11, above the check weight.
    trace = Script([short, long], {short: 8, long: 7}).run((AT_LEAST_12,), max_rounds=1,
                                                           threshold=1.0)
    assert trace.answer.text == short


def _ends_with(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    ending = params["ending"]
    return CheckOutcome(kind="test_ends_with", passed=text.rstrip().lower().endswith(ending),
                        measured=f"ends {text.rstrip()[-len(ending):]!r}",
                        target=f"the ending {ending!r}")


ENDING_PARAMS = {"type": "object", "additionalProperties": False, "required": ["ending"],
                 "properties": {"ending": {"type": "string", "minLength": 1, "maxLength": 200}}}


@pytest.fixture
def ends_with(monkeypatch):
    """A check on the text's ending (a test kind: only word counts are certain to exist)."""
    monkeypatch.setitem(KINDS, "test_ends_with", CheckKind(
        "test_ends_with", "the text's ending", ENDING_PARAMS, _ends_with))
    return Check(kind="test_ends_with", params={"ending": "your love, and thanks."},
                 quote="end with 'your love, and thanks.'")


POEM = ("Morning light on the kitchen floor, the kettle singing by the door, "
        "a letter folded twice with care, the scent of bread still in the air, "
        "and every word I could not say I write to you this winter day, with all my heart, "
        "your love and thanks.")
FRAGMENT = "Your love, and thanks."
POEM_QUERY = [{"role": "user", "content": "Write a poem for my mother. It must end with "
                                          "'your love, and thanks.'"}]


def test_a_fragment_passing_a_check_does_not_beat_the_poem(ends_with):
    # The 1.5B failure: the judge gives the bare ending 9/10 and the poem 7/10.
    script = Script([POEM, FRAGMENT], {POEM: 7, FRAGMENT: 9})
    trace = script.run((ends_with,), query=POEM_QUERY, max_rounds=1, threshold=0.8)
    fragment = trace.candidates[1]
    assert fragment.shrunk and fragment.checks[0].passed and not trace.candidates[0].shrunk
    assert trace.answer.text == POEM


def test_a_shrunk_rewrite_does_not_end_the_loop_at_tau(ends_with):
    script = Script([POEM, FRAGMENT, POEM + " your love, and thanks."],
                    {POEM: 3, FRAGMENT: 10, POEM + " your love, and thanks.": 10})
    trace = script.run((ends_with,), query=POEM_QUERY, max_rounds=3, threshold=0.9)
    # Round 1's fragment scores 1.0 and passes the check, but must earn its place: round 2.
    assert trace.rounds == 2 and trace.stop_reason == "threshold"
    assert trace.answer.text.endswith("your love, and thanks.") and not trace.answer.shrunk


def test_a_shrunk_rewrite_wins_on_a_content_lead_beyond_the_penalty(ends_with):
    script = Script([POEM, FRAGMENT], {POEM: 2, FRAGMENT: 10})
    trace = script.run((ends_with,), query=POEM_QUERY, max_rounds=1, threshold=1.0)
    assert trace.answer.text == FRAGMENT


def test_a_shorter_text_that_was_asked_for_is_not_shrunk():
    query = [{"role": "user", "content": "Shorten my note to one line."}]
    long, short = words(30, "a"), words(4, "b")
    trace = Script([long, short], {long: 7, short: 8}).run((), query=query, max_rounds=1,
                                                           threshold=1.0)
    assert not trace.candidates[1].shrunk and trace.answer.text == short


def test_asks_shorter_reads_the_wording_and_word_count_bounds():
    at_most = Check(kind="word_count", params={"relation": "at most", "n": 50, "upper": None})
    assert asks_shorter("Condense this into a summary", (), 100)
    assert asks_shorter("请缩短这段文字", (), 100)
    assert asks_shorter("Write about tea", (at_most,), 100)
    assert not asks_shorter("Write about tea", (at_most,), 40)
    assert not asks_shorter("Write about tea", (AT_LEAST_12,), 100)
    assert shrank(words(4, "x"), words(10, "y"), "Write about tea", ())
    assert not shrank(words(5, "x"), words(10, "y"), "Write about tea", ())


def _cand(position: int, score: float | None, passed: int, total: int = 2,
          **kw: Any) -> Candidate:
    outcomes = tuple(CheckOutcome(kind="word_count", passed=i < passed, measured="m",
                                  target="t") for i in range(total))
    return Candidate(position, 0, "rewrite", f"t{position}", score=score, checks=outcomes, **kw)


def test_rank_is_content_plus_a_bounded_check_bonus():
    a, b = _cand(0, 0.70, 0), _cand(1, 0.70 + CHECK_WEIGHT - 0.01, 0)
    assert best([a, _cand(1, 0.70, 2)]).position == 1           # tie: checks decide
    assert best([_cand(0, 0.70 + CHECK_WEIGHT + 0.01, 0), _cand(1, 0.70, 2)]).position == 0
    assert best([a, b]).position == 1
    assert best([_cand(0, None, 2), _cand(1, 0.1, 0)]).position == 1  # unevaluated never wins
    assert best([_cand(0, 0.9, 2, scaffolding=("rubric",)), _cand(1, 0.1, 0)]).position == 1
    shrunk = _cand(2, 0.99, 2, shrunk=True)
    assert rank(shrunk).value == pytest.approx(0.99 - SHRINK_PENALTY)
    assert best([_cand(0, 0.70, 0), shrunk]).position == 2   # a lead of 0.29 earns it
    assert best([_cand(0, 0.70, 0), _cand(2, 0.90, 2, shrunk=True)]).position == 0


def test_finished_needs_tau_every_check_and_no_shrink():
    assert finished(_cand(0, 0.95, 2), 0.9)
    assert not finished(_cand(0, 0.95, 1), 0.9)
    assert not finished(_cand(0, 0.85, 2), 0.9)
    assert not finished(_cand(0, 0.95, 2, shrunk=True), 0.9)
    assert finished(_cand(0, 0.95, 0, total=0), 0.9)


def test_with_checks_puts_failed_checks_first_and_skips_passed_ones():
    judge = Reflection((ReflectionItem("Clarity", "x", "clearer", ("cut",)),), "s")
    outcomes = (CheckOutcome(kind="word_count", passed=False, measured="45 words",
                             target="at least 120 words", quote="120 words at least"),
                CheckOutcome(kind="word_count", passed=True, measured="45 words",
                             target="at most 200 words"))
    out = with_checks(judge, outcomes)
    assert [i.dimension for i in out.items] == ["check: word_count", "Clarity"]
    assert "at least 120 words" in out.items[0].objective and out.items[0].evidence == "45 words"
    assert with_checks(judge, outcomes[1:]) is judge


def test_the_record_keeps_outcomes_and_marks_the_answer():
    short, long = words(5, "a"), words(14, "b")
    trace = Script([short, long], {short: 7, long: 7}).run((AT_LEAST_12,), max_rounds=1,
                                                           threshold=1.0)
    record = to_record(trace, namespace="d", request={"messages": QUERY}, model="m",
                       backend="scripted")
    draft, rewrite = record.candidates
    assert [o.passed for o in stored_checks(draft.scores)] == [False]
    assert stored_checks(rewrite.scores)[0].line() == \
        "[pass] word_count: 14 words; needs at least 12 words"
    assert rewrite.scores[ANSWER_KEY] and ANSWER_KEY not in draft.scores
    assert set(dimension_scores(draft.scores)) == {"Clarity", "Coverage"}
    assert CHECKS_KEY in draft.scores
    assert Checklist.model_validate(record.checklist).checks == (AT_LEAST_12,)


def test_the_response_trace_lists_checks_apart_from_the_dimension_scores():
    from app.openai.reflection import summary

    short, long = words(5, "a"), words(14, "b")
    trace = Script([short, long], {short: 7, long: 7}).run((AT_LEAST_12,), max_rounds=1,
                                                           threshold=1.0)
    out = summary(trace, with_trace=True)["trace"]
    first = out["candidates"][0]
    assert set(first["scores"]) == {"Clarity", "Coverage"}
    assert first["checks"] == [{"kind": "word_count", "passed": False, "measured": "5 words",
                                "target": "at least 12 words", "quote": "at least 12 words",
                                "action": "Add at least 7 words."}]
    assert out["answer_position"] == 1 and out["checklist"]["checks"][0]["kind"] == "word_count"


def test_the_next_round_revises_the_whole_text_not_the_fragment(ends_with):
    ending = POEM + " your love, and thanks."
    script = Script([POEM, FRAGMENT, ending], {POEM: 3, FRAGMENT: 10, ending: 10})
    script.run((ends_with,), query=POEM_QUERY, max_rounds=3, threshold=0.9)
    rewrites = [c.messages for c in script.writer.calls if len(c.messages) > len(POEM_QUERY)]
    assert [revision_parts(m[-1]["content"])[1] for m in rewrites] == [POEM, POEM]
    assert "set aside: the rewrite dropped most of the text" in rewrites[1][-1]["content"]


class ShrinkingMemory:
    """A memory step whose rewrite of the draft keeps only its last line."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        from generation.types import Usage

        lesson = SimpleNamespace(hit=SimpleNamespace(experience=SimpleNamespace(text="end it")))
        self.recalled = SimpleNamespace(hits=[lesson], selected=[lesson], usage=Usage(), calls=0,
                                        as_dict=lambda: {})

    async def recall(self, query, namespace):
        return self.recalled

    async def revise(self, recalled, query, draft, params):
        from generation.types import Choice, Completion, Usage

        return FRAGMENT, Completion((Choice(0, FRAGMENT, "stop"),), Usage(), "m")


def test_a_shrunk_memory_rewrite_is_not_the_text_round_one_revises(ends_with):
    script = Script([POEM, POEM + " your love, and thanks."],
                    {POEM: 5, FRAGMENT: 9, POEM + " your love, and thanks.": 9})
    checklist = CHECKLIST.model_copy(update={"checks": (ends_with,)})
    loop = ReflectionLoop(script.writer, script.judge, FixedProvider(checklist),
                          judge_params=ChatParams(model="judge"), memory=ShrinkingMemory())
    trace = asyncio.run(loop.run(POEM_QUERY, ChatParams(), LoopOptions(max_rounds=1,
                                                                         threshold=0.8),
                                 namespace="d"))
    memory = trace.candidates[1]
    assert memory.kind == "memory_rewrite" and memory.shrunk
    rewrites = [c.messages for c in script.writer.calls if len(c.messages) > len(POEM_QUERY)]
    assert revision_parts(rewrites[0][-1]["content"])[1] == POEM
    assert trace.answer.text == POEM + " your love, and thanks."


JSON_CHECK = Check(kind="json", params={}, quote="answer in JSON")


def test_a_rewrite_that_breaks_the_json_the_draft_kept_is_never_the_answer():
    draft, broken = '{"name": "Tom", "color": "grey"}', 'Tom is a grey cat: {"name": "Tom"'
    trace = Script([draft, broken], {draft: 2, broken: 10}).run(
        (JSON_CHECK,), max_rounds=1, threshold=1.0)
    assert trace.candidates[1].score == 1.0 and not trace.candidates[1].checks[0].passed
    assert trace.answer.text == draft  # content 0.2 against 1.0: the format decides


def test_a_rewrite_that_mends_broken_json_is_chosen_on_its_rank():
    draft, mended = 'Tom is a grey cat: {"name": "Tom"', '{"name": "Tom", "color": "grey"}'
    trace = Script([draft, mended], {draft: 5, mended: 5}).run(
        (JSON_CHECK,), max_rounds=1, threshold=1.0)
    assert trace.answer.text == mended


LOWERCASE = Check(kind="lowercase", params={})


def test_form_checks_are_met_in_code_before_the_judge_reads_the_text():
    raw, met = "Rain Falls, Softly On The Roof.", "rain falls softly on the roof."
    # the judge scores by the text it is shown: only the changed text has a score
    trace = Script([raw], {met: 7}).run((LOWERCASE, NO_COMMAS), max_rounds=0)
    assert trace.answer.text == met and trace.answer.score is not None
    assert trace.answer.conformed == ("lowercase", "no_commas")
    assert all(o.passed for o in trace.answer.checks)
    record = to_record(trace, namespace="d", request={}, model="m", backend="b")
    assert record.candidates[0].scores[CONFORMED_KEY] == ["lowercase", "no_commas"]
    assert CONFORMED_KEY not in dimension_scores(record.candidates[0].scores)


def test_a_rewrite_is_met_in_code_too_and_the_option_turns_it_off():
    draft, rewrite = words(14, "a"), "Rain Falls On The Roof And The Street Shines Again Tonight."
    trace = Script([draft, rewrite], {draft: 5, rewrite.lower(): 6}).run(
        (LOWERCASE,), max_rounds=1)
    assert [c.conformed for c in trace.candidates] == [(), ("lowercase",)]
    assert trace.answer.text == rewrite.lower()
    off = Script([rewrite], {rewrite: 6}).run((LOWERCASE,), max_rounds=0, conform=False)
    assert off.answer.text == rewrite and off.answer.conformed == ()
    assert not off.answer.checks[0].passed


class CutAtTheLimit(ScriptedBackend):
    """A writer whose every answer was cut at its completion limit."""

    async def chat(self, messages, params, schema=None):
        done = await super().chat(messages, params, schema)
        return replace(done, choices=tuple(replace(c, finish_reason="length")
                                           for c in done.choices))


def _ask(how: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Write a product brief for a tea kettle {how}"}]


def _cut_script(texts: list[str]) -> Script:
    script = Script(texts, {})
    replies = iter(texts)
    script.writer = CutAtTheLimit(default=lambda m, p, s: next(replies), model="writer")
    return script


def test_a_draft_cut_short_of_a_length_it_cannot_reach_is_not_rewritten():
    # the draft filled its completion limit and still has fewer words than asked: a rewrite
    # under the same limit cannot write more, so no round is spent
    script = _cut_script([words(5, "a"), words(14, "b")])
    trace = script.run((), query=_ask("in at least 12 words."), evaluation="checks",
                       max_rounds=2, threshold=1.0)
    assert trace.stop_reason == "max_tokens" and trace.rounds == 0
    assert len(script.writer.calls) == 1


def test_a_cut_draft_that_fails_another_check_is_still_rewritten():
    script = _cut_script([words(5, "a"), words(14, "b") + " steam steam"])
    trace = script.run((), query=_ask('in at least 12 words that uses the word "steam" twice.'),
                       evaluation="checks", max_rounds=1, threshold=1.0)
    assert trace.rounds == 1 and len(script.writer.calls) == 2


def test_a_length_the_completion_limit_cannot_hold_is_not_asked_of_a_rewrite():
    # not cut, but written at a rate that fills 20 tokens long before 60 words
    for limit, rounds in ((20, 0), (None, 1)):
        writer = ScriptedBackend([words(5, "a"), words(64, "b")], model="writer")
        loop = ReflectionLoop(writer, ScriptedBackend(model="judge"),
                              FixedProvider(CHECKLIST), judge_params=ChatParams(model="judge"))
        trace = asyncio.run(loop.run(_ask("in at least 60 words."), ChatParams(max_tokens=limit),
                                     LoopOptions(memory=False, evaluation="checks",
                                                 max_rounds=1, threshold=1.0), namespace="d"))
        assert trace.rounds == rounds and len(writer.calls) == 1 + rounds
        assert trace.stop_reason == ("max_tokens" if limit else "threshold")

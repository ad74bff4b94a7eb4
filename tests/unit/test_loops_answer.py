"""The answer is the text alone: cleaning and scaffolding detection on what real models wrote.

`tests/data/smollm2_rewrites.json` holds rewrites SmolLM2-135M-Instruct (local backend,
greedy) produced from the reviser's earlier prompt; the 1.5B outputs are quoted from a run
of a 1.5B instruct model behind llama.cpp."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.answer import clean_answer, looping, off_language, padded, scaffolding
from loops.options import LoopOptions
from loops.prompting import render_history
from loops.record import PADDED_KEY, to_record
from loops.rewrite import render_reflection
from loops.trace import Reflection, ReflectionItem
from tests.unit.test_loops_controller import QUERY, World, make_loop

DATA = Path(__file__).parents[1] / "data" / "smollm2_rewrites.json"

# The reviser's request SmolLM2 was shown when it wrote the recorded rewrites.
_OLD_REQUEST = ("Revise the answer above to my request, carrying out this reflection.\n\n"
                "## The reflection\n{reflection}\n\n"
                "## Earlier rounds (what was tried and how the score moved)\n{history}")
_REFLECTIONS = [
    Reflection((ReflectionItem("Length constraint", "We apologize.", "Reach about 60 words",
                               ("Add the new opening time and the reason",)),), "Too short."),
    Reflection((ReflectionItem("Form", "Rain falls down.", "Two lines",
                               ("Add a second line with an image",)),), "Only one line."),
    Reflection((ReflectionItem("Completeness", "Be on time.", "Three tips",
                               ("Add two more tips",)),), "Only one tip."),
]


@pytest.mark.parametrize(("raw", "clean"), [
    # 1.5B instruct model: a revision heading and notes about the change in the answer
    ("### Revised Announcement\n\nThe library opens at noon on Friday.\n\n"
     "**Length Constraint:** We aim to keep the announcement within the 120-word limit. The "
     "original text exceeded this limit by several words, so we removed unnecessary "
     "information.", "The library opens at noon on Friday."),
    ("Here is the revised text:\n```\nRain taps the roof.\nThe street shines.\n```",
     "Rain taps the roof.\nThe street shines."),
    ("Sure! Here's an improved version:\n\n**Revised Poem:**\nRain taps.\n\n---\n"
     "Changes made:\n- added a line", "Rain taps."),
    ("Rain taps.\n\nNote: I shortened the second line.", "Rain taps."),
    ("The new hours start Monday.\n\nI have revised the text to mention the hours.",
     "The new hours start Monday."),
    # SmolLM2-135M through `redraft serve`: the lead-in on the answer's own first line
    ("The revised answer is: Exercise keeps the heart strong.",
     "Exercise keeps the heart strong."),
    ("Revised version as follows:\n\n1. Walk.\n2. Swim.", "1. Walk.\n2. Swim."),
    ("The original text is:\n\n晚安。", "晚安。"),
    # 1.5B reviser asked for 2 paragraphs split by ***: a report made the first one
    ("This answer meets your request for exactly 2 paragraphs.\n\n***\n\nA quaint garden.",
     "A quaint garden."),
    ("```\nThe original text is:\n\n晚安。\n```", "晚安。"),
    ("An earlier answer:\n1. Reuse bags.\n2. Refill bottles.",
     "1. Reuse bags.\n2. Refill bottles."),
    # 1.5B reviser under `checks`: a report on the revision copying the request's words
    ("Green tea is made from the leaves of one plant.\n\nThe new answer meets all the "
     "requested points:\n- It has at least 2 times 'leaf'",
     "Green tea is made from the leaves of one plant."),
    # SmolLM2 under `checks`: a verdict on the draft after the rewrite
    ("- Owl\n- Fox\n\nThe original answer meets all the requested points.", "- Owl\n- Fox"),
    ("I'm glad you like it.\n\nThe draft meets the request:\n- It meets the request:",
     "I'm glad you like it."),
])
def test_clean_answer_strips_headings_fences_and_revision_notes(raw: str, clean: str) -> None:
    assert clean_answer(raw) == clean


@pytest.mark.parametrize("text", [
    "**Tips for success:**\n1. Be on time.\n2. Research the company.",
    "# Rain\n\nRain taps the roof.",
    "Here is what the audience needs to know: the hall opens at six.",
    "We revised our policy last year.",
    "The final answer is that we stay home.",
    "The revised answer is:",
])
def test_clean_answer_keeps_an_answer_that_only_looks_like_a_preface(text: str) -> None:
    assert clean_answer(text) == text


def test_a_fence_stays_when_the_revised_text_was_fenced() -> None:
    assert clean_answer("```python\nprint(1)\n```", original_fenced=True) == \
        "```python\nprint(1)\n```"


def test_real_smollm2_rewrites_that_copy_the_reflection_are_flagged() -> None:
    rows = json.loads(DATA.read_text("utf-8"))
    flagged = []
    for row, reflection in zip(rows, _REFLECTIONS, strict=True):
        hidden = _OLD_REQUEST.format(reflection=render_reflection(reflection),
                                     history=render_history([]))
        text = clean_answer(row["rewrite"])
        flagged.append(bool(scaffolding(text, f"{row['request']}\n{row['text']}", hidden)))
    # the first and third copy the revision request; the second returned the text unchanged
    assert flagged == [True, False, True]


def test_scaffolding_finds_band_labels_and_agent_prompt_runs_but_not_the_request() -> None:
    leak = ("The task goal is to provide a checklist for a library. Highest band: all of "
            "their evidence is quoted.")
    assert {"the task goal is", "checklist", "highest band"} <= set(
        scaffolding(leak, "Write a notice for the library."))
    assert scaffolding("Here is your checklist for the move: boxes, tape, labels.",
                       "Write a checklist for moving house.") == []
    # SmolLM2 through `redraft serve`: a dimension's heading from the judge's prompt
    assert scaffolding("Sammy (2) (scale 1-10, weight 1)\nSammy (2) (scale 1-10, weight 1)",
                       "Write a short note inviting Sam to coffee.") == ["scale 1-10, weight"]
    assert scaffolding("Rate it on a scale 1-10, then weigh it.", "Write a guide.") == []


class _Leaky(World):
    """Rewrites that copy the rubric's labels into the text (the judge reads the text's
    number from its first word)."""

    def _write(self, messages, params, schema) -> str:
        text = super()._write(messages, params, schema)
        return text if text == "text-0" else f"{text} -Highest band: the rubric is met."


def test_a_rewrite_repeating_the_scaffolding_loses_to_a_plain_draft_whatever_its_score() -> None:
    world = _Leaky([5, 10])
    trace = asyncio.run(make_loop(world).run(QUERY, ChatParams(),
                                             LoopOptions(max_rounds=1, threshold=1.0),
                                             namespace="default"))
    rewrite = trace.candidates[-1]
    assert rewrite.score == 1.0 and "highest band" in rewrite.scaffolding
    assert trace.answer.text == "text-0"


def test_the_loops_first_draft_is_the_direct_answer_to_the_same_request() -> None:
    """A deterministic writer (its text a function of the messages and the sampling) gives the
    loop's draft and a direct call the same text: same messages, same sampling."""
    def deterministic(messages, params, schema) -> str:
        return f"answer-{hash((repr(messages), repr(params))) & 0xffff:x}"

    world = World([5, 6])
    world.writer = ScriptedBackend(default=deterministic, model="writer")
    params = ChatParams(model="writer", temperature=0.0, top_p=0.9, max_tokens=64, seed=7,
                        stop=("\n\n\n",))
    direct = asyncio.run(world.writer.chat(QUERY, params))
    world.judge = ScriptedBackend(default=lambda m, p, s: world._judge(
        [{"content": m[-1]["content"].replace(direct.text, "text-0")}], p, s), model="judge")
    trace = asyncio.run(make_loop(world).run(QUERY, params, LoopOptions(max_rounds=0),
                                             namespace="default"))
    draft = trace.candidates[0]
    assert draft.kind == "draft" and draft.text == direct.text
    assert world.writer.calls[0].messages == world.writer.calls[1].messages
    assert world.writer.calls[0].params == world.writer.calls[1].params


_LOOP = ("The task goal is a task. " + "It is a task. " * 40).strip()
_DRAFT = ("1. **Health**: walking strengthens the heart and lungs.\n"
          "2. **Mood**: a daily walk lifts the mood and eases stress.\n"
          "3. **Community**: walking puts you among neighbours and local shops, "
          "which makes a street feel like home and keeps you in touch with the town.")


@pytest.mark.parametrize(("text", "loops"), [
    (_LOOP, True),                                               # SmolLM2's rewrite, verbatim
    ("春天来了，花开了，鸟儿在树上唱歌。" * 10, True),
    (_DRAFT, False),
    ("Row, row, row your boat, gently down the stream. Merrily, merrily, merrily, merrily, "
     "life is but a dream. " * 2, False),                        # a refrain sung twice
    ("It is a task. " * 5, True),                                # few words, over and over
    ("It is a task. " * 2, False),                               # too short to tell
    # a 1.5B reviser told not to say "cheese" in its pizza description
    ("Pizza, a pizza, a pizza, a pizza, a pizza, a pizza, a pizza, a pizza, a pizza.", True),
    ("Yes yes yes, no no no, maybe maybe maybe, and then we go home for tea.", False),
    ("春天来了，花开了，鸟儿在树上唱歌。小河里的冰融化了，孩子们在田野里放风筝，"
     "农民伯伯开始播种，到处都是一片生机勃勃的景象。", False),
    # SmolLM2's rewrite of a three-bullet answer, counting up to its token limit
    ("A: A\n* A\n" + "".join(f"* A ({i})\n" for i in range(2, 25)), True),
    # a table of figures, and numbered steps that differ in their words
    ("Sales by year:\n\n| Year | Units | Revenue |\n|---|---|---|\n"
     + "".join(f"| {2000 + i} | {100 + 7 * i} | {5000 + 310 * i} |\n" for i in range(20))
     + "\nUnits grew every year, and revenue with them.", False),
    ("".join(f"{i}. {step}\n" for i, step in enumerate(
        ["Mix the flour, yeast and salt in a large bowl", "Add warm water and stir to a dough",
         "Knead for ten minutes until smooth", "Leave it to rise for an hour",
         "Shape the loaf and bake it at 220 degrees for 30 minutes"], 1)), False),
])
def test_looping_finds_a_text_stuck_repeating_itself(text: str, loops: bool) -> None:
    assert looping(text) is loops


def test_a_rewrite_looping_on_itself_is_cut_where_it_repeats_and_loses_to_the_draft() -> None:
    from tests.unit.test_loops_checks import Script

    cut = "The task goal is a task. It is a task."
    trace = Script([_DRAFT, _LOOP, _LOOP, _LOOP], {_DRAFT: 5, cut: 10}).run(
        (), max_rounds=2, threshold=0.9)
    rewrites = trace.candidates[1:]
    assert rewrites and all(c.text == cut and c.finish_reason == "repetition"
                            for c in rewrites)
    # what is left of it is a fragment of the text it revised: 10/10 does not make it y*
    assert rewrites[0].shrunk
    assert trace.answer.text == _DRAFT
    assert not any(c.looping for c in trace.candidates)


_ONE = "School IS A PLACE WHERE STUDENTS LEARN AND GROW."
_DOGS = ("Dogs make good pets. They are highly intelligent and can learn to perform a wide "
         "range of tasks.")


@pytest.mark.parametrize(("text", "parent", "found"), [
    # 1.5B reviser asked for two sentences, and for two highlighted spans
    (f"{_ONE} {_ONE}", _ONE, ("school is a place where students learn and grow",)),
    (f"*Highly intelligent and can learn to perform a wide range of tasks*\n\n{_DOGS}\n\n"
     "*Highly intelligent and can learn to perform a wide range of tasks*", _DOGS,
     ("highly intelligent and can learn to perform a wide range of tasks",)),
    # a refrain its parent had, short repeats, a new sentence: nothing
    ("Rain falls down.\nRain falls down.\nAnd then the sun.", "Rain falls down.\nRain falls "
     "down.", ()),
    ("Yes. Yes. Go on then. Go on then.", "Yes.", ()),
    (f"{_ONE} Teachers help them every day.", _ONE, ()),
])
def test_padded_names_what_a_rewrite_says_twice_that_its_parent_said_once(
        text: str, parent: str, found: tuple[str, ...]) -> None:
    assert padded(text, parent) == found


def test_padding_a_rewrite_brought_in_stays_padding_in_its_own_rewrites() -> None:
    # SmolLM2 under `checks`: round 1 added "- It meets the request:" fifteen times, round 2
    # kept them; its parent's repeat is no refrain when the draft never had it
    draft = "Dear John, come for coffee. It is a lovely spot."
    verdicts = "- It meets the request:\n" * 15
    first = f"Come for coffee. It is lovely.\n{verdicts}"
    second = f"Come for coffee. It is a lovely spot.\n{verdicts}"
    assert padded(first, draft) == ("it meets the request",)
    assert padded(second, first) == ()
    assert padded(second, first, draft) == ("it meets the request",)
    refrain = "Rain falls down.\nRain falls down."
    assert padded(f"{refrain}\nSun.", f"{refrain}\nCloud.", refrain) == ()


def test_a_heading_of_the_revision_frame_in_the_answer_is_scaffolding() -> None:
    # SmolLM2 asked to start with "Snow": "Snow\n\nDraft answer:\nSnow is ..."
    assert scaffolding("Snow\n\nDraft answer:\nSnow is cold.", "Start with Snow.") == [
        "draft answer"]
    assert scaffolding("Draft answer:\nyes", "Fill in the form:\nDraft answer:\n...") == []


def test_a_line_copied_from_the_measured_requirements_is_scaffolding() -> None:
    # SmolLM2 asked for 2 paragraphs split by ***: the second "paragraph" was the header of
    # the requirements it was shown, reworded at its end
    from loops.rewrite import render_requirements
    from rubrics.checks import Check, run_checks
    check = Check(kind="paragraph_count", params={"relation": "exactly", "n": 2, "upper": None,
                                                  "divider": "***"})
    hidden = render_requirements(run_checks("A garden.", [check]))
    answer = ("A garden in a village.\n\n***\n\nThe draft does not meet the request yet "
              "(measured on it). Add only 1 paragraph of your answer.")
    assert scaffolding(answer, "Write about a small garden in exactly 2 paragraphs.", hidden)


def test_a_line_copied_from_the_cut_note_is_scaffolding() -> None:
    # SmolLM2 rewriting a poem cut by the length limit copied the note into its text
    from loops.rewrite import render_cut
    draft = "word " * 135
    answer = ("In a far corner of the world.\n\nThe draft was cut off by the length limit "
              "after 135 words.")
    assert scaffolding(answer, f"Write a song.\n{draft}", render_cut(draft))


def test_a_rewrite_meeting_a_count_by_saying_a_sentence_twice_is_never_the_answer() -> None:
    from loops.controller import ReflectionLoop
    from tests.unit.test_loops_controller import CHECKLIST, FixedProvider

    replies = iter([_ONE, f"{_ONE} {_ONE}", f"{_ONE} {_ONE}"])
    writer = ScriptedBackend(default=lambda m, p, s: next(replies))
    loop = ReflectionLoop(writer, ScriptedBackend(), FixedProvider(CHECKLIST),
                          judge_params=ChatParams())
    ask = [{"role": "user", "content": "Write two sentences about school."}]
    trace = asyncio.run(loop.run(ask, ChatParams(), LoopOptions(
        memory=False, evaluation="checks", threshold=1.0, max_rounds=1), namespace="d"))
    draft, rewrite = trace.candidates
    assert rewrite.checks_passed == 1 and draft.checks_passed == 0 and rewrite.padded
    assert trace.answer.position == 0 and trace.stop_reason == "max_rounds"
    record = to_record(trace, namespace="d", request={}, model="m", backend="b")
    assert record.candidates[1].scores[PADDED_KEY] == list(rewrite.padded)


def test_a_rewrite_meeting_a_check_by_leaving_the_topic_is_never_the_answer() -> None:
    # SmolLM2 asked for 2 paragraphs about a garden split by ***: the rewrite that met the
    # divider count was about parasitic wasps
    from loops.controller import ReflectionLoop
    from loops.record import OFF_TOPIC_KEY
    from tests.unit.test_loops_controller import CHECKLIST, FixedProvider

    # one sentence: no layout makes it two paragraphs
    garden = "A small garden grows roses by the wall and bees visit it every morning."
    wasps = "Insects adapt well.\n\n***\n\nTheir queen is a poet."
    replies = iter([garden, wasps, wasps])
    writer = ScriptedBackend(default=lambda m, p, s: next(replies))
    loop = ReflectionLoop(writer, ScriptedBackend(), FixedProvider(CHECKLIST),
                          judge_params=ChatParams())
    ask = [{"role": "user", "content": "Write about a small garden in exactly 2 paragraphs. "
                                       "Paragraphs are separated by the markdown divider ***."}]
    trace = asyncio.run(loop.run(ask, ChatParams(), LoopOptions(
        memory=False, evaluation="checks", threshold=1.0, max_rounds=1), namespace="d"))
    draft, rewrite = trace.candidates
    assert rewrite.checks_passed == 1 and draft.checks_passed == 0
    assert rewrite.off_topic and not draft.off_topic
    assert trace.answer.position == 0 and trace.stop_reason == "max_rounds"
    record = to_record(trace, namespace="d", request={}, model="m", backend="b")
    assert record.candidates[1].scores[OFF_TOPIC_KEY] is True


def test_a_rewrite_leaving_its_parents_language_is_off_language() -> None:
    # 1.5B reviser asked anew for a Chinese list under 100 characters: it answered in English
    assert off_language("1. Increase your vocabulary\n2. Practise daily",
                        "1. **设定明确的学习目标**：明确你的学习目标")
    assert not off_language("1. 每天练习", "1. **设定明确的学习目标**")
    assert not off_language("Rain taps the roof.", "Rain falls.")
    assert not off_language("2024: 42", "Rain falls.")  # no language to tell
    # asked to shorten a Chinese text, it swapped Chinese characters for an English phrase
    tea = "绿茶是用山茶属植物的嫩叶制成的，属于非发酵茶类，口感清新。"
    assert off_language("绿茶是用 leaves of Camellia sinensis植物制成的，属于非发酵茶类。", tea)
    assert not off_language("绿茶是用 Camellia sinensis 制成的。", tea)  # a name, two words
    assert not off_language("我们学习 Python and Rust 编程语言。", "我们学习编程语言。",
                            "用中文介绍 Python and Rust")  # the request's own words


def test_a_new_answer_to_a_chinese_request_is_asked_in_chinese() -> None:
    from loops.rewrite import anew_messages
    from rubrics.checks import CheckOutcome

    failed = CheckOutcome(kind="char_count", passed=False, measured="189 Chinese characters",
                          target="at most 100 Chinese characters")
    ask = [{"role": "user", "content": "请给出4条学习建议，总字数在100字以内。"}]
    (asked,) = anew_messages(ask, [failed])
    assert asked["content"].startswith("请给出4条学习建议")
    assert "Write in Chinese (简体中文), the language of the request." in asked["content"]
    assert "- it had 189 Chinese characters; the request asks for at most 100 Chinese " \
        "characters." in asked["content"]

"""Exact changes that meet form checks (`rubrics.checks.conform`): each kind's change meets its
check on hand-made texts and keeps every word, a text it cannot change honestly is left alone,
and a change that would break a check the text met is not made."""

from __future__ import annotations

import re

import pytest

from rubrics.checks import KINDS, Check, conform, run_checks


def check(kind: str, **params) -> Check:
    return Check(kind=kind, params=params, source="user")


def count(relation="exactly", n=3, upper=None):
    return {"relation": relation, "n": n, "upper": upper}


@pytest.mark.parametrize("kind, params, text, want", [
    ("lowercase", {}, "Rain Falls On The City.", "rain falls on the city."),
    ("uppercase", {}, "Rain falls.\n\nSo do we.", "RAIN FALLS.\n\nSO DO WE."),
    ("no_commas", {}, "Rain falls, soft and cold, on 1,000 roofs.",
     "Rain falls soft and cold on 1000 roofs."),
    ("no_commas", {}, "雨落下，城市安静、温柔。", "雨落下 城市安静 温柔。"),
    ("ends_with", {"phrase": "Any questions?"}, "The sky is blue.",
     "The sky is blue.\n\nAny questions?"),
    # a closing line that is the phrase short of its punctuation is replaced, not repeated
    ("ends_with", {"phrase": "Any questions?"}, "The sky is blue.\nany questions",
     "The sky is blue.\nAny questions?"),
    ("starts_with", {"phrase": "Dear Sam,"}, "Thank you for the book.",
     "Dear Sam,\n\nThank you for the book."),
    ("quoted", {}, "Be kind.", '"Be kind."'),
    ("quoted", {}, "“Be kind.", "“Be kind.”"),
    ("quoted", {}, 'He said "hi"', '"He said "hi""'),
    ("title", {}, "# Morning Rain\n\nRain taps the roof.",
     "<<Morning Rain>>\n\nRain taps the roof."),
    ("title", {}, "**Title: Morning Rain**\nRain taps the roof.",
     "<<Morning Rain>>\nRain taps the roof."),
    ("title", {}, "Morning Rain\n\nRain taps the roof.",
     "<<Morning Rain>>\n\nRain taps the roof."),
    ("bullet_count", count(), "Benefits:\n1. Heart\n2) Mood\n  3. Sleep\nThat is all.",
     "Benefits:\n- Heart\n- Mood\n  - Sleep\nThat is all."),
    ("numbered_count", count(), "- Heart\n* Mood\n• Sleep", "1. Heart\n2. Mood\n3. Sleep"),
    # two paragraphs by blank lines where the request divides them with ***
    ("paragraph_count", {**count(n=2), "divider": "***"}, "Roses grow.\n\nTulips too.",
     "Roses grow.\n\n***\n\nTulips too."),
    # prose sentences regrouped, in order, into as many paragraphs as asked, near-even
    ("paragraph_count", {**count(n=2), "divider": None}, "A one. B two. C three.",
     "A one. B two.\n\nC three."),
    ("paragraph_count", {**count(n=3), "divider": "***"}, "Dr. Lee came. She sat.\n\nWe ate!",
     "Dr. Lee came.\n\n***\n\nShe sat.\n\n***\n\nWe ate!"),
    ("paragraph_count", count("at most", 1), "Roses grow.\n\nTulips too.",
     "Roses grow. Tulips too."),
    # in bold, the first sentence of each line first, then the next ones; a list item's mark
    # stays out
    ("highlight_count", count("at least", 2), "Rain fell. It was cold.\n\nWe stayed in.",
     "**Rain fell.** It was cold.\n\n**We stayed in.**"),
    ("highlight_count", count("at least", 3), "# Plan\n1. Wake up early. Eat.",
     "# **Plan**\n1. **Wake up early.** **Eat.**"),
    ("highlight_count", count("exactly", 2), "**Key:** rest.\nSleep well. Eat well.",
     "**Key:** rest.\n**Sleep well.** Eat well."),
])
def test_each_change_meets_its_check_and_keeps_the_words(kind, params, text, want):
    c = check(kind, **params)
    assert not run_checks(text, [c])[0].passed
    changed, met = conform(text, [c])
    assert (changed, met) == (want, (kind,))
    assert run_checks(changed, [c])[0].passed


@pytest.mark.parametrize("kind, params, text", [
    # no title line of its own: a sentence, a lead-in, a one-line text
    ("title", {}, "Sure! Here is a poem\n\nRain taps the roof."),
    ("title", {}, "Rain taps the roof. It is late.\n\nThe street shines."),
    ("title", {}, "Morning Rain"),
    # a list of the wrong length is not restyled: the count needs new words
    ("bullet_count", count(), "1. Heart\n2. Mood"),
    ("numbered_count", count(), "- Heart\n- Mood\n- Sleep\n1. Also this"),
    ("quoted", {}, "   "),
    # paragraphs split by the divider already, too few sentences, or not all prose (a
    # list, a title, a poem's lines, a postscript)
    ("paragraph_count", {**count(n=2), "divider": "***"}, "A.\n\n***\n\nB.\n\n***\n\nC."),
    ("paragraph_count", {**count(n=3), "divider": None}, "A one. B two."),
    ("paragraph_count", {**count(n=2), "divider": None}, "Items:\n- A. B."),
    ("paragraph_count", {**count(n=2), "divider": None}, "<<Rain>>\n\nA one. B two."),
    ("paragraph_count", {**count(n=2), "divider": None}, "Rain falls,\nthe roofs sing."),
    ("paragraph_count", {**count(n=3), "divider": None}, "A one. B two.\n\nP.S. Bye."),
    # too many highlights already, too few sentences, or code
    ("highlight_count", count("at most", 1), "*One.* *Two.*"),
    ("highlight_count", count("at least", 3), "One. Two."),
    ("highlight_count", count("at least", 1), "```\nx = 1\n```"),
])
def test_no_change_where_no_exact_one_exists(kind, params, text):
    assert conform(text, [check(kind, **params)]) == (text, ())


def test_kinds_that_need_new_words_have_no_change():
    needs_words = ("word_count", "char_count", "sentence_count", "keyword",
                   "forbidden_word", "letter_frequency", "json", "json_schema",
                   "language", "xml_tag", "field_marker", "section_count", "heading_count",
                   "placeholder_count", "capital_word_count")
    assert all(KINDS[k].conform is None for k in needs_words)
    text = "A short text, in English."
    c = check("word_count", **count("at least", 100))
    assert conform(text, [c]) == (text, ())


def test_a_change_that_breaks_a_check_the_text_met_is_not_made():
    # wrapping in quotes would end the text with a quote mark, after the closing phrase
    closing = check("ends_with", phrase="Any questions?")
    text = "The sky is blue. Any questions?"
    assert conform(text, [closing, check("quoted")]) == (text, ())
    # adding the phrase would take the text past its word limit
    at_most = check("word_count", **count("at most", 5))
    assert conform("One two three four five", [at_most, closing])[1] == ()


def test_a_change_that_undoes_an_earlier_one_has_it_made_again():
    checks = [check("lowercase"), check("no_commas"), check("ends_with", phrase="Any questions?")]
    changed, met = conform("Rain falls, The City sleeps.", checks)
    assert changed == "rain falls the city sleeps.\n\nany questions?"
    assert met == ("lowercase", "no_commas", "ends_with")
    assert all(o.passed for o in run_checks(changed, checks))


LAYOUT_TEXTS = (
    "Dr. Smith arrived at 5 p.m. on Friday. The U.S. team, e.g. the coach, was late! Why?",
    "Rain fell.\n\nIt was cold, wet and dark. We stayed in and read “Emma.” Then we slept.",
    "雨落下。城市安静！我们回家了？\n\n明天见。",
    "Tips:\n1. Drink water. Often.\n2. Sleep early.\n\nThat is all... for now",
    "# Plan\n\n- Wake up. Stretch.\n- Eat (slowly).",
)


@pytest.mark.parametrize("text", LAYOUT_TEXTS)
@pytest.mark.parametrize("kind, params", [
    ("highlight_count", count("at least", 2)), ("highlight_count", count("exactly", 4)),
    ("paragraph_count", {**count(n=2), "divider": None}),
    ("paragraph_count", {**count(n=3), "divider": "***"}),
    ("paragraph_count", {**count("at most", 1), "divider": None}),
])
def test_layout_changes_keep_every_word_in_order(text, kind, params):
    # a layout change either meets its check with the same words in the same order (the
    # marks it adds aside) or is not made
    c = check(kind, **params)
    changed, met = conform(text, [c])
    if met:
        assert met == (kind,) and run_checks(changed, [c])[0].passed
    else:
        assert changed == text
    words = [w for w in changed.replace("**", "").replace("***", "").split() if w.strip("*")]
    # a paragraph break between two Chinese sentences is the one space a change may add
    assert "".join(words) == "".join(text.split())
    if not re.search(r"[\u3400-\u9fff]", text):
        assert words == text.split()


def test_a_text_that_passes_is_returned_as_it_is():
    checks = [check("lowercase"), check("ends_with", phrase="bye")]
    assert conform("all good, bye", checks) == ("all good, bye", ())


def test_a_postscript_written_inside_the_last_line_is_put_on_its_own():
    from rubrics.checks import Check, conform, run_checks

    ps = Check(kind="postscript", params={"marker": "P.S."})
    text = "See you at noon. P.S. Bring the cake!"
    (before,) = run_checks(text, (ps,))
    assert not before.passed and before.measured == "'P.S.' inside a line, not opening its own"
    assert before.action == "Start a new last line with 'P.S.' for the postscript."
    fixed, met = conform(text, (ps,))
    assert fixed == "See you at noon.\n\nP.S. Bring the cake!" and met == ("postscript",)
    # a P.S. in the middle of the text, followed by another paragraph, is not moved
    assert conform("Hi. P.S. one.\n\nMore text.", (ps,)) == ("Hi. P.S. one.\n\nMore text.", ())


def test_a_failed_check_says_what_to_do_in_words_a_reviser_can_act_on():
    from rubrics.checks import Check, run_checks

    cases = {
        Check(kind="word_count", params={"relation": "at most", "n": 3}): (
            "a b c d e", "Remove at least 2 words: about half of the text."),
        Check(kind="sentence_count", params={"relation": "exactly", "n": 2}): (
            "One. Two. Three. Four.", "Remove at least 2 sentences: keep 2."),
        Check(kind="sentence_count", params={"relation": "between", "n": 3, "upper": 4}): (
            "One.", "Add at least 2 sentences."),
        Check(kind="keyword", params={"word": "leaf", "relation": "at least", "n": 2}): (
            "a leaf", "Add at least 1 uses of the word 'leaf' (this very word, not another "
                      "form of it)."),
        Check(kind="highlight_count", params={"relation": "at least", "n": 2}): (
            "plain", "Add at least 2 highlighted spans (wrap a key phrase of the text in "
                     "asterisks, *like this*)."),
        Check(kind="section_count", params={"relation": "exactly", "n": 2,
                                            "marker": "SECTION"}): (
            "SECTION 1 only", "Add at least 1 sections marked 'SECTION' (start each section "
                              "on its own line with SECTION and its number, SECTION 1)."),
        Check(kind="forbidden_word", params={"word": "very"}): (
            "very good", "Remove every 'very', rewording where needed."),
        Check(kind="ends_with", params={"phrase": "Any questions?"}): (
            "Done.", "Make 'Any questions?' the very last words, with nothing after them."),
    }
    for check, (text, action) in cases.items():
        (outcome,) = run_checks(text, (check,))
        assert not outcome.passed and outcome.action == action
    (passed,) = run_checks("a b", (Check(kind="word_count", params={"relation": "at most",
                                                                     "n": 3}),))
    assert passed.passed and passed.action == ""

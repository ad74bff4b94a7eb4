"""General readings the eleventh development batch showed, each on wordings of its own and on
a near miss: a negation turns a strict bound, a part as the subject of its clause keeps its
length or keyword to itself (a total said after it does not), a verb inside a clause about
why or how is the topic, a dotted abbreviation ends no sentence, sections are counted from
their markers, and a second bound may leave its unit unsaid."""

from __future__ import annotations

import pytest

from rubrics.checks.prepass import prepass


def found(request: str) -> list[tuple[str, dict]]:
    return [(c.kind, c.params) for c in prepass(request)]


def count(kind, relation, n, upper=None, **extra):
    return (kind, {"relation": relation, "n": n, "upper": upper, **extra})


@pytest.mark.parametrize("request_text, expected", [
    # a negation turns a strict bound into the other, inclusive one
    ("Write a memo. It must not have more than 5 paragraphs.",
     [count("paragraph_count", "at most", 5, divider=None)]),
    ("Draft a product page; you shouldn't use more than 2 markdown headings.",
     [count("heading_count", "at most", 2)]),
    ("Write a speech. At no point should it go over 400 words.", [count("word_count", "at most",
                                                                        400)]),
    ("Write a note with more than 3 bullet points.", [count("bullet_count", "at least", 4)]),
    # a part as its clause's subject keeps the length to itself; a total after it does not
    ("Write a blog post. The title should be catchy and no longer than 8 words.", []),
    ("Write a report. Each section should run about 300 words, with the total text at least "
     "1200 words.", [count("word_count", "at least", 1200)]),
    ("Write an essay. It should be at least 500 words.", [count("word_count", "at least", 500)]),
    # the same count, its second bound without a unit
    ("Write an essay of at least 300 words and no more than 450.",
     [count("word_count", "between", 300, 450)]),
    ("Write it in at least 2 paragraphs and at most 4.",
     [count("paragraph_count", "between", 2, 4, divider=None)]),
    # counts in words and approximate counts of parts
    ("Brainstorm three dozen taglines for a bakery as bullet points.",
     [count("bullet_count", "exactly", 36)]),
    ("Tell the story in roughly ten sentences.", [count("sentence_count", "between", 8, 12)]),
    # sections counted from their markers, the marker before or after the count
    ("Write a course outline with between 3 and 5 parts, each opened by 'Week' and a number.",
     [count("section_count", "between", 3, 5, marker="Week")]),
    ("Label the chapters 'Stage 1', 'Stage 2' and 'Stage 3'.",
     [count("section_count", "exactly", 3, marker="Stage")]),
    ("Label the chapters 'Stage 1', 'Stage 2' and so on.", []),
    # (a heading is no marker: 4 parts, each under a heading of its own)
    ("Write a guide in 4 parts, each starting with a heading and a number.",
     [count("section_count", "exactly", 4, marker=None), count("heading_count", "exactly", 4)]),
    # a keyword asked of each part is no keyword of the response
    ("Write 4 bullet points about recycling. Each bullet must include the word 'waste'.",
     [count("bullet_count", "exactly", 4)]),
])
def test_general_readings_of_the_eleventh_batch(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Write a short piece on how some editors avoid the word 'very' in headlines.",
    "Why do so many U.S. teenagers text in all lowercase?",
])
def test_topics_and_parts_give_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Explain how tides work and avoid the word 'moon'.", [("forbidden_word", {"word": "moon"})]),
    ("Describe how a bill becomes law without using the word 'vote'.",
     [("forbidden_word", {"word": "vote"})]),
])
def test_a_clause_of_its_own_after_a_topic_is_still_asked(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, marker", [
    ("Close with a P.P.S. about the weather.", "P.P.S."),
    ("Close with a postscript starting with P.P.S.", "P.P.S"),
    ("Add a P.P.S at the very end.", "P.P.S"),
])
def test_a_pps_keeps_the_period_it_is_written_with(request_text, marker):
    assert found(request_text) == [("postscript", {"marker": marker})]

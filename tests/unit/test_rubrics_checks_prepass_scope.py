"""General readings the development batches written blind to the rules showed, each on
wordings of its own and on a near miss. From the `dv-` batch: a negation turns a strict bound,
a part as the subject of its clause keeps its length or keyword to itself (a total said after
it does not), a verb inside a clause about why or how is the topic, a dotted abbreviation ends
no sentence, sections are counted from their markers, and a second bound may leave its unit
unsaid. From the `d2-` batch: a part as the object of a verb of limiting or after "whose", a
clause of its own after a part's, a word asked in one part, "its" after a part, a form only
permitted, the user's own P.S., a total after a per-item limit, markers listed after a
division, and bounds said after the count."""

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


@pytest.mark.parametrize("request_text, expected", [
    # a clause of its own after a part's subject is the response's again
    ("Write an email to IT. The subject line must include the word 'URGENT', and keep the "
     "whole email under 120 words.", [count("word_count", "at most", 119)]),
    ("Write an email. The subject line must include the word 'URGENT' and be under 8 words.",
     []),
    # a part as the object of a verb of limiting, after "whose", or as "it" after it
    ("Write an email asking for an extension; keep the subject line under 8 words.", []),
    ("Write an email asking for an extension; keep it under 80 words.",
     [count("word_count", "at most", 79)]),
    ("Write a short horror story whose first sentence is under ten words.", []),
    ("Write a newsletter with a title in << >>; make the title a pun and keep it under six "
     "words.", [("title", {})]),
    ("Write a eulogy for my grandmother and hold it to 350 words.",
     [count("word_count", "at most", 350)]),
    # a word asked in one part, a case asked of one part
    ("Write three paragraphs about tea; the word 'mint' must appear in the second paragraph.",
     [count("paragraph_count", "exactly", 3, divider=None)]),
    ("Write three paragraphs about tea; the word 'mint' must appear in the response.",
     [count("paragraph_count", "exactly", 3, divider=None), count("keyword", "at least", 1,
                                                                  word="mint")]),
    ("Write a LinkedIn summary. The first line should be a hook in all caps.", []),
    ("Write a LinkedIn summary. The whole reply should be in all caps.", [("uppercase", {})]),
    # "its" after a part is the part's; after the response, the response's
    ("Write a job ad with 2 sections; the second section must list duties and its first word "
     "should be 'Duties'.", [count("section_count", "exactly", 2, marker=None)]),
    ("Write a poem; its first line should be 'Dawn breaks'.",
     [("starts_with", {"phrase": "Dawn breaks"})]),
    # a total right after a count is no item's
    ("List pros and cons as bullets, each bullet under 15 words and no more than 10 bullets "
     "overall.", [count("bullet_count", "at most", 10)]),
    ("List pros and cons as bullets, each bullet under 15 words.", []),
])
def test_whose_a_reading_is(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Summarize Moby-Dick. If it's easier, feel free to use JSON.", []),
    ("Summarize Moby-Dick. Use JSON.", [("json", {})]),
    ("Write a birthday note. Feel free to add a P.S. if you think it fits.", []),
    ("Write a birthday note. Add a P.S. at the end.", [("postscript", {"marker": "P.S."})]),
    # a P.S. opening a paragraph of the request is the user's own
    ("Write a note to my neighbor.\n\nP.S. keep it under 80 words.",
     [count("word_count", "at most", 79)]),
    ("Write a note to my neighbor. End with a P.S. about the plants.",
     [("postscript", {"marker": "P.S."})]),
])
def test_what_is_only_permitted_or_the_users_own_asks_nothing(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    # a bound said after the count, the unit unsaid
    ("A blurb for a toothbrush. Fifty words, no more.", [count("word_count", "at most", 50)]),
    ("Four bullets, no more, no less: tips for kayaking.", [count("bullet_count", "exactly", 4)]),
    ("Write a bio and keep it just shy of 100 words.", [count("word_count", "at most", 99)]),
    ("Write a cover letter. Cap it at 250 words.", [count("word_count", "at most", 250)]),
    ("Write a cover letter. Keep it at 250 words.", [count("word_count", "between", 200, 300)]),
    ("write a poem, nothing above 100 words", [count("word_count", "at most", 100)]),
    # a floor no number states goes beside a bound of the same count
    ("Use square-bracket placeholders like [Company] where needed, but no more than 3 of them.",
     [count("placeholder_count", "at most", 3)]),
    # sections counted from the markers listed after the division
    ("Write a plan split into Part 1, Part 2 and Part 3.",
     [count("section_count", "exactly", 3, marker="Part")]),
    ("Write a plan split into Part 1, Part 2 and so on.", []),
    ("Write a two-section guide (Part 1, Part 2) to succulents.",
     [count("section_count", "exactly", 2, marker="Part")]),
    ("Outline a novel in sections labelled Chapter 1, Chapter 2 and so on, at most 6 of them.",
     [count("section_count", "at most", 6, marker="Chapter")]),
    ("Compare Part 1 and Part 2 of the film.", []),
    # a spec's "Rules:" label is the response's; a part's label is the part's
    ("Story. Rules: 1) exactly four paragraphs 2) no dialogue",
     [count("paragraph_count", "exactly", 4, divider=None)]),
    ("Story.\n- Intro: exactly two paragraphs", []),
])
def test_bounds_markers_and_labels_of_the_d2_batch(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    # one count read twice: the relation stated first stands
    ("Describe a harbour at dawn, no fewer than 6 sentences long.",
     [count("sentence_count", "at least", 6)]),
    ("Describe a harbour at dawn, 6 sentences long.", [count("sentence_count", "exactly", 6)]),
    # a bare line "phrase" that describes the line gives no ending
    ("Write a limerick. Its last line should be exactly seven words long.", []),
    ("Write a limerick. Its last line should be exactly: And that was the end.",
     [("ends_with", {"phrase": "And that was the end."})]),
    # an English verb of using in a mixed-language rule, negated
    ("Summarise the quarter in two paragraphs and do not mention 'layoffs'.",
     [count("paragraph_count", "exactly", 2, divider=None),
      ("forbidden_word", {"word": "layoffs"})]),
    # a form asked of a song's part
    ("Write a jingle with a refrain. The refrain must be in all caps.", []),
    # the length of a text the request gives, or of one the user must write and asks advice on
    ("Here's a 900-word op-ed I found (below). Summarize its argument for me.", []),
    ("I need to write a 3,000-word report on wetlands. How should I organise it?", []),
    ("I need to write a 300-word bio. Please write it for me.",
     [count("word_count", "between", 240, 360)]),
    # a count after "make it", a limit on oneself, a second word with "the word", caps lock
    ("Write about autumn. Make it 3 paragraphs.",
     [count("paragraph_count", "exactly", 3, divider=None)]),
    ("Limit yourself to three sentences when you explain tides.",
     [count("sentence_count", "at most", 3)]),
    ("Use the word 'frost' at least twice and the word 'ember' exactly once.",
     [count("keyword", "at least", 2, word="frost"), count("keyword", "exactly", 1,
                                                           word="ember")]),
    ("Type the reminder with caps lock on.", [("uppercase", {})]),
    # a language after the text's destination, or before a parenthesis
    ("Write a toast for our team's dinner in Spanish, under 80 words.",
     [("language", {"language": "es"}), count("word_count", "at most", 79)]),
    ("Write a greeting for the card, in German please (all of it).",
     [("language", {"language": "de"})]),
])
def test_readings_of_the_first_phrasings_heldout_set(request_text, expected):
    assert found(request_text) == expected

"""General readings of requirements said other ways than the phrasings name them: a length in
characters asked in English for a Chinese response, the whole reply as JSON, a JSON Schema
after a verb the reply must meet it by, placeholders with no count or one said after them,
the response's language named by an adjective, a clause of its own, the text asked for or the
people it is for, and whose a length is (a line's label, the one text asked for, "each" of the
things counted). Each on wordings of its own and on near misses that must give no check."""

from __future__ import annotations

import pytest

from rubrics.checks.prepass import prepass


def found(request: str) -> list[tuple[str, dict]]:
    return [(c.kind, c.params) for c in prepass(request)]


def count(kind, relation, n, upper=None, **extra):
    return (kind, {"relation": relation, "n": n, "upper": upper, **extra})


def chars(relation, n, upper=None):
    return count("char_count", relation, n, upper)


def language(code):
    return ("language", {"language": code})


JSON = ("json", {})


@pytest.mark.parametrize("request_text, expected", [
    # the unit names Chinese characters, whatever the bound's wording
    ("Please write at least two hundred Chinese characters about your hometown.",
     [chars("at least", 200)]),
    ("A 60-character Chinese ad for our bakery, please.", [chars("between", 48, 72)]),
    ("A short wish for my teacher, in Mandarin, 40 Chinese characters tops.",
     [language("zh"), chars("at most", 40)]),
    # the request asks for Chinese elsewhere: a spec line, "in Chinese", the answer's language
    ("Language: Chinese\nLength: 300-400 characters\nTopic: spring in Hangzhou",
     [language("zh"), chars("between", 300, 400)]),
    ("Describe the Great Wall in Chinese in about 150 characters.",
     [chars("between", 120, 180)]),
    ("Answer in Chinese: why do leaves fall? Roughly 100 characters or so.",
     [language("zh"), chars("between", 80, 120)]),
    ("Write a toast in Chinese for my uncle, fewer than 80 characters.",
     [language("zh"), chars("at most", 79)]),
])
def test_a_length_in_characters_is_chinese_characters_for_a_chinese_response(request_text,
                                                                            expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    # no Chinese response: a platform's limit, another language (char_count counts Han only)
    ("Write an Instagram caption under 150 characters about our new cafe.", []),
    ("Write a poem in Japanese, under 60 characters.", [language("ja")]),
    ("用日语写一段不超过200字的自我介绍。", [language("ja")]),
    # characters of a story, a verse form, a topic, a question
    ("Write a story in Chinese about four characters who share a flat.", [language("zh")]),
    ("Write a seven-character quatrain in Chinese about snow.", [language("zh")]),
    ("Write a short essay on Chinese history in under 300 characters.", []),
    ("How many characters can one Chinese text message hold?", []),
])
def test_no_char_count_without_a_chinese_response_or_a_length(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Reply with a JSON object listing three fruits and their colours.",
    "Respond with a JSON object mapping each month to its number of days.",
    "Your entire output must be a single JSON object with keys name and age.",
    "The answer should consist only of a parseable JSON document.",
    "It has to be pure JSON because a program reads it. List three colours.",
    "Write a short answer to each, and format your entire response as JSON.",
    "Give me just a JSON array of the planets.",
    "JSON only, please: the capitals of the Nordic countries.",
    "Format: JSON\nTask: list four rivers in Africa.",
])
def test_the_whole_reply_as_json_said_other_ways(request_text):
    assert found(request_text) == [JSON]


@pytest.mark.parametrize("request_text", [
    "Explain to a beginner how JSON differs from XML.",
    "Is JSON only used with JavaScript?",
    "I only know a little JSON; what is an array?",
    "Respond with a short explanation of JSON arrays.",
    "The reply must explain what a JSON document is.",
    "Format: JSON or YAML, which should I pick for a config file?",
    "Write a Python script that reads a CSV.\nInput: CSV\nOutput: JSON",
    "Write a short story about a robot that only speaks JSON.",
])
def test_json_as_a_topic_a_choice_or_a_programs_output_is_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, schema", [
    ('List two cities as JSON matching {"type": "array", "items": {"type": "string"}}',
     '{"items": {"type": "string"}, "type": "array"}'),
    ('Return a value that validates against:\n{"anyOf": [{"type": "string"}, '
     '{"type": "number"}]}', '{"anyOf": [{"type": "string"}, {"type": "number"}]}'),
    ('Give one colour, conforming to {"type": "object", "properties": {"name": '
     '{"type": "string"}}}', '{"properties": {"name": {"type": "string"}}, "type": "object"}'),
])
def test_a_schema_after_a_verb_the_reply_meets_it_by_is_json_schema_alone(request_text,
                                                                          schema):
    assert found(request_text) == [("json_schema", {"schema": schema})]


def test_an_example_object_is_no_schema():
    # "type" here is a field of the example, not a JSON Schema type
    assert found('Reply in JSON matching my example {"name": "Ana", "type": "cat"}') == [JSON]


@pytest.mark.parametrize("request_text, expected", [
    # no count: brackets named or shown, a clause of its own, what is left to fill in
    ("Write a lease renewal letter, gaps in [square brackets] for the tenant's details.",
     [count("placeholder_count", "at least", 1)]),
    ("Draft a thank-you email and leave [blanks] in brackets for names.",
     [count("placeholder_count", "at least", 1)]),
    ("Make an invitation template. Whatever the host still has to fill in goes in brackets.",
     [count("placeholder_count", "at least", 1)]),
    # a count referring back past examples in parentheses, or to "each" of them
    ("Write a form letter with placeholders for names and dates (such as [Name] and [Date]), "
     "but no more than 4 of them.", [count("placeholder_count", "at most", 4)]),
    ("Make a vocabulary quiz. Show each blank as [word], and include eight of them.",
     [count("placeholder_count", "exactly", 8)]),
])
def test_placeholders_said_other_ways(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Write a play scene. Stage directions go in square brackets.",
    "What are blanks in brackets used for in forms?",
    "Each section should have placeholders in brackets, two of them.",
    "Why do editors put [sic] inside quotes?",
])
def test_brackets_that_are_no_placeholders_or_a_count_per_part(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, code", [
    ("The reply should be French-language and friendly.", "fr"),
    ("Write him a short birthday note in Polish.", "pl"),
    ("Could you draft a short email in Dutch thanking my landlord?", "nl"),
    ("Please provide the summary in European Portuguese.", "pt"),
    ("Not in English please, use German.", "de"),
    ("Cover letter template in Spanish, please.", "es"),
    ("I need a French caption for this photo of the Seine.", "fr"),
    ("Summarize the plot of Hamlet in Korean for my students.", "ko"),
    ("German please: how do I renew my passport?", "de"),
    # the people the text is for, when they speak one language
    ("My friends are all in Italy; write the invitation in their language.", "it"),
    ("Our buyers are Mexican. Write the product sheet for our Mexican buyers in their own "
     "language.", "es"),
])
def test_the_responses_language_said_other_ways(request_text, code):
    assert found(request_text) == [language(code)]


@pytest.mark.parametrize("request_text", [
    # a dish, a genre, a translation target, words of a language
    "Write a French toast recipe for two.",
    "Write a Chinese poem about the moon.",
    "Give me a German translation of this note: see you soon.",
    "Use French words sparingly in the essay.",
    "Summarize how verbs work in Spanish.",
    # a question about texts in a language
    "Reference letters in French: how formal should they be?",
    # people of several languages, two peoples, a character's language
    "My students are Swiss; write a welcome note in their language.",
    "I have Brazilian and Japanese clients. Write a thank-you note in their language.",
    "Write a story about immigrants in Germany who still dream in their language.",
])
def test_a_language_that_is_not_the_responses(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    # a line's label naming the response's language or the task is no part
    ("In Turkish: describe Istanbul in three sentences.",
     [language("tr"), count("sentence_count", "exactly", 3)]),
    ("Homework: a diary entry in Italian about your weekend, about 150 words.",
     [language("it"), count("word_count", "between", 120, 180)]),
    # a spec line's end closes a count of parts
    ("Task: a flyer for the book fair\n- Layout: three paragraphs\n- Mention the date",
     [count("paragraph_count", "exactly", 3, divider=None)]),
    # the part named is the one text asked for
    ("Write a caption for my beach photo. Keep the caption under 20 words.",
     [count("word_count", "at most", 19)]),
    ("Write a slogan for our gym. The slogan should be under 8 words.",
     [count("word_count", "at most", 7)]),
])
def test_whose_a_length_is(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    # a label naming a part keeps its length, and so does the bare length inside it
    "Write a newsletter.\nHeadline: under 10 words",
    "Write a headline and a short intro; keep the headline to no more than 10 words.",
    "Write a blog post with a title. Keep the title under 10 words.",
    "Write a flyer with a slogan. The slogan should be under 8 words.",
])
def test_a_parts_length_stays_the_parts(request_text):
    assert found(request_text) == []

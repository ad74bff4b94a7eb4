"""The pre-pass reads the kinds the out-of-source set showed weakest by their structure, not by
sentence: a field marker wherever the request writes one, the whole answer in quotes however
the marks and the whole are named, highlights as a count of marked spans, placeholders,
closing lines, capitalised words, lowercase, the response's language, forbidden words and
counts of paragraphs and headings stated as structure. Each family is tested on wordings of
its own, and on content that looks like it."""

from __future__ import annotations

import pytest

from rubrics.checks.prepass import prepass


def found(request: str) -> list[tuple[str, dict]]:
    return [(c.kind, c.params) for c in prepass(request)]


def count(kind, relation, n, upper=None, **extra):
    return (kind, {"relation": relation, "n": n, "upper": upper, **extra})


def field(name):
    return ("field_marker", {"name": name})


@pytest.mark.parametrize("request_text, expected", [
    ("Answer in this shape:\n[[ ## verdict ## ]]\ntrue or false\n[[ ## reason ## ]]\none line",
     [field("verdict"), field("reason")]),
    ("Begin every field with its marker: [[ ## name ## ]] for the product name.",
     [field("name")]),
    ("我的脚本会读取 [[ ## result ## ]] 这一行，请把答案写在它下面。", [field("result")]),
    ("Your input fields are:\n1. `document` (str)\nYour output fields are:\n1. `summary` (str)"
     "\n\n[[ ## document ## ]]\n{document}\n\n[[ ## summary ## ]]\n{summary}\n\n"
     "[[ ## completed ## ]]", [field("summary"), field("completed")]),
    ("[[ ## context ## ]]\nThe sky is blue.\n\nRespond with the corresponding output fields, "
     "starting with the field `[[ ## answer ## ]]`, and then ending with the marker for "
     "`[[ ## completed ## ]]`.", [field("answer"), field("completed")]),
    ("List the two fields [[ ## city ## ]] and [[ ## country ## ]], 2 in all.",
     [field("city"), field("country")]),
])
def test_a_field_marker_the_request_writes_is_kept(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Why does DSPy end every reply with [[ ## completed ## ]]?",
    "Our prompt uses [[ ## input ## ]] markers and the parser chokes on them. Ideas?",
])
def test_a_marker_asked_about_or_in_the_users_own_template_is_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text", [
    "Quotation marks around the entire reply, please.",
    "Open and close your answer with a double quote.",
    "Format: enclosed in quotation marks. Topic: spring.",
    "Put it in speech marks from start to finish.",
    "请在整个回复的首尾加上引号。",
    "全部回答都放到双引号里。",
    "整段 reply 用 inverted commas 括起来。",
])
def test_the_whole_answer_in_quotes_however_marks_and_whole_are_named(request_text):
    assert found(request_text) == [("quoted", {})]


@pytest.mark.parametrize("request_text", [
    "Don't put quotation marks around your answer.",
    "Put quotation marks around the book titles in your answer.",
    "Include a famous quote in your answer.",
    "回答中引用的原话请用引号标出。",
    "不要用引号把整个回答括起来。",
])
def test_quotes_of_a_part_an_example_or_negated_are_no_check(request_text):
    assert found(request_text) == []


def highlights(relation, n, upper=None):
    return [count("highlight_count", relation, n, upper)]


@pytest.mark.parametrize("request_text, expected", [
    ("Use **double asterisks** to emphasize at least three dates.", highlights("at least", 3)),
    ("Include 4 to 6 bolded terms.", highlights("between", 4, 6)),
    ("Make the two key warnings stand out in bold.", highlights("at least", 2)),
    ("Use 3 bold phrases.", highlights("at least", 3)),
    ("请用粗体标注两处重要信息。", highlights("at least", 2)),
    ("用 markdown 斜体强调 at least 2 句话。", highlights("at least", 2)),
    ("最多 bold 三处 key points。", highlights("at most", 3)),
])
def test_highlights_as_a_count_of_spans_and_their_markup(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Highlight three benefits of cycling.",
    "List 3 bold ideas for a startup.",
    "What are the highlights of Berlin?",
    "Write a short poem and make the title bold.",
])
def test_highlights_as_content_or_of_one_part_are_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Draft an offer letter with blanks like [Salary] that HR fills in.",
     [count("placeholder_count", "at least", 1)]),
    ("Use placeholders in square brackets for the client's details.",
     [count("placeholder_count", "at least", 1)]),
    ("请用方括号留出需要填写的地方。", [count("placeholder_count", "at least", 1)]),
    ("A template with [blanks] — include at least 3 of those.",
     [count("placeholder_count", "at least", 3)]),
    ("写个模板，留 4 个空，用 [ ] 表示。", [count("placeholder_count", "exactly", 4)]),
    ("模板中至少要有3个以上的占位符。", [count("placeholder_count", "at least", 3)]),
])
def test_placeholders_with_or_without_a_count(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Use two empty slots in the schedule for breaks.",
    "What does [sic] mean in a quotation?",
    "我有两个空瓶子，可以做什么手工？",
    "Give me some placeholder text for a landing page.",
])
def test_placeholders_as_content_are_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Explain why leaves fall, and finish with 'Autumn always returns.'",
     [("ends_with", {"phrase": "Autumn always returns."})]),
    ("The toast should be closed with the words \"To the happy couple!\"",
     [("ends_with", {"phrase": "To the happy couple!"})]),
    ("'That's all for today.' must be the final sentence.",
     [("ends_with", {"phrase": "That's all for today."})]),
    ("The very last thing in the email is the phrase 'Talk soon'.",
     [("ends_with", {"phrase": "Talk soon"})]),
    ("回答以“感谢您的阅读”这句话作为结束语。", [("ends_with", {"phrase": "感谢您的阅读"})]),
    ("全文最后一句话请写成：下次见。", [("ends_with", {"phrase": "下次见。"})]),
    ("开头第一句必须是：各位好。然后介绍活动安排。", [("starts_with", {"phrase": "各位好。"})]),
    ("The story should be started with 'Once upon a time'.",
     [("starts_with", {"phrase": "Once upon a time"})]),
])
def test_closing_and_opening_lines_in_passive_subject_and_chinese_structures(request_text,
                                                                              expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "How does the movie end, and why does it end with a wedding?",
    "Each paragraph should be ended with a question.",
    "Each verse must be closed with the line 'Oh my love'.",
    "故事的结尾是：主人公回到了家乡。请帮我续写中间部分。",
])
def test_endings_of_a_part_or_of_the_story_told_are_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Capitalize at least two words for emphasis.", [count("capital_word_count", "at least", 2)]),
    ("Between 3 and 5 words should appear in all caps.",
     [count("capital_word_count", "between", 3, 5)]),
    ("Up to two words can be typed in uppercase.", [count("capital_word_count", "at most", 2)]),
    ("要有 at most 2 个全大写的单词。", [count("capital_word_count", "at most", 2)]),
    ("Casing: lowercase.", [("lowercase", {})]),
    ("Keep every letter in lowercase.", [("lowercase", {})]),
    ("dont use any capital letters", [("lowercase", {})]),
    ("Answer in one or two sentences.", [count("sentence_count", "between", 1, 2)]),
])
def test_case_and_capitalised_words_in_more_structures(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Capitalize the first word of every sentence.",
    "Why is English title case capitalized so oddly?",
    "Case: a customer dispute over a refund. Write the reply letter.",
    "Teach me when to use capital letters.",
    "What is the capital of Peru?",
])
def test_case_as_a_topic_or_of_one_part_is_no_check(request_text):
    assert found(request_text) == []


def language(code):
    return ("language", {"language": code})


@pytest.mark.parametrize("request_text, expected", [
    ("Describe Lisbon in three sentences, em português.",
     [count("sentence_count", "exactly", 3), language("pt")]),
    ("Please respond in the official language of Brazil.", [language("pt")]),
    ("Your caption must be written entirely in Dutch.", [language("nl")]),
    ("介绍一下故宫，output 必须用 Japanese。", [language("ja")]),
    ("Write a toast for my dad in Italian so the whole family understands.", [language("it")]),
    ("Explain black holes, in Spanish please.", [language("es")]),
])
def test_the_responses_language_in_any_construction(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "How do you say 'thank you' en français?",
    "What is the official language of Brazil?",
    "My essay is in French; can you check the grammar?",
    "She moved to Japan and now teaches in Japanese schools.",
])
def test_a_language_asked_about_or_describing_the_users_text_is_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, word", [
    ("Cut out the word 'just' completely.", "just"),
    ("Your essay should not contain the word \"utilize\".", "utilize"),
    ("Write it without the phrase 'at the end of the day'.", "at the end of the day"),
    ("Don't let the word 'basically' slip in.", "basically"),
    ("Keep 'honestly' out of the reply.", "honestly"),
    ("Do you think you could write a story without the word 'the'?", "the"),
])
def test_forbidden_words_in_more_structures(request_text, word):
    assert found(request_text) == [("forbidden_word", {"word": word})]


@pytest.mark.parametrize("request_text", [
    "In the game, players must never say the word 'red'.",
    "Why do editors cut out the word 'very'?",
])
def test_words_someone_else_avoids_or_asked_about_are_no_check(request_text):
    assert found(request_text) == []


def paragraphs(relation, n, upper=None, divider=None):
    return count("paragraph_count", relation, n, upper, divider=divider)


@pytest.mark.parametrize("request_text, expected", [
    ("3 paras tops, what's the best way to learn guitar", [paragraphs("at most", 3)]),
    ("Three sentences are required. Topic: the moon.", [count("sentence_count", "exactly", 3)]),
    ("Layout: 4 paragraphs. Topic: tea.", [paragraphs("exactly", 4)]),
    ("字数不限，段落控制在5段以内。", [paragraphs("at most", 5)]),
    ("Arrange the guide under five markdown headings.", [count("heading_count", "exactly", 5)]),
    ("Write it in 3 sections, each with its own ## heading.",
     [count("section_count", "exactly", 3, marker=None), count("heading_count", "exactly", 3)]),
    ("分为三个部分，每部分都要有小标题。",
     [count("section_count", "exactly", 3, marker=None), count("heading_count", "exactly", 3)]),
    ("Requirements:\n- numbered list\n- 6 steps\nTask: brewing coffee",
     [count("numbered_count", "exactly", 6)]),
])
def test_counts_of_parts_stated_as_structure(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Write a note to the 3 departments, each with its own manager.",
    "How many paragraphs should a blog post have?",
    "Requirements:\n- numbered list\nTask: brewing coffee in 6 easy moves",
])
def test_parts_that_are_content_or_asked_about_are_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("the entire output goes in double quotes", [("quoted", {})]),
    ("Your response must begin and end with a quotation mark.", [("quoted", {})]),
    ("用双引号包住整个回答。", [("quoted", {})]),
    ("Use *asterisks* to highlight key points.", highlights("at least", 1)),
    ("用星号标出关键词。", highlights("at least", 1)),
    ("Please include at least two *highlighted sections*.", highlights("at least", 2)),
    ("Close out the email with \"Best, Dana\".", [("ends_with", {"phrase": "Best, Dana"})]),
    ("结尾要写：祝好。", [("ends_with", {"phrase": "祝好。"})]),
    ("Respond in Deutsch.", [language("de")]),
    ("Answer in Español, please.", [language("es")]),
    ("Language: fr", [language("fr")]),
    ("I need this in French.", [language("fr")]),
    ("Make the whole reply Spanish.", [language("es")]),
    ("Make sure 'synergy' doesn't appear anywhere.", [("forbidden_word", {"word": "synergy"})]),
    ("Make sure 'synergy' doesn't appear more than twice.",
     [count("keyword", "at most", 2, word="synergy")]),
])
def test_the_same_families_in_the_words_of_other_writers(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Write a story about a girl who never uses capital letters.",
    "Summarize the highlights of the 2024 Olympics.",
    "Why is German grammar so hard?",
    "What does the ## symbol mean in markdown?",
    "在markdown里怎么加粗文字？",
    "What's the difference between inverted commas and speech marks?",
    "Language: a bridge between cultures. Write an essay on that theme.",
    "请用markdown标出标题。",
])
def test_content_in_the_words_of_other_writers_is_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Compose the letter in formal Japanese.", [language("ja")]),
    ("Answer me in plain English.", [language("en")]),
    ("Make 'Goodnight, moon.' the final sentence.",
     [("ends_with", {"phrase": "Goodnight, moon."})]),
])
def test_a_register_before_the_language_and_the_phrase_made_the_last_line(request_text,
                                                                          expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("帮我写个 caption，全部 lowercase。", [("lowercase", {})]),
    ("用 English 回答，不要用大写。", [language("en"), ("lowercase", {})]),
    ("这篇英文文章的结尾是“See you”，帮我分析一下。", []),
    ("My essay ends with 'The end.' Please proofread it.", []),
    ("请解释一下什么是全大写字母。", []),
])
def test_lowercase_in_mixed_wordings_and_a_given_texts_ending(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Ensure the response is written in its entirety in Spanish.", [language("es")]),
    ("Give it a title in double angular brackets, and the whole thing should be in double "
     "quotes.", [("title", {}), ("quoted", {})]),
    ("The dialogue should be in quotes, the narration not.", []),
])
def test_formal_paraphrases_of_the_whole(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Bold text: at least 2 phrases.", highlights("at least", 2)),
    ("Highlights: 2 (markdown bold).", highlights("at least", 2)),
    ("Use bold for the three most important terms.", highlights("at least", 3)),
    ("Put a few key words in **bold**.", highlights("at least", 1)),
    ("Emphasize the main idea with italics.", highlights("at least", 1)),
    ("Mark up at least 3 key phrases in bold.", highlights("at least", 3)),
    ("给重要的内容加粗。", highlights("at least", 1)),
    ("Placeholders like [name] should appear at least twice.",
     [count("placeholder_count", "at least", 2)]),
    ("Make it a template with [brackets] for the variable parts.",
     [count("placeholder_count", "at least", 1)]),
    ("Use at least 4 bracketed variables, e.g. [DATE].",
     [count("placeholder_count", "at least", 4)]),
    ("Ending: \"See you on Saturday!\"", [("ends_with", {"phrase": "See you on Saturday!"})]),
    ("Close with this line exactly: Thanks, Priya", [("ends_with", {"phrase": "Thanks, Priya"})]),
    ("Write some words in ALL CAPS — at least 3.", [count("capital_word_count", "at least", 3)]),
])
def test_labelled_uncounted_and_trailing_counts(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Name 3 variables in Python, like x[0].",
    "Highlights: 3 museums and a beach day.",
    "Emphasize the benefits with examples.",
    "Highlight the pros and cons in a table.",
])
def test_counts_and_marks_that_are_content_stay_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Respond with a 4-item bulleted list.", [count("bullet_count", "exactly", 4)]),
    ("Write a 3-item unordered list.", [count("bullet_count", "exactly", 3)]),
    ("Write a 5-step ordered list.", [count("numbered_count", "exactly", 5)]),
    ("Use dashes for a list of 5 points.", [count("bullet_count", "exactly", 5)]),
    ("Add a markdown header for each of the 4 sections.", [count("heading_count", "exactly", 4)]),
    ("Give each of the 3 parts its own heading.", [count("heading_count", "exactly", 3)]),
    ("Explain this to me — in Dutch.", [language("nl")]),
    ("Words to avoid: 'cheap', 'deal'.",
     [("forbidden_word", {"word": "cheap"}), ("forbidden_word", {"word": "deal"})]),
])
def test_list_sizes_headings_per_part_a_dashed_language_and_words_to_avoid(request_text,
                                                                           expected):
    assert found(request_text) == expected


def test_a_pasted_texts_closing_section_is_no_closing_line():
    request = ("请帮我润色下面这篇报告：\n……\n结语：\n机器学习为桥梁监测带来了新的可能性。\n"
               "开场白：各位同学好。")
    assert found(request) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Describe a playground at break time (wrapped in double quotes).", [("quoted", {})]),
    ("Inside one pair of double quotes, write a product description.", [("quoted", {})]),
    ("Offer advice on a speech (written in French).", [language("fr")]),
    ("List party ideas (with 5 or more fully capitalised words).",
     [count("capital_word_count", "at least", 5)]),
    ("Stress at least 2 words by writing them in block capitals.",
     [count("capital_word_count", "at least", 2)]),
    ("Without ever writing \"actually\", write a farewell speech.",
     [("forbidden_word", {"word": "actually"})]),
    ("Use markdown emphasis (*text*) on at least 2 phrases.", highlights("at least", 2)),
    ("Put at least three parts of your answer in bold using **double asterisks**.",
     highlights("at least", 3)),
    ("Write a poem (marking 2 or more phrases in *italics* or **bold**).",
     highlights("at least", 2)),
    ("Every letter of your reply should be lowercase, even at the start of a sentence.",
     [("lowercase", {})]),
    ("Without a single capital letter, describe a campfire.", [("lowercase", {})]),
    ("Every letter must be a capital; no lowercase letters at all.", [("uppercase", {})]),
])
def test_fragments_and_subjects_of_another_writers_templates(request_text, expected):
    assert found(request_text) == expected

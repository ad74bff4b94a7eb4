"""The deterministic pre-pass: common English and Chinese phrasings become typed checks that
quote the request, and the labelled WritingBench queries keep their measured floor."""

from __future__ import annotations

import pytest

from bench.checks_extraction import SHORT, load, score
from rubrics.checks.prepass import prepass


def found(request: str) -> list[tuple[str, dict]]:
    return [(c.kind, c.params) for c in prepass(request)]


def words(relation, n, upper=None):
    return ("word_count", {"relation": relation, "n": n, "upper": upper})


def chars(relation, n, upper=None):
    return ("char_count", {"relation": relation, "n": n, "upper": upper})


@pytest.mark.parametrize("request_text, expected", [
    ("Write an essay of at least 300 words.", [words("at least", 300)]),
    ("Keep it to no more than 200 words.", [words("at most", 200)]),
    ("The length should be between 1000 and 1500 words.", [words("between", 1000, 1500)]),
    ("approximately 3,000 words in length", [words("between", 2400, 3600)]),
    ("Write a 500-word essay.", [words("between", 400, 600)]),
    ("Answer in exactly 50 words.", [words("exactly", 50)]),
    ("Write it in 3 paragraphs.", [("paragraph_count", {"relation": "exactly", "n": 3,
                                                        "upper": None, "divider": None})]),
    ("Use exactly 4 bullet points.", [("bullet_count", {"relation": "exactly", "n": 4,
                                                         "upper": None})]),
    ("Your response must have 4 sections. Mark the beginning of each section with SECTION X.",
     [("section_count", {"relation": "exactly", "n": 4, "upper": None, "marker": "SECTION"})]),
    ("Your entire response should be in English, and in all lowercase letters.",
     [("language", {"language": "en"}), ("lowercase", {})]),
    ("In your entire response, refrain from the use of any commas.", [("no_commas", {})]),
    ("Wrap your entire response with double quotation marks.", [("quoted", {})]),
    ('End your response with "Any questions?". No other words should follow.',
     [("ends_with", {"phrase": "Any questions?"})]),
    ("Include a title wrapped in double angular brackets, i.e. <<title>>.", [("title", {})]),
    ("At the end of your response, please add a postscript starting with P.S.",
     [("postscript", {"marker": "P.S."})]),
    ("Your entire output should be in JSON format.", [("json", {})]),
    ('Include the keywords "river" and "stone".',
     [("keyword", {"word": "river", "relation": "at least", "n": 1, "upper": None}),
      ("keyword", {"word": "stone", "relation": "at least", "n": 1, "upper": None})]),
    ('Do not include the words "cheap" or "free".',
     [("forbidden_word", {"word": "cheap"}), ("forbidden_word", {"word": "free"})]),
    ("请写一篇不少于800字的文章。", [chars("at least", 800)]),
    ("篇幅控制在300字以内。", [chars("at most", 300)]),
    ("字数在500字左右。", [chars("between", 400, 600)]),
    ("字数控制在5000到8000字。", [chars("between", 5000, 8000)]),
    ("写一篇2500字以上的攻略。", [chars("at least", 2500)]),
    ("请写一篇约3000字的报告。", [chars("between", 2400, 3600)]),
    ("须分为场景介绍、细节分析、历史对照、设计评价四个部分。",
     [("section_count", {"relation": "exactly", "n": 4, "upper": None, "marker": None})]),
    ("文章以“谢谢大家”结尾。", [("ends_with", {"phrase": "谢谢大家"})]),
    ("全文不要使用逗号。", [("no_commas", {})]),
    ("请以JSON格式输出。", [("json", {})]),
    ("请用英文撰写。", [("language", {"language": "en"})]),
    ("适当植入'闺蜜搭配''品质生活'等关键词。",
     [("keyword", {"word": "闺蜜搭配", "relation": "at least", "n": 1, "upper": None}),
      ("keyword", {"word": "品质生活", "relation": "at least", "n": 1, "upper": None})]),
    ('Write it in all lowercase letters and end it with the exact phrase "See you soon!"',
     [("lowercase", {}), ("ends_with", {"phrase": "See you soon!"})]),
    ("Write it all in capitals.", [("uppercase", {})]),
    # bold in a text answer can only be markdown
    ("文案需分段落，重点信息加粗。", [("highlight_count", {"relation": "at least", "n": 1,
                                                   "upper": None})]),
    ("Use clear headings and bold important content.",
     [("highlight_count", {"relation": "at least", "n": 1, "upper": None})]),
])
def test_phrasings(request_text, expected):
    assert found(request_text) == expected


def count(kind, relation, n, **extra):
    return (kind, {"relation": relation, "n": n, "upper": None, **extra})


@pytest.mark.parametrize("request_text, expected", [
    ("Write a 300+ word summary. Highlight at least 3 sections with markdown, i.e. "
     "*highlighted section*.", [words("at least", 300), count("highlight_count", "at least", 3)]),
    ("Answer with less than 50 words.", [words("at most", 49)]),
    ("Write more than 200 words.", [words("at least", 201)]),
    ("字数超过500字，少于1000字。", [chars("between", 501, 999)]),
    ("There should be 2 paragraphs. Paragraphs are separated by the markdown divider: ***",
     [count("paragraph_count", "exactly", 2, divider="***")]),
    ("In your response, the word 'hope' should appear at least 3 times.",
     [count("keyword", "at least", 3, word="hope")]),
    ("In your response, the letter q should appear less than 5 times.",
     [count("letter_frequency", "at most", 4, letter="q")]),
    ("In your response, words with all capital letters should appear at least 10 times.",
     [count("capital_word_count", "at least", 10)]),
    ("Finish your response with this exact phrase 'Is there anything else I can help with?'.",
     [("ends_with", {"phrase": "Is there anything else I can help with?"})]),
    ("Include keywords pleasure, sensual in the response. Do not include keywords mask, glove "
     "in the response.", [count("keyword", "at least", 1, word="pleasure"),
                          count("keyword", "at least", 1, word="sensual"),
                          ("forbidden_word", {"word": "mask"}),
                          ("forbidden_word", {"word": "glove"})]),
    ("Your entire response should be in English, capital letters only.",
     [("language", {"language": "en"}), ("uppercase", {})]),
    ("The response must contain at least 2 placeholders represented by square brackets, such "
     "as [address].", [count("placeholder_count", "at least", 2)]),
    ("Respond with the corresponding output fields, starting with the field "
     "`[[ ## reasoning ## ]]`, then `[[ ## answer ## ]]`, and then ending with the marker for "
     "`[[ ## completed ## ]]`.", [("field_marker", {"name": "reasoning"}),
                                  ("field_marker", {"name": "answer"}),
                                  ("field_marker", {"name": "completed"})]),
    ("Put your final answer inside <answer></answer> tags.", [("xml_tag", {"tag": "answer"})]),
    ('Return JSON matching this JSON schema: {"type": "object", "properties": {"title": '
     '{"type": "string"}}, "required": ["title"]}',
     [("json_schema", {"schema": '{"properties": {"title": {"type": "string"}}, '
                                 '"required": ["title"], "type": "object"}'})]),
])
def test_instruction_following_phrasings(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Write 3 detailed reviews (800-1000 words each).",
    "- Main slogan (10-15 words)\n- Sub-slogan (15-20 words)",
    "每个帖文篇幅控制在800-1200字。",
    "请写一段产品描述。",  # 一段 is "a piece", not one paragraph
    "Write a commendation speech about an officer with 20 years of service.",
    "Highlight its core selling points.",  # stress them in the text, not a markdown span
])
def test_no_check_where_the_request_states_none_for_the_whole_response(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text", [
    # on a labelled line, the label's part
    "内容格式需遵循：\n- 标题：简洁有力，20字以内\n- 开场：1-2句引言",
    "Title: no more than 10 words",
    # in parentheses right after a part's name, in an enumeration or on a list line
    "材料结构要求：引言（300字）、主要事迹（2000字左右，分3-4个小标题）、获得成效与荣誉（200字）",
    "- Call to action (about 50 words): contact details and how to register",
    # of each of the several texts the request asks for
    "请为一个瑜伽APP撰写20条用户评价。评论长度在30-80字之间。",
    "Write 5 product reviews. Keep them under 60 words.",
    # parts on top of which introductory and concluding sections are asked for
    "Write an article divided into four chapters. Include introductory and concluding "
    "sections of about 200 words each.",
    # in the first clause of a numbered item of a list of contents
    "需要包含以下内容：1) 活动规划需包含课堂礼仪、社交礼仪、日常礼仪和公共礼仪四大板块；"
    "2) 每个板块设计2-3个活动",
])
def test_a_length_or_count_of_one_named_part_is_not_the_responses(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    # a label that names the length, the requirements or the body, or a total on the line
    ("- 字数：不少于800字", [chars("at least", 800)]),
    ("Length: about 500 words", [words("between", 400, 600)]),
    ("- 标题：简洁有力，总字数不少于800字", [chars("at least", 800)]),
    # in parentheses after the text asked for, or with no part's name before them
    ("请写一篇关于春天的散文（2000字左右）", [chars("between", 1600, 2400)]),
    ("1. 写一篇文章（不少于800字）", [chars("at least", 800)]),
    ("The essay (about 500 words) should be formal.", [words("between", 400, 600)]),
    # one text asked for, with items inside it; several texts with a total
    ("请写一篇文章，包括3条建议，1200字左右。", [chars("between", 960, 1440)]),
    ("撰写10条微博文案，总字数不超过1000字。", [chars("at most", 1000)]),
    ("Write 3 paragraphs, about 300 words.",
     [count("paragraph_count", "exactly", 3, divider=None), words("between", 240, 360)]),
    # the introduction and conclusion among the N parts
    ("Divide the story into four parts: the encounter, flashbacks, inner conflict, and "
     "conclusion.", [count("section_count", "exactly", 4, marker=None)]),
    # in a later clause of a contents item, or in a list of requirements
    ("需包含以下具体内容：1) 感谢导师；2) 提到参与的项目，以及获得的经验，1200字左右。",
     [chars("between", 960, 1440)]),
    ("具体要求如下：1) 分为四个部分：背景、目标、措施、保障",
     [count("section_count", "exactly", 4, marker=None)]),
])
def test_a_length_or_count_of_the_whole_response_is_still_found(request_text, expected):
    assert found(request_text) == expected


def test_each_check_quotes_the_request_words_it_came_from():
    request = "请写一篇不少于800字的文章，分为三个部分，以“谢谢”结尾。"
    quotes = [c.quote for c in prepass(request)]
    assert quotes == ["不少于800字", "分为三个部分", "以“谢谢”结尾"]
    assert all(q in request for q in quotes)
    assert {c.source for c in prepass(request)} == {"prepass"}


def test_a_stronger_phrase_wins_over_the_bare_number_inside_it():
    assert found("字数不少于1500字") == [chars("at least", 1500)]
    assert found("200-300字左右的文案") == [chars("between", 200, 300)]


def test_labelled_writingbench_queries_keep_the_measured_floor():
    """Measured on tests/data/checks (a development set: see its SOURCE.md): recall 1.0,
    precision 1.0 overall; the floors leave room for a rule change, not for a regression."""
    figures = score(load(), lambda row: prepass(row["query"]))
    assert figures["all"]["queries"] >= 60 and figures["all"]["labels"] >= 50
    assert figures["all"]["recall"] >= 0.95 and figures["all"]["precision"] >= 0.95
    for language in ("en", "zh"):
        assert figures[language]["recall"] >= 0.9
        assert figures[language]["precision"] >= 0.9


def keyword(word, relation="at least", n=1):
    return count("keyword", relation, n, word=word)


@pytest.mark.parametrize("request_text, expected", [
    # bullets and numbered items: a count the request says is a list
    ("List exactly 3 benefits of walking as markdown bullet points.",
     [count("bullet_count", "exactly", 3)]),
    ("Give me five tips as bullet points.", [count("bullet_count", "exactly", 5)]),
    ("Provide 5 bullet points about dogs.", [count("bullet_count", "exactly", 5)]),
    ("Write 4 bulleted tips for sleeping well.", [count("bullet_count", "exactly", 4)]),
    ("Give 4 numbered steps for baking simple bread.", [count("numbered_count", "exactly", 4)]),
    ("List three reasons in a numbered list.", [count("numbered_count", "exactly", 3)]),
    ("Give a numbered list of 5 tips.", [count("numbered_count", "exactly", 5)]),
    ("Write a bulleted list with at least 4 items.", [count("bullet_count", "at least", 4)]),
    ("请用三个要点介绍北京，使用markdown列表。", [count("bullet_count", "exactly", 3)]),
    ("列出至少3条建议，使用无序列表。", [count("bullet_count", "at least", 3)]),
    ("请用一个列表列出五个要点。", [count("bullet_count", "exactly", 5)]),
    ("请给出4条学习建议，用数字编号列出。", [count("numbered_count", "exactly", 4)]),
    ("用有序列表列出5条注意事项。", [count("numbered_count", "exactly", 5)]),
    # a length in a hyphenated adjective; a bound after the unit; "limit it to"
    ("Write a two-sentence note inviting a colleague to coffee.",
     [count("sentence_count", "exactly", 2)]),
    ("Write a 3-paragraph essay.", [count("paragraph_count", "exactly", 3, divider=None)]),
    ("Answer in 3 sentences or fewer.", [count("sentence_count", "at most", 3)]),
    ("Write 5 sentences or more.", [count("sentence_count", "at least", 5)]),
    ("Limit your answer to 3 sentences.", [count("sentence_count", "at most", 3)]),
    ("Keep your response to 100 words.", [words("at most", 100)]),
    ("用三句话介绍长城。", [count("sentence_count", "exactly", 3)]),
    ("回答不超过两句话。", [count("sentence_count", "at most", 2)]),
    # words that must appear, how often, and words that must not
    ('Include the word "leaf" at least 2 times.', [keyword("leaf", "at least", 2)]),
    ('Mention the word "forest" at least once.', [keyword("forest")]),
    ('Use the words "sun" and "moon" at least twice.',
     [keyword("sun", "at least", 2), keyword("moon", "at least", 2)]),
    ('Make sure the word "hope" appears at least 3 times.', [keyword("hope", "at least", 3)]),
    ("文章中必须包含关键词“环保”。", [keyword("环保")]),
    ("“创新”一词至少出现3次。", [keyword("创新", "at least", 3)]),
    ('Describe a city street without using the word "car".', [("forbidden_word", {"word": "car"})]),
    ('Describe a pizza without using the words "cheese" or "tomato".',
     [("forbidden_word", {"word": "cheese"}), ("forbidden_word", {"word": "tomato"})]),
    ('Avoid the words "cheap", "free" and "bargain".',
     [("forbidden_word", {"word": w}) for w in ("cheap", "free", "bargain")]),
    ('The word "very" should not appear in your response.', [("forbidden_word", {"word": "very"})]),
    ("不要使用“我认为”这个词。", [("forbidden_word", {"word": "我认为"})]),
    # letters and all-capital words
    ('Write a sentence in which the letter "r" appears at least 5 times.',
     [count("letter_frequency", "at least", 5, letter="r")]),
    ("Use the letter q at least 3 times.", [count("letter_frequency", "at least", 3, letter="q")]),
    ("Use words in all capital letters at least 2 times.",
     [count("capital_word_count", "at least", 2)]),
    ("Your response should contain at least 3 words in all capital letters.",
     [count("capital_word_count", "at least", 3)]),
    ("Use at least 2 all-caps words.", [count("capital_word_count", "at least", 2)]),
    # the closing and opening phrase
    ('Use only lowercase letters and end with the exact phrase "the end."',
     [("lowercase", {}), ("ends_with", {"phrase": "the end."})]),
    ('Your email should end with "Best regards".', [("ends_with", {"phrase": "Best regards"})]),
    ("Finish your response with this exact phrase: See you soon!",
     [("ends_with", {"phrase": "See you soon!"})]),
    ("Finish your response with this exact phrase Any other questions?. No other words should "
     "follow this phrase.", [("ends_with", {"phrase": "Any other questions?"})]),
    ('Start with the word "Once".', [("starts_with", {"phrase": "Once"})]),
    # commas and language
    ("Explain it without any commas.", [("no_commas", {})]),
    ("Use no commas.", [("no_commas", {})]),
    ("Do not include a single comma.", [("no_commas", {})]),
    ("避免使用逗号。", [("no_commas", {})]),
    ("Your answer must be written in French.", [("language", {"language": "fr"})]),
    ("Respond in Spanish only.", [("language", {"language": "es"})]),
    ("写一首短诗。回答请使用中文。", [("language", {"language": "zh"})]),
    ("全文用英文写。", [("language", {"language": "en"})]),
])
def test_short_instruction_phrasings(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    # a count of items that are not said to be a list is no check
    ("Design 10 posters for the campaign.", []),
    ("Give 4 steps for baking bread.", []),
    ("请给出5条建议。", []),
    ("用表格列出3项数据。", []),
    # a range is a count between its ends; an item of several parts, an ordinal: no count
    ("Summarize the article in 3-5 bullet points.",
     [count("bullet_count", "between", 3, upper=5)]),
    ("Use between 3 and 5 bullet points.", [count("bullet_count", "between", 3, upper=5)]),
    ("For each product, list 3 features as bullet points.", []),
    ("设计10张海报，每张海报的文案用列表列出三个卖点。", []),
    ("正文：3-5个核心观点，使用列表。", []),
    ("第三个要点用列表展开。", []),
    ("Write 3 paragraphs about cats with bullet points.",
     [count("paragraph_count", "exactly", 3, divider=None)]),
    ("Write a multi-sentence note.", []),
    ("Write a one-sentence caption for each photo.", []),
    ("请用一段话描述。", []),
    # a word, a letter or capitals that are not counted or not required
    ('Do not use the word "car".', [("forbidden_word", {"word": "car"})]),
    ('Explain the term "blockchain".', []),
    ("Write a letter that appears at least 5 times in the story.", []),
    ("Write all words in all capital letters.", [("uppercase", {})]),
    ("Write a short reply in all capital letters.", [("uppercase", {})]),
    # a closing that is no phrase; commas allowed; a translation target
    ("End with a question.", []),
    ("Begin each paragraph with the word \"Next\".", []),
    ("Use commas sparingly.", []),
    ("Translate the text into English.", []),
    ("介绍中英文课程比例。", []),
])
def test_near_misses_of_the_short_instruction_phrasings(request_text, expected):
    assert found(request_text) == expected


def test_short_verifiable_requests_keep_the_measured_floor():
    """Measured on tests/data/checks/verifiable_short.jsonl (also a development set): recall
    and precision 1.0; the floors leave room for a rule change, not for a regression."""
    figures = score(load(SHORT), lambda row: prepass(row["query"]))
    assert figures["all"]["queries"] >= 36 and figures["all"]["labels"] >= 50
    assert figures["all"]["recall"] >= 0.95 and figures["all"]["precision"] >= 0.95


@pytest.mark.parametrize("request_text", [
    # a length said to be for one named part, after or before the length
    "Write a video script with approximately 4,000 words for the main analysis section.",
    "The introduction section should be about 200 words.",
    "Write the report, with the conclusion part of at most 100 words.",
    # a length of each of several versions
    "长版广告语字数控制在50字以内，短版广告语字数控制在15字以内，每个版本提供3-5个方案。",
    "Write a long version under 50 words and a short version under 15 words.",
    "Provide two versions of the slogan, no more than 15 words for the short version.",
    # a paragraph count of one named part
    "正文部分4-5段。",
])
def test_a_length_of_one_named_part_or_version_is_not_the_responses(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    # the part named is the body; plural parts read as a total
    ("Write an essay of about 800 words for the main body section.",
     [words("between", 640, 960)]),
    ("The main body section should be no more than 800 words.", [words("at most", 800)]),
    ("Write 1500 words in the following sections: background, method, results.",
     [words("between", 1200, 1800)]),
    ("The essay should be about 200 words.", [words("between", 160, 240)]),
    # one version asked for, or a total over the versions
    ("Write a short version of the story in about 100 words.", [words("between", 80, 120)]),
    ("请写一段简短版本的介绍，控制在100字以内。", [chars("at most", 100)]),
    ("请提供中文版和英文版，总字数不超过300字。", [chars("at most", 300)]),
    # N main / key parts, and ranges of paragraphs in both languages
    ("Must include three main parts: opening introduction, main analysis, and closing summary.",
     [count("section_count", "exactly", 3, marker=None)]),
    ("The article is divided into 4 key sections.",
     [count("section_count", "exactly", 4, marker=None)]),
    ("Write it in 4-5 paragraphs.",
     [("paragraph_count", {"relation": "between", "n": 4, "upper": 5, "divider": None})]),
    ("字数要求2000字左右，分4-5个自然段。",
     [chars("between", 1600, 2400),
      ("paragraph_count", {"relation": "between", "n": 4, "upper": 5, "divider": None})]),
    ("全文分3个自然段。", [count("paragraph_count", "exactly", 3, divider=None)]),
])
def test_a_length_or_count_of_the_whole_beside_parts_and_versions(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Write three main points about the topic.",  # points are not parts
    "本次考试满分4-5段。",  # 满分 is a full score, not "divide into"
])
def test_near_misses_of_parts_and_paragraph_ranges(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    # the parts' lengths lie wholly below the total's floor: only the total is the response's
    ("写一篇文章，全文1000-1200字。开头100字左右，中间600-700字，结尾200-300字。",
     [("char_count", {"relation": "between", "n": 1000, "upper": 1200})]),
    ("Write an essay of at least 1000 words. The introduction should be about 150 words.",
     [words("at least", 1000)]),
    # two bounds one text can meet together are both the response's, as one range
    ("Write no less than 300 words and no more than 500 words.", [words("between", 300, 500)]),
])
def test_of_two_lengths_no_text_can_meet_together_the_lower_is_a_parts(request_text, expected):
    assert found(request_text) == expected

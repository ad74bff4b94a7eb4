"""The pre-pass reads counts by families of words: a noun family per kind (bullets, dot
points, subheadings, placeholders, template fields, paras, 小标题, 占位符, 段), a list style per
list kind (ordered list, numbered, 项目符号, 编号, 序号), and the places a count takes around
them, in English, Chinese and both at once; a count that is content stays no check."""

from __future__ import annotations

import pytest

from rubrics.checks.prepass import prepass


def found(request: str) -> list[tuple[str, dict]]:
    return [(c.kind, c.params) for c in prepass(request)]


def count(kind, relation, n, upper=None, **extra):
    return (kind, {"relation": relation, "n": n, "upper": upper, **extra})


def paragraphs(relation, n, upper=None, divider=None):
    return count("paragraph_count", relation, n, upper, divider=divider)


@pytest.mark.parametrize("request_text, expected", [
    # a count before the noun, in any of the family's words and both languages
    ("The post needs at least 5 subheadings formatted as markdown headings.",
     [count("heading_count", "at least", 5)]),
    ("Organize it under four markdown headers.", [count("heading_count", "exactly", 4)]),
    ("使用3个以上的小标题组织内容。", [count("heading_count", "at least", 3)]),
    ("写一篇 blog post，至少包含3个 markdown headings。", [count("heading_count", "at least", 3)]),
    ("write a template with 2 or more [bracketed] placeholders",
     [count("placeholder_count", "at least", 2)]),
    ("Leave at least four blanks in square brackets (like [Name]).",
     [count("placeholder_count", "at least", 4)]),
    ("It should run to exactly four paras.", [paragraphs("exactly", 4)]),
    ("Make it three paragraphs long.", [paragraphs("exactly", 3)]),
    ("不超过四段。", [paragraphs("at most", 4)]),
    ("文章至少分六段。", [paragraphs("at least", 6)]),
    ("用三个段落回答。", [paragraphs("exactly", 3)]),
    # a labelled count
    ("Headings: 2-4, markdown style.", [count("heading_count", "between", 2, 4)]),
    ("Paragraph count: 2.", [paragraphs("exactly", 2)]),
    ("Placeholders: at least 3, in [square brackets].",
     [count("placeholder_count", "at least", 3)]),
    # the noun, then its count
    ("use square-bracket fields such as [client] and [amount], at least five of them.",
     [count("placeholder_count", "at least", 5)]),
    ("用方括号标出需要填写的内容，至少5处。", [count("placeholder_count", "at least", 5)]),
    ("标题不少于两个，使用#号标记。", [count("heading_count", "at least", 2)]),
    ("bullets pls. like 5 of them", [count("bullet_count", "exactly", 5)]),
    ("Give each tip its own bullet; eight tips in total.", [count("bullet_count", "exactly", 8)]),
    # a list's style, then its size
    ("Write it as an ordered list of exactly five steps.", [count("numbered_count", "exactly", 5)]),
    ("onboarding steps - numbered, 7 steps, keep each short.",
     [count("numbered_count", "exactly", 7)]),
    ("The bullet list should have between 4 and 6 items.",
     [count("bullet_count", "between", 4, 6)]),
    ("Numbered list, at most 10 entries.", [count("numbered_count", "at most", 10)]),
    ("Use 1., 2., 3. numbering for the steps; there should be exactly three.",
     [count("numbered_count", "exactly", 3)]),
    ("步骤请标上序号，一共6步。", [count("numbered_count", "exactly", 6)]),
    ("请用 numbered list 列出 5 个 tips。", [count("numbered_count", "exactly", 5)]),
    ("请以要点形式列出四个注意事项。", [count("bullet_count", "exactly", 4)]),
    ("pls number ur tips 1 to 4", [count("numbered_count", "exactly", 4)]),
    # letters
    ("The letter 'q' must not appear more than 3 times.",
     [count("letter_frequency", "at most", 3, letter="q")]),
    ("I want at least 12 instances of the letter a.",
     [count("letter_frequency", "at least", 12, letter="a")]),
    ("write a poem that needs at least 6 z's in it",
     [count("letter_frequency", "at least", 6, letter="z")]),
    ("回答中字母a出现的次数不少于10次。", [count("letter_frequency", "at least", 10, letter="a")]),
    ("写一首 haiku，字母 'o' 至少出现 5 次。",
     [count("letter_frequency", "at least", 5, letter="o")]),
])
def test_counts_read_by_families(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Give me 10 names for a bakery.",  # items with no style named
    "For each product, use bullets, 3 per product.",  # a count per part
    "请帮我解释一下三段论的逻辑结构。",  # 三段论 is a syllogism
    "主歌至少2段，副歌要朗朗上口。",  # verses of a song
    "正文部分4-5段。",  # one named part's
    "Please provide a detailed three-level heading framework.",  # levels, not headings
    "My teacher says my essay needs 5 paragraphs, how do I structure it?",
    "一篇3000字的论文一般需要写多久？",
    "Count how many times the letter r appears in 'strawberry'.",
    "Write a letter to my aunt, 3 times longer than last year's.",
])
def test_counts_that_are_content_are_no_check(request_text):
    assert found(request_text) == []


def keyword(word, relation="at least", n=1):
    return ("keyword", {"word": word, "relation": relation, "n": n, "upper": None})


@pytest.mark.parametrize("request_text, expected", [
    ("The words 'harbor' and 'lantern' should both show up.",
     [keyword("harbor"), keyword("lantern")]),
    ("Ensure the keywords AI and ethics are present.", [keyword("AI"), keyword("ethics")]),
    ("Reference 'Agile' in your answer.", [keyword("Agile")]),
    ("Keywords (must appear): solar, battery, grid.",
     [keyword("solar"), keyword("battery"), keyword("grid")]),
    ("Include these keywords (space, rocket) in your answer.",
     [keyword("space"), keyword("rocket")]),
    ("Use 'momentum' 4+ times.", [keyword("momentum", "at least", 4)]),
    ("mention tacos like at least twice lol", [keyword("tacos", "at least", 2)]),
    ("mention the community garden at least once", [keyword("community garden")]),
    ("Be sure 'cinnamon' appears at least once and 'nutmeg' at least twice.",
     [keyword("cinnamon"), keyword("nutmeg", "at least", 2)]),
    ("No using 'basically' or 'literally'.",
     [("forbidden_word", {"word": "basically"}), ("forbidden_word", {"word": "literally"})]),
    ("写个 product description，keywords: durable, waterproof。",
     [keyword("durable"), keyword("waterproof")]),
    ("文中必须包含“绿色出行”这个词。", [keyword("绿色出行")]),
    ("要提到“无尘”和“除臭”这两个卖点。", [keyword("无尘"), keyword("除臭")]),
    ("使用以下关键词：创新、协作、共赢。", [keyword("创新"), keyword("协作"), keyword("共赢")]),
    ("务必提及“碳中和”，次数不少于两次。", [keyword("碳中和", "at least", 2)]),
    ("“春天”一词要出现2次以上。", [keyword("春天", "at least", 2)]),
    ("至少提到“AI”三次。", [keyword("AI", "at least", 3)]),
])
def test_keywords_in_their_verb_noun_and_subject_families(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "use the same word twice and see what happens",  # a thing, not a word
    "方案需包含“引言”“正文”“结论”三个部分。",  # quoted names of parts
    "不要提到“预算”这个词。",  # negated: a forbidden word, not a keyword
])
def test_words_that_are_no_keyword(request_text):
    assert all(kind != "keyword" for kind, _ in found(request_text))


@pytest.mark.parametrize("request_text, expected", [
    ("Emphasize at least 2 terms by wrapping them in **double asterisks**.",
     [count("highlight_count", "at least", 2)]),
    ("Make the two most important ideas bold.", [count("highlight_count", "at least", 2)]),
    ("Bold text should be used for at least 3 important dates.",
     [count("highlight_count", "at least", 3)]),
    ("文中重要的概念请用粗体标出，至少4处。", [count("highlight_count", "at least", 4)]),
    ("用斜体强调至少一句话。", [count("highlight_count", "at least", 1)]),
    ("请将最重要的三句话加粗。", [count("highlight_count", "at least", 3)]),
    ("Please bold 至少两个 key terms。", [count("highlight_count", "at least", 2)]),
    ("at least three words should be fully capitalized.",
     [count("capital_word_count", "at least", 3)]),
    ("a message where exactly four words are in capital letters.",
     [count("capital_word_count", "exactly", 4)]),
    ("ALL-CAPS words: between 2 and 5.", [count("capital_word_count", "between", 2, 5)]),
    ("Capitalize every letter of at least two words.",
     [count("capital_word_count", "at least", 2)]),
    ("回答中至少要有3个全大写的英文单词。", [count("capital_word_count", "at least", 3)]),
    ("回答里至少要有 2 个 ALL CAPS 的单词。", [count("capital_word_count", "at least", 2)]),
])
def test_highlights_and_capitalised_words_in_more_wordings(request_text, expected):
    assert found(request_text) == expected


def test_emphasis_with_no_markdown_named_is_content():
    assert found("Emphasize three benefits of walking.") == []


def ends(phrase):
    return ("ends_with", {"phrase": phrase})


@pytest.mark.parametrize("request_text, expected", [
    ("Sign the email off with 'Warm regards, Dana'.", [ends("Warm regards, Dana")]),
    ("finish it off with 'stay curious' and nothing after that", [ends("stay curious")]),
    ("Kick things off with \"Once upon a midnight\".",
     [("starts_with", {"phrase": "Once upon a midnight"})]),
    ("Close your answer with this exact question: Any questions?", [ends("Any questions?")]),
    ("Last line: 'Stay safe out there.'", [ends("Stay safe out there.")]),
    ("用“未完待续”四个字收尾。", [ends("未完待续")]),
    ("以一句“晚安”结束。", [ends("晚安")]),
    ("帮我写个 LinkedIn post，结尾加上 #hiring。", [ends("#hiring")]),
])
def test_closing_and_opening_phrases_in_more_wordings(request_text, expected):
    assert found(request_text) == expected


def language(code):
    return ("language", {"language": code})


@pytest.mark.parametrize("request_text, expected", [
    ("Could you do the whole thing in German?", [language("de")]),
    ("I'd like the answer written in Italian.", [language("it")]),
    ("Language: French. Length: about 100 words.",
     [language("fr"), count("word_count", "between", 80, 120)]),
    ("语言：法语；长度：不超过100个单词。", [language("fr"), count("word_count", "at most", 100)]),
    ("把你的回答写成西班牙语。", [language("es")]),
    ("帮我写一封 cover letter，用英文，语气正式。", [language("en")]),
    ("请写一段 self-introduction，in English，谢谢。", [language("en")]),
    ("Reply in 日语 please，讲讲富士山。", [language("ja")]),
    ("回复用 Spanish，简单点。", [language("es")]),
])
def test_the_response_language_in_more_wordings_and_both_languages(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "帮我把这句话 translate 成法语：see you tomorrow",
    "What's 'cat' in French?",
    "Write about German cities and their history.",
])
def test_a_language_that_is_a_target_or_topic_is_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Headline wrapped in double angle brackets, then the body.", [("title", {})]),
    ("标题须用双尖括号括起来。", [("title", {})]),
    ("输出必须是合法的JSON。", [("json", {})]),
    ("给我一个 JSON 格式的输出，包含 name 和 age 两个字段。", [("json", {})]),
    ("整个回复请用双引号括起来。", [("quoted", {})]),
    ("整段 response 要用双引号包起来。", [("quoted", {})]),
    ("全文不准出现逗号。", [("no_commas", {})]),
    ("信的末尾加一段附言，以P.S.开头。", [("postscript", {"marker": "P.S."})]),
    ("请用三个要点总结，每个要点用“-”开头。", [count("bullet_count", "exactly", 3)]),
    ("Word count: 250–300.", [count("word_count", "between", 250, 300)]),
    ("帮我写一封 cover letter，不超过200 words。", [count("word_count", "at most", 200)]),
    ("Write a story，分成 4 paragraphs，用 *** 分隔。", [paragraphs("exactly", 4, divider="***")]),
    ("帮我写一段 summary，two sentences only。", [count("sentence_count", "exactly", 2)]),
    ("字数 around 500 字，about 杭州西湖。", [count("char_count", "between", 400, 600)]),
])
def test_marks_and_lengths_in_chinese_and_mixed_wordings(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Write no less than 300 words and no more than 500 words.",
     [count("word_count", "between", 300, 500)]),
    ("不少于3段，不超过5段。", [paragraphs("between", 3, 5)]),
    ("At least 2 bullet points; no more than 6 bullets.", [count("bullet_count", "between", 2, 6)]),
    ("Use the word \"sun\" at least twice but no more than 4 times.",
     [("keyword", {"word": "sun", "relation": "between", "n": 2, "upper": 4})]),
    # bounds no text can meet together, or of different things, stay apart
    ("at least 3 paragraphs, at most 2 paragraphs",
     [paragraphs("at least", 3), paragraphs("at most", 2)]),
    ("Use 'sun' at least twice and 'moon' at most once.",
     [keyword("sun", "at least", 2), keyword("moon", "at most", 1)]),
])
def test_a_floor_and_a_ceiling_of_one_count_merge_into_a_range(request_text, expected):
    assert found(request_text) == expected


def test_the_merged_range_quotes_the_requests_words_from_one_bound_to_the_other():
    (check,) = prepass("Write no less than 300 words, and keep it to no more than 500 words.")
    assert check.quote == "no less than 300 words, and keep it to no more than 500 words"


def test_a_schema_implies_json_so_the_json_check_goes():
    request = ('Reply in JSON format, valid against this schema: {"type": "object", '
               '"properties": {"name": {"type": "string"}}}')
    assert [c.kind for c in prepass(request)] == ["json_schema"]
    assert [c.kind for c in prepass("Reply in JSON format.")] == ["json"]


def test_json_named_as_the_topic_is_no_check():
    assert found("My boss wants the report in JSON but I don't know, explain JSON simply.") == []
    assert found("What does the P.S. at the end of a letter stand for?") == []


@pytest.mark.parametrize("request_text, expected", [
    ("Format it as a checklist with dashes, eight entries.", [count("bullet_count", "exactly", 8)]),
    ("Outline the process in numbered steps (no more than 6).",
     [count("numbered_count", "at most", 6)]),
    ("请用1. 2. 3.的格式列出三条建议。", [count("numbered_count", "exactly", 3)]),
    ("请用列表列出四种常见的水果。", [count("bullet_count", "exactly", 4)]),
    ("Put square-bracket placeholders wherever a name goes; I need at least three.",
     [count("placeholder_count", "at least", 3)]),
    ("include placeholders in square brackets for the address and phone (exactly two)",
     [count("placeholder_count", "exactly", 2)]),
    ("在模板中用[ ]标注可替换内容，至少三处。", [count("placeholder_count", "at least", 3)]),
    ("use ## for each question heading (4 headings)", [count("heading_count", "exactly", 4)]),
    ("请用 markdown 写，包含 2 个 ## 标题。", [count("heading_count", "exactly", 2)]),
    ("Mark up at least 3 key phrases in bold.", [count("highlight_count", "at least", 3)]),
    ("把关键词加粗，至少三个。", [count("highlight_count", "at least", 3)]),
    ("Highlight (with markdown bold) the 4 most surprising facts.",
     [count("highlight_count", "at least", 4)]),
    ("请用markdown突出两个重点。", [count("highlight_count", "at least", 2)]),
    ("Limit all-caps words to 2 at most.", [count("capital_word_count", "at most", 2)]),
    ("Write the piece as two paragraphs.", [paragraphs("exactly", 2)]),
    ("Separate the 3 paragraphs with ***.", [paragraphs("exactly", 3, divider="***")]),
    ("要求：字数800字左右，分成三个部分。", [count("section_count", "exactly", 3, marker=None),
                                            count("char_count", "between", 640, 960)]),
    ("这个 essay 要 500 words 以上。", [count("word_count", "at least", 500)]),
    ("Include the words 'north' and 'south' at least once each.",
     [keyword("north"), keyword("south")]),
    ("The phrase 'thank you' has to be in there somewhere.", [keyword("thank you")]),
    ("Sprinkle in the terms 'agile' and 'scrum'.", [keyword("agile"), keyword("scrum")]),
    ('Make the last sentence "We ride at dawn."', [ends("We ride at dawn.")]),
    ("All text must be in Polish.", [language("pl")]),
    ("Spanish only.", [language("es")]),
    ("Please answer 用中文。", [language("zh")]),
    ("Return only JSON.", [("json", {})]),
])
def test_wordings_the_sixth_development_batch_showed(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "I wrote a 500-word essay; can you suggest a title?",  # the user's own text
    "Italicise one phrase per paragraph.",  # one per part
    "For each section (3 paragraphs), add a summary.",  # each section's, not restated
    "English only has 26 letters, right?",
])
def test_what_the_sixth_batch_keeps_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ('Please make sure to utilize the keyword "innovation" a minimum of two times.',
     [keyword("innovation", "at least", 2)]),
    ("It is required that you highlight a minimum of two sections using markdown.",
     [count("highlight_count", "at least", 2)]),
    ("Kindly refrain from employing any commas throughout the response.", [("no_commas", {})]),
    ('Commence your response with the words "In summary".',
     [("starts_with", {"phrase": "In summary"})]),
    ("The number of words written entirely in capital letters should be fewer than four.",
     [count("capital_word_count", "at most", 3)]),
    ("use the vocabulary words 'compelling' and 'furthermore'; bold the thesis statement.",
     [keyword("compelling"), keyword("furthermore"), count("highlight_count", "at least", 1)]),
    ("Keep it tight, bullet the 3 deliverables. Sign it 'Best, Jordan'.",
     [count("bullet_count", "exactly", 3), ends("Best, Jordan")]),
    ("friendly tone, two sentences tops", [count("sentence_count", "at most", 2)]),
    ("lol write me a breakup text, 1 para, ALL CAPS",
     [paragraphs("exactly", 1), ("uppercase", {})]),
    ("need a cover letter template w/ like 4 [blanks] i can fill in later",
     [count("placeholder_count", "exactly", 4)]),
    ("write a toast for my bro, dont say 'ex' anywhere", [("forbidden_word", {"word": "ex"})]),
    ("steps to fix a flat tire? number them, 6 max", [count("numbered_count", "at most", 6)]),
    ("poem about my cat, end it w/ 'meow.'", [ends("meow.")]),
    ("请以条目形式列出本次会议的四项决议。", [count("bullet_count", "exactly", 4)]),
    ("回答的全部内容须置于双引号之中。", [("quoted", {})]),
    ("英文回答中全大写单词不超过两个。",
     [language("en"), count("capital_word_count", "at most", 2)]),
    ("摘要限定在三句话以内。", [count("sentence_count", "at most", 3)]),
    ("随便写点啥 两段就行", [paragraphs("exactly", 2)]),
])
def test_formal_casual_and_official_wordings(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "Is the five-paragraph essay format outdated?",
    "这份报告分为四个部分，请帮我检查语法错误。",
    "My essay has 5 paragraphs; please proofread it.",
    "为什么 people 在网上用 ALL CAPS 会被认为在吼叫？",
])
def test_forms_asked_about_or_describing_a_given_text_are_no_check(request_text):
    assert found(request_text) == []


def test_a_count_of_the_users_text_beside_a_requirement_keeps_the_requirement():
    assert found("My essay has 5 paragraphs; please rewrite it in 3 paragraphs.") == [
        paragraphs("exactly", 3)]


@pytest.mark.parametrize("request_text", [
    "The document has 3 headers and 2 footers, please summarize it.",
    "我有一篇文章分为三段，帮我总结一下。",
])
def test_counts_of_a_text_given_to_summarize_are_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    ("* 3 to 5 numbered installation steps", [count("numbered_count", "between", 3, 5)]),
    ("gimme 5 bullet pts on why cats rule, under 80 words total",
     [count("bullet_count", "exactly", 5), count("word_count", "at most", 79)]),
    ("Put the three most critical words in ALL CAPS, and no more than that.",
     [count("capital_word_count", "at most", 3)]),
    ("Please emphasise, using markdown italics, no fewer than two sentences.",
     [count("highlight_count", "at least", 2)]),
    ('Repeat the slogan "Move fast" exactly twice in your answer.',
     [keyword("Move fast", "exactly", 2)]),
    ("Write a bedtime story for my kids in Dutch.", [language("nl")]),
    ("Give a dozen bullet points of packing tips.", [count("bullet_count", "exactly", 12)]),
    ("通知模板里请用[ ]预留至少两处空白。", [count("placeholder_count", "at least", 2)]),
    ("帮我写个 caption，英文，带上 #summer 和 #travel 两个 hashtag。",
     [language("en"), keyword("#summer"), keyword("#travel")]),
])
def test_wordings_the_eighth_batch_showed(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    "中文，英文，日文都可以。",  # a list of languages allowed, not one asked for
    "标题不超过20个字，使用#号标记。",
])
def test_a_language_in_a_list_and_a_hash_sign_are_no_such_check(request_text):
    assert all(kind not in ("language", "keyword") for kind, _ in found(request_text))


def test_a_gated_rule_finds_what_its_pattern_finds_near_its_gate():
    from rubrics.checks.phrasings.shared import Gated

    text = "x " * 300 + "at least 5 bullets" + " y" * 300 + " no more than 2 bullets"
    gated = Gated(r"bullets", r"(?:at\s+least|no\s+more\s+than)\s+\d+\s+bullets", reach=(40, 10))
    whole = Gated(r"bullets", r"(?:at\s+least|no\s+more\s+than)\s+\d+\s+bullets")
    assert [m.group(0) for m in gated.finditer(text)] == [m.group(0) for m in whole.finditer(text)]
    assert list(Gated(r"headings", r"\d+ bullets").finditer(text)) == []


@pytest.mark.parametrize("request_text, expected", [
    ("Keywords to include - budget, timeline.", [keyword("budget"), keyword("timeline")]),
    ("必须包含以下关键词（碳达峰、碳中和）。", [keyword("碳达峰"), keyword("碳中和")]),
    ("关键词：碳中和", [keyword("碳中和")]),
    ("关键词：创新和发展", [keyword("创新"), keyword("发展")]),
])
def test_keyword_lists_after_a_dash_or_in_parentheses(request_text, expected):
    assert found(request_text) == expected

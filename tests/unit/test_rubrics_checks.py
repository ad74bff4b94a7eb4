"""Check kinds: each passes and fails where a reader would say so, and says what it measured."""

from __future__ import annotations

import json

import pytest

from generation.schemas import strict_problems
from rubrics.checks import KINDS, Check, ParamsInvalid, pass_rate, run_checks
from rubrics.checks.counts import count_paragraphs, count_sections, count_sentences
from rubrics.checks.jsonsubset import problems
from rubrics.checks.language import detect
from rubrics.checks.numbers import about, to_int


def outcome(text: str, kind: str, **params):
    return run_checks(text, [Check(kind=kind, params=params)])[0]


def count(relation="at least", n=1, upper=None):
    return {"relation": relation, "n": n, "upper": upper}


def test_word_count_says_what_it_measured_and_what_is_needed():
    fail = outcome("one two three", "word_count", **count("at least", 120))
    assert not fail.passed
    assert fail.line() == "[FAIL] word_count: 3 words; needs at least 120 words"
    assert outcome("一二三 four", "word_count", **count("exactly", 4)).passed


@pytest.mark.parametrize("kind, text, params, passed, measured", [
    ("char_count", "你好，世界abc", count("between", 4, 5), True, "4 Chinese characters"),
    ("char_count", "你好", count("at least", 800), False, "2 Chinese characters"),
    ("sentence_count", "One. Two! Three? 四。", count("exactly", 4), True, "4 sentences"),
    ("paragraph_count", "a\n\nb\n \nc", count("exactly", 3), True, "3 paragraphs"),
    ("bullet_count", "- a\n* b\n• c\n***\n*not*", count("exactly", 3), True, "3 bullet points"),
    ("numbered_count", "1. a\n2) b\n3、c", count("at most", 2), False, "3 numbered items"),
    ("heading_count", "# A\ntext #tag\n## B", count("exactly", 2), True, "2 headings"),
    ("highlight_count", "*one* and **two** but 2 * 3", count("at least", 2), True,
     "2 highlighted spans"),
    ("placeholder_count", "[name] at [address], [[ ## x ## ]]", count("exactly", 2), True,
     "2 placeholders"),
    ("capital_word_count", "WE ARE here, I said", count("at least", 3), False,
     "2 all-capital words"),
])
def test_count_kinds(kind, text, params, passed, measured):
    if kind == "paragraph_count":
        params = {**params, "divider": None}
    result = outcome(text, kind, **params)
    assert (result.passed, result.measured) == (passed, measured)


def test_paragraphs_split_on_a_divider_and_sections_on_a_marker():
    assert count_paragraphs("a\n***\nb\n***\nc", "***") == 3
    text = "SECTION 1\nintro\nSection 2\nbody\nno SECTION here"
    assert count_sections(text, "SECTION") == 2
    # no marker: repeated headings under a lone title, or Chinese ordinals
    assert count_sections("# Title\n## A\n## B\n## C", None) == 3
    assert count_sections("一、背景\n二、分析\n第三部分 建议", None) == 3



@pytest.mark.parametrize("text, sentences", [
    ("Dr. Smith arrived. He sat down.", 2),
    ("Bring fruit, e.g. apples. Or bread, i.e. anything.", 2),
    ("She moved to the U.S. last year. It suits her.", 2),
    ("Join me for coffee. Friday works.\n\nP.S. Bring the notes. And the cake!", 2),
    ("One line. P.S. inside the line still counts.", 2),
    ("Wow! Really? Yes… fine.", 4),
])
def test_sentences_end_at_their_punctuation_not_at_abbreviations_or_a_postscript(
        text: str, sentences: int) -> None:
    assert count_sentences(text) == sentences


@pytest.mark.parametrize("kind, params, good, bad, measured_bad", [
    ("keyword", {"word": "river", **count("at least", 2)}, "River and river.", "a river",
     "1 times 'river'"),
    ("keyword", {"word": "品质生活", **count()}, "追求品质生活", "追求生活", "0 times '品质生活'"),
    ("forbidden_word", {"word": "cheap"}, "affordable", "so Cheap!", "'cheap' 1 times"),
    ("letter_frequency", {"letter": "z", **count("at least", 2)}, "Zig zag", "zag",
     "1 times the letter 'z'"),
    ("lowercase", {}, "all small here", "Not here", "1 capital letters"),
    ("uppercase", {}, "LOUD TEXT 1", "LOUD text", "4 lowercase letters"),
    ("no_commas", {}, "no commas here", "one, two，三", "2 commas"),
    ("starts_with", {"phrase": "Dear team"}, "  dear  Team, hello", "Hi team",
     "starts 'hi team'"),
    ("ends_with", {"phrase": "Any questions?"}, "Done. Any questions?",
     "Any questions? Thanks", "ends 'any questions? thanks'"),
    ("quoted", {}, '"all of it"', 'all "of" it', "opens and closes with 'a'...'t'"),
    ("title", {}, "<<My Poem>>\nroses", "My Poem", "0 titles in <<>>"),
    ("postscript", {"marker": "P.S."}, "Bye.\nP.S. call me", "Bye.", "no postscript"),
    ("json", {}, '```json\n{"a": 1}\n```', "{a: 1}", "not valid JSON (Expecting property name "
     "enclosed in double quotes)"),
    # a parser keeps one of a repeated key: the 1.5B model's three "fact" keys are one fact
    ("json", {}, '{"facts": ["hot", "big"]}', '{"fact": "hot", "fact": "big", "fact": "old"}',
     "not valid JSON (the key 'fact' appears 3 times in one object)"),
    ("language", {"language": "fr"}, "Le chat est sur la table et nous sommes contents.",
     "The cat is on the table and we are happy.", "written in English"),
    ("xml_tag", {"tag": "answer"}, "<answer>42</answer>", "<answer>42", "no closing tag"),
    ("field_marker", {"name": "answer"}, "[[ ## answer ## ]]\n42", "answer: 42",
     "no such marker"),
])
def test_keyword_and_form_kinds(kind, params, good, bad, measured_bad):
    assert outcome(good, kind, **params).passed
    failed = outcome(bad, kind, **params)
    assert not failed.passed and failed.measured == measured_bad


def test_json_against_a_schema_from_the_request():
    schema = json.dumps({"type": "object", "required": ["name", "tags"], "properties": {
        "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"},
                                             "maxItems": 2}}})
    assert outcome('{"name": "a", "tags": ["x"]}', "json_schema", schema=schema).passed
    bad = outcome('{"tags": ["x", "y", 3]}', "json_schema", schema=schema)
    assert not bad.passed and "missing 'name'" in bad.measured and "[2]" in bad.measured
    repeated = outcome('{"name": "a", "name": "b", "tags": []}', "json_schema", schema=schema)
    assert not repeated.passed and "'name' appears 2 times" in repeated.measured
    assert "each key once" in repeated.action and "each key once" not in bad.action


def test_json_subset_validator():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
                                               "k": {"enum": ["a", "b"]}},
              "additionalProperties": False, "required": ["n"]}
    assert problems({"n": 2, "k": "a"}, schema) == []
    assert problems({"n": True}, schema) == ["$.n: expected integer"]
    assert problems({"n": 0, "x": 1}, schema) == ["$.n: below 1", "$: unexpected 'x'"]
    assert problems(3, {"anyOf": [{"type": "string"}, {"type": "integer"}]}) == []


@pytest.mark.parametrize("text, language", [
    ("The quick brown fox jumps over the lazy dog and it was fun.", "en"),
    ("这是一个用中文写的句子，用来测试语言检测。", "zh"),
    ("Nous avons visité le musée et nous sommes rentrés pour le dîner.", "fr"),
    ("Wir sind nicht zu Hause, und die Kinder spielen mit dem Hund.", "de"),
    ("El perro de mi vecino es muy grande y no le gusta la lluvia.", "es"),
    ("今日はとても良い天気ですね。散歩に行きましょう。", "ja"),
    ("오늘은 날씨가 정말 좋네요. 산책하러 갑시다.", "ko"),
    ("Сегодня хорошая погода, и мы идём гулять.", "ru"),
    ("Il gatto è sul tavolo e non vuole scendere per la cena, ma questo è normale.", "it"),
    ("O gato está na mesa e não quer descer para o jantar, mas isso é normal.", "pt"),
    ("这是中文，带一点English words也没关系。", "zh"),
    # a script one language writes alone; letters one language of a shared script alone uses;
    # stopwords among the languages left
    ("แมวนั่งอยู่บนโต๊ะและไม่อยากลงมากินข้าวเย็น", "th"),
    ("பூனை மேசையில் அமர்ந்திருக்கிறது, இரவு உணவுக்கு கீழே வர விரும்பவில்லை.", "ta"),
    ("Кіт сидить на столі і не хоче спускатися до вечері, але це нормально.", "uk"),
    ("Котката седи на масата и не иска да слезе за вечеря, но това е нормално.", "bg"),
    ("القطة تجلس على الطاولة ولا تريد النزول لتناول العشاء، وهذا أمر طبيعي.", "ar"),
    ("گربه روی میز نشسته است و نمی‌خواهد برای شام پایین بیاید، این عادی است.", "fa"),
    ("بلی میز پر بیٹھی ہے اور رات کے کھانے کے لیے نیچے نہیں آنا چاہتی۔", "ur"),
    ("बिल्ली मेज पर बैठी है और वह रात के खाने के लिए नीचे नहीं आना चाहती है।", "hi"),
    ("मांजर टेबलावर बसली आहे आणि ती जेवणासाठी खाली येत नाही, हे सामान्य आहे.", "mr"),
    ("Con mèo đang ngồi trên bàn và không muốn xuống ăn tối, nhưng điều này là bình thường.",
     "vi"),
    ("De kat zit op de tafel en wil niet naar beneden komen voor het eten.", "nl"),
    ("Paka yuko juu ya meza na hataki kushuka kwa chakula cha jioni, lakini hii ni kawaida.",
     "sw"),
    ("1234 !!", None),
])
def test_language_detector(text, language):
    assert detect(text) == language


def test_numbers_in_words_and_chinese_numerals():
    assert [to_int(s) for s in ("3,000", "three", "八百", "三千五百", "两万", "1.5万", "5k")] \
        == [3000, 3, 800, 3500, 20000, 15000, 5000]
    assert about(500) == (400, 600)


def test_every_kind_has_a_strict_params_schema():
    for kind in KINDS.values():
        schema = kind.params_schema
        assert strict_problems(schema) == [], kind.name
        assert "$ref" not in json.dumps(schema) and "pattern" not in json.dumps(schema)


def test_params_are_validated_and_nullable_ones_filled():
    check = Check(kind="word_count", params={"relation": "at least", "n": 5})
    assert check.params["upper"] is None
    assert check.key() == Check(kind="word_count", params={
        "relation": "at least", "n": 5, "upper": None}, source="agent").key()
    for kind, params in [("word_count", {"relation": "about", "n": 5}),
                         ("word_count", {"relation": "between", "n": 5, "upper": 2}),
                         ("no_such_kind", {}), ("lowercase", {"extra": 1}),
                         ("language", {"language": "xx"})]:
        with pytest.raises((ParamsInvalid, ValueError)):
            Check(kind=kind, params=params)


def test_pass_rate():
    outcomes = run_checks("a b c", [Check(kind="word_count", params=count("at least", 2)),
                                    Check(kind="lowercase", params={}),
                                    Check(kind="no_commas", params={}),
                                    Check(kind="json", params={})])
    assert pass_rate(outcomes) == 0.75 and pass_rate(()) == 1.0


def test_checks_and_checklists_that_carry_them_are_hashable():
    from rubrics.checklist import Band, Checklist, Dimension

    a = Check(kind="keyword", params={"word": "x", "relation": "at least", "n": 1})
    b = Check(kind="keyword", params={"word": "x", "relation": "at least", "n": 1})
    assert hash(a) == hash(b) and len({a, b}) == 1
    bands = (Band(low=1, high=5, description="weak"), Band(low=6, high=10, description="good"))
    checklist = Checklist(dimensions=(Dimension(name="Tone", description="d", bands=bands),),
                          checks=(a,))
    assert hash(checklist) == hash(checklist.model_copy())

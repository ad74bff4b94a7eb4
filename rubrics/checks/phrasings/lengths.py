"""How much of the response there is, in words and characters: English lengths in words
("at least 300 words", "a 500-word essay", "don't go over 120 words", "word limit: 250", "one
hundred and fifty words", "Word count: 300", "more than 250 words but no longer than 350",
"at least 300 but no more than 450 words", "Hard ceiling: 150 words", "a 150-word-max blurb",
"don't let it run past 90 words", "south of 120 words", "in the neighbourhood of 200 words",
"a couple hundred words", "two to three hundred words"), Chinese lengths in characters
("不少于800字", "1000-1200字", "字数800字左右", "写一篇800字的"), and English lengths asked in
Chinese ("不超过八十个单词", "200个单词左右"). How often one letter appears is `letters`'s.

"About N" is `between` floor(0.8 N) and ceil(1.2 N); "more than N" is at least N + 1, "less
than N" at most N - 1. A length in number words counts only from fifty up ("three words that
rhyme" is no length)."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_COMPOUND, EN_NUMBER, ZH_NUMBER, about, to_int
from rubrics.checks.phrasings.languages.names import LANGUAGE_NAMES
from rubrics.checks.phrasings.shared import (
    ABOUT_EN,
    AT_LEAST_EN,
    AT_MOST_EN,
    DASH,
    EN_N,
    LESS_THAN_EN,
    MORE_THAN_EN,
    QUALIFIER_EN,
    SECOND_BOUND,
    WORDS_GATE,
    ZH_AT_LEAST,
    ZH_AT_MOST,
    ZH_LESS_THAN,
    ZH_MORE_THAN,
    ZH_N,
    ZH_NOT_RANGE,
    ZH_START,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    numbers_of,
    relation_of,
    rules_of,
    two_bounds,
    zh_relation_of,
)

_FLAGS = re.I | re.S
_NAMED_N = rf"(?P<n>{EN_NUMBER})"
_WORDS = r"\s*(?:-\s*)?words?\b"
# a length in number words is the response's only when it is one no list of things would have
# ("one hundred and fifty words"; not "three words that rhyme")
MIN_WORDS_IN_WORDS = 50
_ZH_CHARS = r"(?:个)?(?:汉)?字(?!母|段|句|体|号|幕|条)"
_ZH_Q = rf"(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST}|{ZH_MORE_THAN}|{ZH_LESS_THAN})"
_ZH_WORD = r"\s*个?(?:英文|英语)?(?:单词|词)(?![语汇组典])"


def _approx(kind: str, n: int | None, **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    if n is None:
        return []
    low, high = about(n)
    return count(kind, "between", low, high, **extra)


# the multiplier a range's second number ends with: "two to three hundred words"
_MULTIPLIER = re.compile(r"\b(?P<unit>hundred|thousand)\s*$", re.I)


def _range(m: re.Match[str]) -> list[int | None]:
    """A range's two numbers; a first one that leaves the second's multiplier unsaid takes it
    ("two to three hundred words": 200 to 300; not "fifty to a hundred words")."""
    said = [g for g in m.groups() if g is not None][:2]
    low, high = numbers_of(m)[:2]
    shared = _MULTIPLIER.search(said[1]) if len(said) == 2 else None
    if shared and low is not None and high is not None and not _MULTIPLIER.search(said[0]):
        scaled = low * (100 if shared.group("unit").lower() == "hundred" else 1000)
        if scaled <= high:
            return [scaled, high]
    return [low, high]


def _length(kind: str, relation: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        numbers = numbers_of(m)
        if relation == "between":
            return count(kind, "between", *_range(m))
        if relation == "about":
            return _approx(kind, numbers[0])
        return count(kind, relation, numbers[0])
    return build


def _words(relation: str) -> Build:
    return _length("word_count", relation)


def _zh_chars(relation: str) -> Build:
    return _length("char_count", relation)


def _bound(relation: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        return count("word_count", relation, to_int(m.group("n")))
    return build


def _labelled(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A labelled word count: its qualifier's relation, about N with none."""
    n = to_int(m.group("n"))
    if m.group("q"):
        return count("word_count", relation_of(m.group("q")), n)
    return [] if n is None else count("word_count", "between", *about(n))


def _in_words(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    n = to_int(m.group("n"))
    if n is None or n < MIN_WORDS_IN_WORDS:
        return []
    return count("word_count", "between", *about(n))


def _zh_words(relation: str) -> Build:
    """An English length asked in Chinese: "不超过八十个单词", "200个单词左右"."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        n = to_int(m.group("n"))
        if relation == "about":
            return [] if n is None else count("word_count", "between", *about(n))
        if relation == "stated":
            return count("word_count", zh_relation_of(m.group("q")), n)
        return count("word_count", relation, n)
    return build


_PHRASINGS: tuple[Phrasing, ...] = (
    # English lengths in words
    Phrasing(
        rf"(?:between\s+)?{EN_N}{DASH}{EN_N}\s*(?:-\s*)?words?\b", _words("between"), *WORDS_GATE,
        kind="word_count", example="4 to 7 words", counter="4 to 7 sentences"),
    Phrasing(
        rf"(?:{AT_LEAST_EN})\s*{EN_N}\s*(?:-\s*)?words?\b", _words("at least"), *WORDS_GATE,
        kind="word_count", example="at least 100 words", counter="at least 100 lines"),
    Phrasing(
        rf"\b(?:{MORE_THAN_EN})\s+{EN_N}\s*(?:-\s*)?words?\b", _words("more than"), *WORDS_GATE,
        kind="word_count", example="no longer than 4 words", counter="no more than 4 sentences"),
    Phrasing(
        rf"\b(?:{LESS_THAN_EN})\s+{EN_N}\s*(?:-\s*)?words?\b", _words("less than"), *WORDS_GATE,
        kind="word_count", example="In fewer than 50 words", counter="Answer in exactly 50 words."),
    Phrasing(
        rf"{EN_N}\s*(?:-\s*)?words?(?:\s+(?:or\s+more|minimum|at\s+least)|-min(?:imum)?)\b|"
        rf"{EN_N}\+\s*(?:-\s*)"
        rf"?words?\b",
        _words("at least"), *WORDS_GATE,
        kind="word_count", example="Your reply should run to 4 words or more.",
        counter="Keep your answer to 4 words or fewer."),
    Phrasing(
        rf"(?:{AT_MOST_EN})\s*(?:a\s+|the\s+)?{EN_N}\s*(?:-\s*)?words?\b", _words("at most"),
        *WORDS_GATE,
        kind="word_count", example="at most forty words", counter="150 words at most"),
    Phrasing(
        rf"{EN_N}\s*(?:-\s*)?words?(?:\s+(?:or\s+(?:less|fewer)|max(?:imum)?|at\s+most)|"
        r"-max(?:imum)?)\b",
        _words("at most"), *WORDS_GATE,
        kind="word_count", example="a 150-word-max blurb", counter="a 150-word blurb"),
    Phrasing(
        rf"(?:exactly|precisely)\s+{EN_N}\s*(?:-\s*)?words?\b", _words("exactly"), *WORDS_GATE,
        kind="word_count", example="precisely 4 words", counter="4 to 7 words"),
    Phrasing(
        rf"(?:{ABOUT_EN})\s+{EN_N}\s*(?:-\s*)?words?\b", _words("about"), *WORDS_GATE,
        kind="word_count", example="about 200 words", counter="200 words tops."),
    # (not the length of a text the request gives: "translate these 20 words", "summarize this
    # 2000-word article")
    Phrasing(
        r"(?<![\w,.\-–—~])(?<!these\s)(?<!those\s)(?<!the\s)(?<!this\s)(?<!that\s)(?<!my\s)"
        r"(?<!our\s)(?<!his\s)(?<!her\s)(?<!their\s)(?<!list\sof\s)(\d{1,3}(?:,\d{3})+|\d{2,6})"
        r"(?:\s+|-)words?\b(?!\s+(?:that|which|from|related|starting|beginning|ending|in\s+(?:"
        rf"{LANGUAGE_NAMES})\b))", _words("about"), *WORDS_GATE,
        kind="word_count", example="about 200 words", counter="Write 150-200 words."),
    # Chinese lengths in characters
    Phrasing(
        rf"{ZH_N}\s*(?:{_ZH_CHARS})?\s*(?:-|–|—|~|～|〜|到|至)\s*{ZH_N}\s*{_ZH_CHARS}",
        _zh_chars("between"),
        kind="char_count", example="字数在300到500字之间", counter="段落数控制在3到5段之间。"),
    Phrasing(
        rf"(?:{ZH_AT_LEAST})\s*{ZH_N}\s*{_ZH_CHARS}|{ZH_N}\s*{_ZH_CHARS}(?:以上|起)",
        _zh_chars("at least"),
        kind="char_count", example="字数不少于一千字。", counter="字数超过500字，少于1000字。"),
    Phrasing(
        rf"(?:{ZH_MORE_THAN})\s*{ZH_N}\s*{_ZH_CHARS}", _zh_chars("more than"),
        kind="char_count", example="字数超过500字，少于1000字。", counter="字数不少于1500字"),
    Phrasing(
        rf"(?:{ZH_LESS_THAN})\s*{ZH_N}\s*{_ZH_CHARS}", _zh_chars("less than"),
        kind="char_count", example="字数超过500字，少于1000字。", counter="字数不少于1500字"),
    Phrasing(
        rf"(?:{ZH_AT_MOST})\s*{ZH_N}\s*{_ZH_CHARS}|{ZH_N}\s*{_ZH_CHARS}(?:以内|以下|之内)|"
        rf"(?:控制|限制|限定)在\s*{ZH_N}\s*{_ZH_CHARS}(?:以内|之内|以下|内)",
        _zh_chars("at most"),
        kind="char_count", example="150字以内。", counter="字数不限，段落控制在5段以内。"),
    Phrasing(
        rf"(?:约|大约|大概|左右)\s*{ZH_N}\s*{_ZH_CHARS}|{ZH_NOT_RANGE}{ZH_N}\s*{_ZH_CHARS}\s*"
        rf"(?:左右|上下)|"
        rf"(?:字数|篇幅|长度)(?:要求|控制|限制|保持|大约|大概|为|在|是|约|：|:|\s)"
        rf"*{ZH_N}\s*{_ZH_CHARS}"
        r"(?![以内之下左上])|"
        rf"(?:一篇|一份|一段|写|撰写)\s*(\d+)\s*{_ZH_CHARS}(?:的|之)", _zh_chars("about"),
        kind="char_count", example="字数在500字左右。", counter="字数在300到500字之间"),
    Phrasing(
        rf"(?:{ABOUT_EN})\s*{ZH_N}\s*{_ZH_CHARS}", _zh_chars("about"),
        kind="char_count", example="字数 around 500 字，about 杭州西湖。",
        counter="字数：600-800字"),
    # English lengths said otherwise
    # a bound a negation turns: "don't go over 120 words", "never write more than 80 words",
    # "nothing above 100 words"
    Phrasing(
        rf"\b(?:don['’]t|do\s+not|never|shouldn['’]t|should\s+not|must\s+not|mustn['’]t|cannot"
        rf"|can['’]t|not\s+to|without|nothing)\s+(?:let\s+(?:it|them|(?:the|your)\s+\w+)\s+)?"
        rf"(?:(?:go|be|run|get|write|use|type|going|writing|using)\s+)?(?:over|above|"
        rf"beyond|past|exceed(?:ing)?|surpass(?:ing)?|more\s+than|longer\s+than)"
        rf"\s+{_NAMED_N}{_WORDS}",
        _bound("at most"),
        kind="word_count", example="Don't let it run past 120 words.",
        counter="Don't stop before you reach 4 words."),
    Phrasing(
        rf"\b(?:don['’]t|do\s+not|never|shouldn['’]t|should\s+not|must\s+not|cannot|can['’]t"
        rf"|not\s+to)\s+"
        rf"(?:(?:go|be|fall|write|use)\s+)?(?:under|below|less\s+than|fewer\s+than|shorter\s+than)"
        rf"\s+"
        rf"{_NAMED_N}{_WORDS}", _bound("at least"),
        kind="word_count", example="Your essay should not be shorter than 350 words.",
        counter="Your essay must be no fewer than 350 words."),
    # two bounds, the second without its unit: "more than 250 words but no longer than 350"
    Phrasing(
        rf"\b(?P<q1>{QUALIFIER_EN})\s+(?P<n1>{EN_NUMBER}){_WORDS}{SECOND_BOUND}",
        two_bounds("word_count"), *WORDS_GATE,
        kind="word_count", example="more than 250 words but no longer than 350.",
        counter="more than 250 words but no longer than 3 paragraphs."),
    # the same with the first bound's unit unsaid: "at least 300 but no more than 450 words"
    Phrasing(
        rf"\b(?P<q1>{QUALIFIER_EN})\s+(?P<n1>{EN_NUMBER})\s*,?\s+(?:but|and|yet)\s+"
        rf"(?P<q2>{QUALIFIER_EN})\s+(?P<n2>{EN_NUMBER}){_WORDS}",
        two_bounds("word_count"), *WORDS_GATE,
        kind="word_count", example="at least 300 but no more than 450 words.",
        counter="at least 3 paragraphs but no more than 450 words."),
    # a labelled limit: "word limit: 250", "maximum word count of 300", "minimum word count: 300"
    Phrasing(
        rf"\b(?:word\s+(?:limit|cap|max(?:imum)?|ceiling|budget)|max(?:imum)?\s+(?:word\s+count|"
        rf"length))\s*(?:[:：=]|of|is|:\s*max(?:imum)?)?\s*{_NAMED_N}(?:{_WORDS})?(?!\s*(?:-|to"
        rf"|characters?|"
        r"pages?|minutes?|%))", _bound("at most"),
        kind="word_count", example="Write a story; word limit: 250.",
        counter="Write a 500-word essay."),
    # a bound named alone, then a length in words: "Hard ceiling: 150 words", "Limit: 80 words"
    Phrasing(
        rf"\b(?:(?:hard|strict|absolute|firm|upper)\s+)?(?:ceiling|cap|limit|max(?:imum)?)\s*"
        rf"[:：=]\s*{_NAMED_N}{_WORDS}", _bound("at most"),
        kind="word_count", example="Explain it simply. Hard ceiling: 150 words.",
        counter="Explain it simply. Time limit: 15 minutes."),
    Phrasing(
        rf"\b(?:minimum\s+(?:word\s+count|length)|word\s+(?:minimum|floor))\s*(?:[:：=]|of|is)?\s*"
        rf"{_NAMED_N}(?:{_WORDS})?(?!\s*(?:-|to|characters?|pages?|minutes?|%))",
        _bound("at least"),
        kind="word_count", example="Minimum word count: 300.", counter="Maximum word count: 300."),
    # "400 or more words", "40 or fewer words"
    Phrasing(
        rf"{_NAMED_N}\s+or\s+more{_WORDS}", _bound("at least"),
        kind="word_count", example="Write 250 or more words about trains.",
        counter="Write more than 200 words."),
    Phrasing(
        rf"{_NAMED_N}\s+or\s+(?:fewer|less){_WORDS}", _bound("at most"),
        kind="word_count", example="30 or fewer words, please.", counter="20 words or fewer."),
    # "tops 100 words", "100 words tops"
    Phrasing(
        rf"\btops\s+{_NAMED_N}{_WORDS}", _bound("at most"),
        kind="word_count", example="Give me a quick summary, tops 100 words.",
        counter="Give me a short paragraph."),
    Phrasing(
        rf"{_NAMED_N}{_WORDS}\s+(?:tops|top|max|at\s+the\s+(?:most|max)|or\s+(?:under|below"
        rf"|so\s+max))\b",
        _bound("at most"),
        kind="word_count", example="Limerick about a frog; 40 words max; no commas; all lowercase.",
        counter="Write a poem about a quiet library (with no commas at all)."),
    # a length in number words: "write one hundred and fifty words"
    Phrasing(
        rf"(?<![\w-])(?<!these\s)(?<!those\s)(?<!the\s)(?P<n>{EN_COMPOUND})(?:\s+|-){_WORDS}",
        _in_words,
        kind="word_count", example="In fewer than fifty words", counter="In fewer than 50 words"),
    # an English length asked in Chinese
    Phrasing(
        rf"{ZH_START}{_ZH_Q}\s*(?P<n>{ZH_NUMBER})(?:{_ZH_WORD}|\s*words?\b)", _zh_words("stated"),
        kind="word_count", example="语言：法语；长度：不超过100个单词。",
        counter="英文回答中全大写单词不超过两个。"),
    Phrasing(
        rf"(?P<n>{EN_NUMBER})\s*words?\s*(?:左右|上下)", _zh_words("about"),
        kind="word_count",
        example="帮我写个 LinkedIn post，长度 100 words 左右，结尾加上 #hiring。",
        counter="帮我写个 LinkedIn post，结尾加上 #hiring。"),
    Phrasing(
        rf"(?P<n>{EN_NUMBER})\s*words?\s*以上", _zh_words("at least"),
        kind="word_count", example="这个 essay 要 500 words 以上。",
        counter="Your essay should run to about 500 words."),
    Phrasing(
        rf"(?P<n>{EN_NUMBER})\s*words?\s*(?:以内|之内|以下)", _zh_words("at most"),
        kind="word_count", example="写一篇300 words以内的英文短文。",
        counter="写一篇300字以内的短文。"),
    Phrasing(
        rf"(?P<n>{ZH_NUMBER}){_ZH_WORD}(?:以内|之内|以下)", _zh_words("at most"),
        kind="word_count", example="回答控制在50个英文单词以内。",
        counter="英文回答中全大写单词不超过两个。"),
    Phrasing(
        rf"(?P<n>{ZH_NUMBER}){_ZH_WORD}(?:以上)", _zh_words("at least"),
        kind="word_count", example="用英文写一篇200个单词以上的短文。",
        counter="用英文写一篇200个单词以内的短文。"),
    Phrasing(
        rf"(?:约|大约|大概)\s*(?P<n>{ZH_NUMBER}){_ZH_WORD}", _zh_words("about"),
        kind="word_count", example="用英语写一段大约150个单词的自我介绍。",
        counter="用法语写一段自我介绍。"),
    Phrasing(
        rf"(?<![\d])(?P<n>{ZH_NUMBER}){_ZH_WORD}\s*(?:左右|上下)", _zh_words("about"),
        kind="word_count", example="写一段150个单词左右的英文介绍。",
        counter="写一段150字左右的介绍。"),
    # the word count as a subject: "The word count must come to exactly 25"
    Phrasing(
        rf"\bword\s+count\s+(?:(?:must|should|has\s+to|needs\s+to|will|shall)\s+)?(?:be|come\s+to|"
        rf"equal|total|reach)\s+(?P<q>{QUALIFIER_EN})\s+{_NAMED_N}\b(?!\s*(?:-|–|to)\s*\d)",
        _labelled,
        kind="word_count", example="The word count must come to exactly 4.",
        counter='Must include the word "welcome".'),
    # a labelled word count: "Word count: at least 500", "Word count: 300"
    Phrasing(
        rf"\bword\s+count\s*[:：]\s*(?:(?P<q>{QUALIFIER_EN})\s*)?{_NAMED_N}(?![\d,])(?!\s*(?:-|–"
        rf"|to)\s*\d)",
        _labelled,
        kind="word_count", example="Word count: at least 500.",
        counter="Word count: not important."),
    Phrasing(
        rf"\bword\s+count\s*[:：]\s*(?:between\s+)?{_NAMED_N}\s*(?:-|–|—|to|and)\s*"
        rf"(?P<n2>{EN_NUMBER})",
        lambda m: count("word_count", "between", to_int(m.group("n")), to_int(m.group("n2"))),
        kind="word_count", example="Word count: 250–300.", counter="Word count: at least 500."),
)

TABLES = (Table(_FLAGS, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

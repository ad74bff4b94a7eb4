"""The length of the whole response: English lengths in words ("at least 300 words", "a
500-word essay", "don't go over 120 words", "word limit: 250", "one hundred and fifty words",
"Word count: 300"), Chinese lengths in characters ("不少于800字", "1000-1200字", "字数800字左
右", "写一篇800字的"), and English lengths asked in Chinese ("不超过八十个单词", "200个单词左右").

"About N" is `between` floor(0.8 N) and ceil(1.2 N); "more than N" is at least N + 1, "less
than N" at most N - 1. A length in number words counts only from fifty up ("three words that
rhyme" is no length)."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_COMPOUND, EN_NUMBER, ZH_NUMBER, about, to_int
from rubrics.checks.phrasings.language import LANGUAGE_NAMES
from rubrics.checks.phrasings.shared import (
    ABOUT_EN,
    AT_LEAST_EN,
    AT_MOST_EN,
    DASH,
    EN_N,
    LESS_THAN_EN,
    MORE_THAN_EN,
    QUALIFIER_EN,
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
    compile_rules,
    count,
    numbers_of,
    relation_of,
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


def _length(kind: str, relation: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        numbers = numbers_of(m)
        if relation == "between":
            return count(kind, "between", *numbers[:2])
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


_RULES: tuple[tuple[str, Build] | tuple[str, Build, str, tuple[int, int]], ...] = (
    # English lengths in words
    (rf"(?:between\s+)?{EN_N}{DASH}{EN_N}\s*(?:-\s*)?words?\b", _words("between"), *WORDS_GATE),
    (rf"(?:{AT_LEAST_EN})\s*{EN_N}\s*(?:-\s*)?words?\b", _words("at least"), *WORDS_GATE),
    (rf"\b(?:{MORE_THAN_EN})\s+{EN_N}\s*(?:-\s*)?words?\b", _words("more than"), *WORDS_GATE),
    (rf"\b(?:{LESS_THAN_EN})\s+{EN_N}\s*(?:-\s*)?words?\b", _words("less than"), *WORDS_GATE),
    (rf"{EN_N}\s*(?:-\s*)?words?\s+(?:or\s+more|minimum|at\s+least)\b|{EN_N}\+\s*(?:-\s*)?words?\b",
     _words("at least"), *WORDS_GATE),
    (rf"(?:{AT_MOST_EN})\s*(?:a\s+|the\s+)?{EN_N}\s*(?:-\s*)?words?\b", _words("at most"),
     *WORDS_GATE),
    (rf"{EN_N}\s*(?:-\s*)?words?\s+(?:or\s+(?:less|fewer)|max(?:imum)?|at\s+most)\b",
     _words("at most"), *WORDS_GATE),
    (rf"(?:exactly|precisely)\s+{EN_N}\s*(?:-\s*)?words?\b", _words("exactly"), *WORDS_GATE),
    (rf"(?:{ABOUT_EN})\s+{EN_N}\s*(?:-\s*)?words?\b", _words("about"), *WORDS_GATE),
    # (not the length of a text the request gives: "translate these 20 words", "summarize this
    # 2000-word article")
    (r"(?<![\w,.\-–—~])(?<!these\s)(?<!those\s)(?<!the\s)(?<!this\s)(?<!that\s)(?<!my\s)"
     r"(?<!our\s)(?<!his\s)(?<!her\s)(?<!their\s)(?<!list\sof\s)(\d{1,3}(?:,\d{3})+|\d{2,6})"
     r"(?:\s+|-)words?\b(?!\s+(?:that|which|from|related|starting|beginning|ending|in\s+(?:"
     rf"{LANGUAGE_NAMES})\b))", _words("about"), *WORDS_GATE),
    # Chinese lengths in characters
    (rf"{ZH_N}\s*(?:{_ZH_CHARS})?\s*(?:-|–|—|~|～|〜|到|至)\s*{ZH_N}\s*{_ZH_CHARS}",
     _zh_chars("between")),
    (rf"(?:{ZH_AT_LEAST})\s*{ZH_N}\s*{_ZH_CHARS}|{ZH_N}\s*{_ZH_CHARS}(?:以上|起)",
     _zh_chars("at least")),
    (rf"(?:{ZH_MORE_THAN})\s*{ZH_N}\s*{_ZH_CHARS}", _zh_chars("more than")),
    (rf"(?:{ZH_LESS_THAN})\s*{ZH_N}\s*{_ZH_CHARS}", _zh_chars("less than")),
    (rf"(?:{ZH_AT_MOST})\s*{ZH_N}\s*{_ZH_CHARS}|{ZH_N}\s*{_ZH_CHARS}(?:以内|以下|之内)|"
     rf"(?:控制|限制|限定)在\s*{ZH_N}\s*{_ZH_CHARS}(?:以内|之内|以下|内)",
     _zh_chars("at most")),
    (rf"(?:约|大约|大概|左右)\s*{ZH_N}\s*{_ZH_CHARS}|{ZH_NOT_RANGE}{ZH_N}\s*{_ZH_CHARS}\s*(?:左右|上下)|"
     rf"(?:字数|篇幅|长度)(?:要求|控制|限制|保持|大约|大概|为|在|是|约|：|:|\s)*{ZH_N}\s*{_ZH_CHARS}"
     r"(?![以内之下左上])|"
     rf"(?:一篇|一份|一段|写|撰写)\s*(\d+)\s*{_ZH_CHARS}(?:的|之)", _zh_chars("about")),
    (rf"(?:{ABOUT_EN})\s*{ZH_N}\s*{_ZH_CHARS}", _zh_chars("about")),
    # English lengths said otherwise
    # a bound a negation turns: "don't go over 120 words", "never write more than 80 words"
    (rf"\b(?:don['’]t|do\s+not|never|shouldn['’]t|should\s+not|must\s+not|mustn['’]t|cannot|can['’]t|not\s+"
     r"to|without)\s+(?:(?:go|be|run|get|write|use|type|going|writing|using)\s+)?(?:over|above|"
     rf"beyond|past|exceed(?:ing)?|surpass(?:ing)?|more\s+than|longer\s+than)\s+{_NAMED_N}{_WORDS}",
     _bound("at most")),
    (rf"\b(?:don['’]t|do\s+not|never|shouldn['’]t|should\s+not|must\s+not|cannot|can['’]t|not\s+to)\s+"
     rf"(?:(?:go|be|fall|write|use)\s+)?(?:under|below|less\s+than|fewer\s+than|shorter\s+than)\s+"
     rf"{_NAMED_N}{_WORDS}", _bound("at least")),
    # a labelled limit: "word limit: 250", "maximum word count of 300", "minimum word count: 300"
    (rf"\b(?:word\s+(?:limit|cap|max(?:imum)?|ceiling|budget)|max(?:imum)?\s+(?:word\s+count|"
     rf"length))\s*(?:[:：=]|of|is|:\s*max(?:imum)?)?\s*{_NAMED_N}(?:{_WORDS})?(?!\s*(?:-|to|characters?|"
     r"pages?|minutes?|%))", _bound("at most")),
    (rf"\b(?:minimum\s+(?:word\s+count|length)|word\s+(?:minimum|floor))\s*(?:[:：=]|of|is)?\s*"
     rf"{_NAMED_N}(?:{_WORDS})?(?!\s*(?:-|to|characters?|pages?|minutes?|%))", _bound("at least")),
    # "400 or more words", "40 or fewer words"
    (rf"{_NAMED_N}\s+or\s+more{_WORDS}", _bound("at least")),
    (rf"{_NAMED_N}\s+or\s+(?:fewer|less){_WORDS}", _bound("at most")),
    # "tops 100 words", "100 words tops"
    (rf"\btops\s+{_NAMED_N}{_WORDS}", _bound("at most")),
    (rf"{_NAMED_N}{_WORDS}\s+(?:tops|top|max|at\s+the\s+(?:most|max)|or\s+(?:under|below|so\s+max))\b",
     _bound("at most")),
    # a length in number words: "write one hundred and fifty words"
    (rf"(?<![\w-])(?<!these\s)(?<!those\s)(?<!the\s)(?P<n>{EN_COMPOUND})(?:\s+|-){_WORDS}",
     _in_words),
    # an English length asked in Chinese
    (rf"{ZH_START}{_ZH_Q}\s*(?P<n>{ZH_NUMBER})(?:{_ZH_WORD}|\s*words?\b)", _zh_words("stated")),
    (rf"(?P<n>{EN_NUMBER})\s*words?\s*(?:左右|上下)", _zh_words("about")),
    (rf"(?P<n>{EN_NUMBER})\s*words?\s*以上", _zh_words("at least")),
    (rf"(?P<n>{EN_NUMBER})\s*words?\s*(?:以内|之内|以下)", _zh_words("at most")),
    (rf"(?P<n>{ZH_NUMBER}){_ZH_WORD}(?:以内|之内|以下)", _zh_words("at most")),
    (rf"(?P<n>{ZH_NUMBER}){_ZH_WORD}(?:以上)", _zh_words("at least")),
    (rf"(?:约|大约|大概)\s*(?P<n>{ZH_NUMBER}){_ZH_WORD}", _zh_words("about")),
    (rf"(?<![\d])(?P<n>{ZH_NUMBER}){_ZH_WORD}\s*(?:左右|上下)", _zh_words("about")),
    # the word count as a subject: "The word count must come to exactly 25"
    (rf"\bword\s+count\s+(?:(?:must|should|has\s+to|needs\s+to|will|shall)\s+)?(?:be|come\s+to|"
     rf"equal|total|reach)\s+(?P<q>{QUALIFIER_EN})\s+{_NAMED_N}\b(?!\s*(?:-|–|to)\s*\d)",
     _labelled),
    # a labelled word count: "Word count: at least 500", "Word count: 300"
    (rf"\bword\s+count\s*[:：]\s*(?:(?P<q>{QUALIFIER_EN})\s*)?{_NAMED_N}(?![\d,])(?!\s*(?:-|–|to)\s*\d)",
     _labelled),
    (rf"\bword\s+count\s*[:：]\s*(?:between\s+)?{_NAMED_N}\s*(?:-|–|—|to|and)\s*(?P<n2>{EN_NUMBER})",
     lambda m: count("word_count", "between", to_int(m.group("n")), to_int(m.group("n2")))),
)

RULES: tuple[tuple[Matcher, Build], ...] = compile_rules(_RULES, _FLAGS)

"""Lengths and counts of parts in the wordings the first phrasings missed: a bound a negation
turns ("don't go over 120 words"), a labelled limit ("word limit: 250"), a length in number
words ("one hundred and fifty words"), a count of parts that opens its clause ("four paragraphs
separated by ***"), English word counts asked in Chinese ("不超过八十个单词"), and sections each
opened by a marker ("4 parts, each beginning with 'PART X'", "with 'SECTION X' at the start of
each"); package-internal."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_COMPOUND, EN_NUMBER, ZH_NUMBER, about, to_int
from rubrics.checks.phrasings.common import (
    _PART_ADJECTIVE_EN,
    _QUALIFIER_EN,
    _ZH_AT_LEAST,
    _ZH_AT_MOST,
    _ZH_LESS_THAN,
    _ZH_MORE_THAN,
    _ZH_START,
    Build,
    _count,
    _unit_extra,
    _unit_kind,
    relation_of,
)
from rubrics.checks.phrasings.short import _NOT_RANGE_EN, zh_relation_of

_I = re.I | re.S
_N = rf"(?P<n>{EN_NUMBER})"
_WORDS = r"\s*(?:-\s*)?words?\b"
# a length in number words is the response's only when it is one no list of things would have
# ("one hundred and fifty words"; not "three words that rhyme")
MIN_WORDS_IN_WORDS = 50
_MARK_VERBS = r"(?:mark|begin|start|label|head|title|prefix|open|number|name|introduce)\w*"
_SECTION_UNITS = r"(?:sections?|parts?|chapters?|segments?|days?)"
_ZH_SECTIONS = r"(?:部分|章节|板块|小节|节|章)"


def _bound(relation: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        return _count("word_count", relation, to_int(m.group("n")))
    return build


def _labelled(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A labelled word count: its qualifier's relation, about N with none."""
    n = to_int(m.group("n"))
    if m.group("q"):
        return _count("word_count", relation_of(m.group("q")), n)
    return [] if n is None else _count("word_count", "between", *about(n))


def _in_words(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    n = to_int(m.group("n"))
    if n is None or n < MIN_WORDS_IN_WORDS:
        return []
    return _count("word_count", "between", *about(n))


def _zh_words(relation: str) -> Build:
    """An English length asked in Chinese: "不超过八十个单词", "200个单词左右"."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        n = to_int(m.group("n"))
        if relation == "about":
            return [] if n is None else _count("word_count", "between", *about(n))
        if relation == "stated":
            return _count("word_count", zh_relation_of(m.group("q")), n)
        return _count("word_count", relation, n)
    return build


def _opening_count(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of parts that opens its clause: "Four paragraphs, separated by ***"."""
    kind = _unit_kind(m.group("unit"))
    return _count(kind, "exactly", to_int(m.group("n")), **_unit_extra(kind))


def _marked(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """N sections, each opened by a marker and a number ("SECTION X" stands for SECTION 1,
    SECTION 2, ...)."""
    return _count("section_count", "exactly", to_int(m.group("n")), marker=m.group("marker"))


def _headed(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """N parts, each under a heading of its own: N headings ("one heading per subsection, 2
    subsections", "分为四个部分，每部分用二级标题")."""
    return _count("heading_count", "exactly", to_int(m.group("n")))


_PARTS_EN = r"(?:sub)?sections?|parts?|topics?|chapters?|segments?"
# the parts "each" is said of, right before it: "in at least 3 parts, each ..."
_PARTS_BEFORE = re.compile(rf"(?:\b(?P<q>{_QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:"
                           rf"{_PART_ADJECTIVE_EN}\s+)?(?:{_PARTS_EN})\s*,?\s+$", re.I)


def _each_headed(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """"4 sections, each with a ## heading": as many headings as the parts before "each" (the
    parts' own count stays a check of its own)."""
    parts = _PARTS_BEFORE.search(m.string, max(0, m.start() - 60), m.start())
    if not parts:
        return []
    relation = relation_of(parts.group("q")) if parts.group("q") else "exactly"
    return _count("heading_count", relation, to_int(parts.group("n")))
_HEADING_EN = (r"(?:markdown\s+|#{1,6}\s+|h[1-6]\s+|level[\s-]\w+\s+|section\s+)?(?:sub)?"
               r"(?:heading|header)")
_ZH_Q = rf"(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST}|{_ZH_MORE_THAN}|{_ZH_LESS_THAN})"
_ZH_WORD = r"\s*个?(?:英文|英语)?(?:单词|词)(?![语汇组典])"
# "SECTION X" stands for SECTION 1, SECTION 2...; "Day 1, Day 2 and Day 3" names them
_MARKER = r"[\"'“‘`]?(?P<marker>[A-Za-z]+)\s+(?:X|1)\b[\"'”’`]?"

_RULES: tuple[tuple[str, Build], ...] = (
    # a bound a negation turns: "don't go over 120 words", "never write more than 80 words"
    (rf"\b(?:don['’]t|do\s+not|never|shouldn['’]t|should\s+not|must\s+not|mustn['’]t|cannot|can['’]t|not\s+"
     r"to|without)\s+(?:(?:go|be|run|get|write|use|type|going|writing|using)\s+)?(?:over|above|"
     rf"beyond|past|exceed(?:ing)?|surpass(?:ing)?|more\s+than|longer\s+than)\s+{_N}{_WORDS}",
     _bound("at most")),
    (rf"\b(?:don['’]t|do\s+not|never|shouldn['’]t|should\s+not|must\s+not|cannot|can['’]t|not\s+to)\s+"
     rf"(?:(?:go|be|fall|write|use)\s+)?(?:under|below|less\s+than|fewer\s+than|shorter\s+than)\s+"
     rf"{_N}{_WORDS}", _bound("at least")),
    # a labelled limit: "word limit: 250", "maximum word count of 300", "minimum word count: 300"
    (rf"\b(?:word\s+(?:limit|cap|max(?:imum)?|ceiling|budget)|max(?:imum)?\s+(?:word\s+count|"
     rf"length))\s*(?:[:：=]|of|is|:\s*max(?:imum)?)?\s*{_N}(?:{_WORDS})?(?!\s*(?:-|to|characters?|"
     r"pages?|minutes?|%))", _bound("at most")),
    (rf"\b(?:minimum\s+(?:word\s+count|length)|word\s+(?:minimum|floor))\s*(?:[:：=]|of|is)?\s*"
     rf"{_N}(?:{_WORDS})?(?!\s*(?:-|to|characters?|pages?|minutes?|%))", _bound("at least")),
    # "400 or more words", "40 or fewer words"
    (rf"{_N}\s+or\s+more{_WORDS}", _bound("at least")),
    (rf"{_N}\s+or\s+(?:fewer|less){_WORDS}", _bound("at most")),
    # "tops 100 words", "100 words tops"
    (rf"\btops\s+{_N}{_WORDS}", _bound("at most")),
    (rf"{_N}{_WORDS}\s+(?:tops|top|max|at\s+the\s+(?:most|max)|or\s+(?:under|below|so\s+max))\b",
     _bound("at most")),
    # a length in number words: "write one hundred and fifty words"
    (rf"(?<![\w-])(?<!these\s)(?<!those\s)(?<!the\s)(?P<n>{EN_COMPOUND})(?:\s+|-){_WORDS}",
     _in_words),
    # an English length asked in Chinese
    (rf"{_ZH_START}{_ZH_Q}\s*(?P<n>{ZH_NUMBER})(?:{_ZH_WORD}|\s*words?\b)", _zh_words("stated")),
    (rf"(?P<n>{EN_NUMBER})\s*words?\s*(?:左右|上下)", _zh_words("about")),
    (rf"(?P<n>{EN_NUMBER})\s*words?\s*以上", _zh_words("at least")),
    (rf"(?P<n>{EN_NUMBER})\s*words?\s*(?:以内|之内|以下)", _zh_words("at most")),
    (rf"(?P<n>{ZH_NUMBER}){_ZH_WORD}(?:以内|之内|以下)", _zh_words("at most")),
    (rf"(?P<n>{ZH_NUMBER}){_ZH_WORD}(?:以上)", _zh_words("at least")),
    (rf"(?:约|大约|大概)\s*(?P<n>{ZH_NUMBER}){_ZH_WORD}", _zh_words("about")),
    (rf"(?<![\d])(?P<n>{ZH_NUMBER}){_ZH_WORD}\s*(?:左右|上下)", _zh_words("about")),
    # a count of parts opening its clause: "four paragraphs separated by ***"
    (rf"(?:^|(?<=[,:;(—，：；（、])|(?<=[.!?]\s)|(?<=\n))\s*{_NOT_RANGE_EN}(?P<n>{EN_NUMBER})\s+"
     rf"(?:{_PART_ADJECTIVE_EN}\s+)?(?P<unit>paragraphs?|paras?|sentences?|sections|bullet\s+points|"
     r"bullets)\b(?=\s*(?:[,.;:!?)]|$|\s+(?:separated|divided|split|each|only|please|total|"
     r"max(?:imum)?|with|in\s+total|long|(?:are|is)\s+(?:expected|required|needed|wanted|"
     r"preferred|ideal)|(?:should|must|shall|will)\s+be)\b))", _opening_count),
    # the word count as a subject: "The word count must come to exactly 25"
    (rf"\bword\s+count\s+(?:(?:must|should|has\s+to|needs\s+to|will|shall)\s+)?(?:be|come\s+to|"
     rf"equal|total|reach)\s+(?P<q>{_QUALIFIER_EN})\s+{_N}\b(?!\s*(?:-|–|to)\s*\d)", _labelled),
    # a labelled word count: "Word count: at least 500", "Word count: 300"
    (rf"\bword\s+count\s*[:：]\s*(?:(?P<q>{_QUALIFIER_EN})\s*)?{_N}(?![\d,])(?!\s*(?:-|–|to)\s*\d)",
     _labelled),
    (rf"\bword\s+count\s*[:：]\s*(?:between\s+)?{_N}\s*(?:-|–|—|to|and)\s*(?P<n2>{EN_NUMBER})",
     lambda m: _count("word_count", "between", to_int(m.group("n")), to_int(m.group("n2")))),
    # headings counted in Chinese: "包含至少3个二级标题"
    (rf"(?:包含|包括|使用|设置|设|有|分为|分成)\s*{_ZH_Q}?\s*(?P<n>{ZH_NUMBER})\s*个(?:[一二三]级|小|子)?"
     r"标题", lambda m: _count("heading_count", zh_relation_of(m.group("q") or ""),
                            to_int(m.group("n")))),
    # a count of parts as an adjective without its hyphen: "a 4 paragraph essay"
    (rf"\ban?\s+(?P<n>{EN_NUMBER})\s+(?P<unit>paragraph|sentence|section|bullet[\s-]point)\s+"
     r"(?!each\b|per\b|long\b)[a-z]+", _opening_count),
    # sections each opened by a marker: "4 parts, each beginning with 'PART X'"
    (rf"\b(?P<n>{EN_NUMBER})\s+(?:(?:{_PART_ADJECTIVE_EN}|numbered)\s+)?{_SECTION_UNITS}\b"
     rf"[^\n]{{0,100}}?\b{_MARK_VERBS}\b[^\n.;]{{0,50}}?{_MARKER}", _marked),
    (rf"\b(?P<n>{EN_NUMBER})\s+(?:{_PART_ADJECTIVE_EN}\s+)?{_SECTION_UNITS}\b[^\n]{{0,100}}?"
     rf"{_MARKER}\s+(?:at\s+the\s+(?:start|beginning|top|head)|to\s+(?:mark|begin|start|open|"
     r"label|introduce)|as\s+(?:the|a|its)\s+(?:heading|header|title|label|marker))"
     r"(?:\s+of\s+(?:each|every)(?:\s+(?:one|section|part|chapter))?)?", _marked),
    # N parts, each under a heading of its own
    (r"\beach\s+(?:one\s+)?(?:with|under|having|has|gets|getting|"
     rf"(?:starting|opening|beginning)\s+with|headed\s+by|introduced\s+by)\s+(?:a|an|one|its\s+own)"
     rf"\s+{_HEADING_EN}", _each_headed),
    # "a markdown header for each of the 4 sections", "give each of the 3 parts a heading"
    (rf"\b(?:one|a|an)\s+{_HEADING_EN}\s+(?:per|for|on|above|over)\s+(?:each|every)\s+(?:one\s+)?of\s+"
     rf"(?:the|your|these|those)\s+(?P<n>{EN_NUMBER})\s+(?:{_PARTS_EN})\b|\beach\s+of\s+(?:the|your)\s+"
     rf"(?P<n2>{EN_NUMBER})\s+(?:{_PARTS_EN})\s+(?:a|an|its\s+own)\s+{_HEADING_EN}",
     lambda m: _count("heading_count", "exactly", to_int(m.group("n") or m.group("n2")))),
    (rf"\b(?:one|a|an)\s+{_HEADING_EN}\s+(?:per|for\s+each|for\s+every)\s+(?P<unit>(?:sub)?section|"
     rf"part|topic|chapter)\s*[,;]\s*(?P<n>{EN_NUMBER})\s+(?P=unit)s?\b", _headed),
    (rf"(?P<n>{ZH_NUMBER})\s*个?\s*{_ZH_SECTIONS}\s*[，,]?\s*每(?:个|一)?\s*{_ZH_SECTIONS}?\s*(?:都|均)?"
     r"(?:要|需|需要|须|请|应)?\s*(?:用|有|加|配|设|带|使用)\s*(?:一个)?\s*(?:markdown|md)?\s*"
     r"(?:[一二三]级|小|#{1,6}\s*)?标题", _headed),
    # in Chinese or both: "分 3 个 sections，每个 section 以 'Part 1' 开头", "分为四部分，每部分以
    # “Day 1”开头"
    (rf"(?P<n>{EN_NUMBER}|{ZH_NUMBER})\s*个?\s*(?:{_SECTION_UNITS}|{_ZH_SECTIONS})[^\n。]{{0,60}}?"
     rf"每(?:个|一)?\s*(?:{_SECTION_UNITS}|{_ZH_SECTIONS})?\s*(?:都|均|须|需|要|必须)*\s*(?:以|用)\s*"
     rf"{_MARKER}", _marked),
)

RULES: tuple[tuple[re.Pattern[str], Build], ...] = tuple(
    (re.compile(p, _I), b) for p, b in _RULES)

"""Counts of the response's parts: paragraphs, sentences and sections ("in 3 paragraphs", "3
sentences or fewer", "between 3 and 5 sections", "a two-sentence note", "limit your answer to
3 sentences", "Four paragraphs, separated by ***", "make it four sentences long", "somewhere
from 5 to 7 sentences", "in a dozen sentences or so" (about 12), "分为三个部分", "用三句话",
"分4-5个自然段"); with them the counts of other units named the same way ("in 5 bullet
points", "2 highlighted sections", "3 placeholders"), the rows of the paragraph noun family
(`families`) and the mark between paragraphs (`divider`). Sections opened by a marker are
`sections`'s, headings `lists`'s.

A count per part ("a one-sentence caption for each photo") or of a form named as a topic
("the structure of a 5-paragraph essay") is no check."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, about, to_int
from rubrics.checks.phrasings.families import noun_rows
from rubrics.checks.phrasings.shared import (
    ABOUT_EN,
    DASH,
    EN_N,
    FILED_UNDER,
    NOT_RANGE_EN,
    PART_ADJECTIVE_EN,
    QUALIFIER_EN,
    SECOND_BOUND,
    UNIT_EN,
    UNITS_GATE,
    ZH_AT_LEAST,
    ZH_AT_MOST,
    ZH_LESS_THAN,
    ZH_MORE_THAN,
    ZH_N,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    numbers_of,
    relation_of,
    rules_of,
    two_bounds,
    unit_extra,
    unit_kind,
    zh_relation_of,
)

_FLAGS = re.I | re.S
_ZH_UNITS = {"段": "paragraph_count", "个段落": "paragraph_count", "段落": "paragraph_count",
             "个自然段": "paragraph_count", "自然段": "paragraph_count",
             "个部分": "section_count", "部分": "section_count", "个章节": "section_count",
             "章": "section_count", "个小标题": "heading_count", "句话": "sentence_count",
             "个板块": "section_count", "大板块": "section_count",
             "句": "sentence_count"}


def _zh_units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    kind = _ZH_UNITS[m.group(2)]
    extra: dict[str, Any] = {"divider": None} if kind == "paragraph_count" else (
        {"marker": None} if kind == "section_count" else {})
    return count(kind, "exactly", to_int(m.group(1)), **extra)


# "分" as "divide into" ("分4-5个自然段"), not inside 部分, 满分, 评分, 充分, 十分, 百分
_ZH_DIVIDE = r"(?<![部满评充十百得积])分"

# a thing said of each of several: "a one-sentence caption for each photo"
# (not "every" inside a clause about the text's content: "a 4-paragraph story about a butler
# who ends every sentence with 'sir'")
_EACH_LATER = re.compile(r"[^.;\n]{0,40}?\b(?:(?:for|of|on|in|about|to|under|with)\s+(?:each|"
                         r"every)|each|per|apiece)\b", re.I)
# a form named as a topic: "the structure of a 5-paragraph essay"
_FORM_OF = re.compile(r"\b(?:structure|format|outline|template|rules?|parts|example|definition|"
                      r"history|purpose|idea|concept)\s+of\s+(?:an?|the)\s+$", re.I)
# what a whole response is limited to: "limit your answer to 3 sentences"
_WHOLE_EN = (r"it|yourself|(?:your|the)\s+(?:\w+\s+)?(?:response|answer|reply|essay|text|output|"
             r"post|story|summary|description|message|note)")
_ZH_Q = rf"(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST}|{ZH_MORE_THAN}|{ZH_LESS_THAN})"
# words after a count that make it approximate: "in a dozen sentences or so"
_OR_SO = re.compile(r"\s*,?\s+(?:or\s+so|give\s+or\s+take|or\s+thereabouts|more\s+or\s+less)\b",
                    re.I)


def _units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    relation = relation_of(m.group(1) or "")
    if (m.group(1) or "").lower() == "under" and FILED_UNDER.search(m.string, 0, m.start()):
        relation = "exactly"
    kind = unit_kind(m.group(3))
    n = to_int(m.group(2))
    if relation == "exactly" and n is not None and _OR_SO.match(m.string, m.end()):
        return count(kind, "between", *about(n), **unit_extra(kind))
    return count(kind, relation, n, **unit_extra(kind))


def _unit_range(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A range of parts: "in 4-5 paragraphs", "between 3 and 5 sections"."""
    kind = unit_kind(m.group(3))
    return count(kind, "between", to_int(m.group(1)), to_int(m.group(2)), **unit_extra(kind))


def _units_two_bounds(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    kind = unit_kind(m.group("unit"))
    return two_bounds(kind, **unit_extra(kind))(m)


def _about_units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """About N parts: between floor(0.8 N) and ceil(1.2 N), as a length about N."""
    n = to_int(m.group("n"))
    if n is None:
        return []
    kind = unit_kind(m.group("unit"))
    return count(kind, "between", *about(n), **unit_extra(kind))


def _hyphen_units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A length in a hyphenated adjective ("a two-sentence note", "a 3-paragraph essay"):
    exactly that many; not when the text is one of several ("a one-sentence caption for each
    photo")."""
    if _EACH_LATER.match(m.string, m.end()) or _FORM_OF.search(m.string, 0, m.start()):
        return []
    kind = unit_kind(m.group("unit").replace("-", " "))
    extra: dict[str, Any] = {"divider": None} if kind == "paragraph_count" else {}
    return count(kind, "exactly", to_int(m.group("n")), **extra)


def _units_bounded(relation: str) -> Build:
    """A bound on a count of parts ("3 sentences or fewer", "limit it to 3 paragraphs")."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        kind = unit_kind(m.group("unit"))
        extra: dict[str, Any] = {}
        if kind == "paragraph_count":
            extra["divider"] = None
        if kind == "section_count":
            extra["marker"] = None
        return count(kind, relation, to_int(m.group("n")), **extra)
    return build


def _limited(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """At most N words or parts: "limit your answer to N words / sentences"."""
    if m.group("unit").lower().startswith("word"):
        return count("word_count", "at most", to_int(m.group("n")))
    return _units_bounded("at most")(m)


def _zh_sentences(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of sentences: "用三句话", "不超过两句话", "三句话以内"."""
    relation = "at most" if m.group("within") else zh_relation_of(m.group("q") or "")
    return count("sentence_count", relation, to_int(m.group("n")))


def _opening_count(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of parts that opens its clause: "Four paragraphs, separated by ***"; about N
    when approximate words follow ("Five sentences or so")."""
    kind = unit_kind(m.group("unit"))
    n = to_int(m.group("n"))
    if n is not None and _OR_SO.match(m.string, m.end()):
        return count(kind, "between", *about(n), **unit_extra(kind))
    return count(kind, "exactly", n, **unit_extra(kind))


# the start of a range right before a count: "3-", "3 to ", "three or "
_RANGE_START = re.compile(rf"(?:\d|\b{EN_NUMBER})\s*(?:-|–|—|~|\bto|\bor|\band)\s*$", re.I)


def _long(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A length in parts ("four sentences long"); not the end of a range ("3 to 5 paragraphs
    long", which the range rule reads)."""
    if _RANGE_START.search(m.string, max(0, m.start() - 30), m.start()):
        return []
    return _opening_count(m)


_PHRASINGS: tuple[Phrasing, ...] = (
    # English counts of parts ("3 sentences or fewer" before "in 3 sentences": the longer
    # reading wins)
    Phrasing(
        rf"(?:\b\w+\s+)?{NOT_RANGE_EN}\b(?P<n>{EN_NUMBER})\s+(?P<unit>{UNIT_EN[1:-1]})\s+"
        r"(?:or\s+(?:fewer|less)|at\s+most|max(?:imum)?|tops)\b", _units_bounded("at most"),
        *UNITS_GATE,
        kind="sentence_count", example="Two sentences max.", counter="Two sentences."),
    Phrasing(
        rf"(?:\b\w+\s+)?{NOT_RANGE_EN}\b(?P<n>{EN_NUMBER})\s+(?P<unit>{UNIT_EN[1:-1]})\s+"
        r"(?:or\s+more|at\s+least|minimum)\b", _units_bounded("at least"), *UNITS_GATE,
        kind="sentence_count", example="4 sentences minimum", counter="4 sentences"),
    Phrasing(
        rf"(?:\b({QUALIFIER_EN}|in|as|of|into|with|has|have|contains?|containing|include|use|write|"
        rf"only|be|are|consist\s+of|using|give(?:\s+(?:me|us))?|make\s+it)\s+)({EN_NUMBER})\s+"
        rf"(?:{PART_ADJECTIVE_EN}\s+)?"
        rf"{UNIT_EN}\b(?!\s+(?:headings?|headers?|titles?|breaks?|names?)\b)", _units, *UNITS_GATE,
        kind="paragraph_count", example="in 4 paragraphs", counter="Layout: 4 paragraphs."),
    Phrasing(
        rf"(?:\b(?:in|into|of|with|has|have|contains?|containing|include|use|write|be|using|"
        rf"consist\s+of|between|from)\s+|(?<=\())\s*{EN_N}{DASH}{EN_N}\s+(?:{PART_ADJECTIVE_EN}\s+)?"
        r"(paragraphs|sentences|sections|parts|chapters)\b", _unit_range,
        kind="paragraph_count", example="Write it in 4-5 paragraphs.",
        counter="Write it in 3 paragraphs."),
    # two bounds, the second without its unit: "at least 3 paragraphs and at most 5"
    Phrasing(
        rf"\b(?P<q1>{QUALIFIER_EN})\s+(?P<n1>{EN_NUMBER})\s+(?P<unit>paragraphs?|sentences?|"
        rf"sections?|parts?|chapters?){SECOND_BOUND}", _units_two_bounds, *UNITS_GATE,
        kind="paragraph_count", example="at least 3 paragraphs and at most 5.",
        counter="at least 3 paragraphs and at most 5 sentences each."),
    # an approximate count: "in about 6 sentences", "roughly five paragraphs"
    Phrasing(
        rf"\b(?:{ABOUT_EN})\s+(?P<n>{EN_NUMBER})\s+(?:{PART_ADJECTIVE_EN}\s+)?(?P<unit>paragraphs|"
        r"paras|sentences|sections|parts|chapters)\b", _about_units, *UNITS_GATE,
        kind="sentence_count", example="in about 6 sentences", counter="about 6 words"),
    # hyphenated counts and limits: "a two-sentence note", "limit it to 3 paragraphs"
    Phrasing(
        rf"(?<![\w-])(?P<n>{EN_NUMBER})-(?P<unit>sentence|paragraph|bullet(?:[\s-]point)?)s?\b"
        rf"(?!-)",
        _hyphen_units,
        kind="sentence_count", example="a two-sentence note",
        counter="Write a multi-sentence note."),
    Phrasing(
        rf"\b(?:(?:limit|keep|restrict|cap|hold)\s+(?:{_WHOLE_EN})\s+to|cap\s+(?:{_WHOLE_EN})\s+"
        rf"at)\s+(?:just\s+|only\s+)?(?P<n>{EN_NUMBER})\s+(?P<unit>words?|{UNIT_EN[1:-1]})\b",
        _limited,
        kind="paragraph_count", example="Keep it to 2 paragraphs max.",
        counter="Keep it to 2 sentences or fewer."),
    # Chinese counts of parts
    Phrasing(
        rf"(?:分为|分成|包括|包含|共|分|划分为)\s*{ZH_N}\s*(个部分|部分|段落|个段落|个自然段"
        rf"|自然段|"
        r"个章节|个小标题|段|句话)", _zh_units,
        kind="paragraph_count", example="请分成四段。", counter="请写成三个自然段。"),
    Phrasing(
        rf"(?:分为|分成|包含|包括|按|按照|要求|涵盖)[^。；\n]{{1,60}}?(?<![每第]){ZH_N}\s*(个部分"
        rf"|个板块|"
        r"大板块|个章节)", _zh_units,
        kind="section_count", example="要求：字数800字左右，分成三个部分。",
        counter="字数要求2000字左右，分4-5个自然段。"),
    Phrasing(
        rf"(?:(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST})|用|以|限|仅用|只用|(?:控制|限定|限制|保持)在)\s*"
        rf"(?P<n>{ZH_NUMBER})\s*"
        r"句话(?P<within>以内|之内|以下)?", _zh_sentences,
        kind="sentence_count", example="不超过三句话。", counter="不超过300 words。"),
    Phrasing(
        rf"(?:分为|分成|共|{_ZH_DIVIDE})\s*{ZH_N}\s*(?:-|–|~|～|到|至)\s*{ZH_N}\s*个?(?:自然)?"
        r"(?:段落|段)",
        lambda m: count("paragraph_count", "between", *numbers_of(m)[:2], divider=None),
        kind="paragraph_count", example="字数要求2000字左右，分4-5个自然段。",
        counter="要求：字数800字左右，分成三个部分。"),
    # a count of parts opening its clause: "four paragraphs separated by ***", "Five sentences
    # exactly, ...", "Three paragraphs is what I need", a spec line "- Layout: two paragraphs"
    Phrasing(
        rf"(?:^|(?<=[,:;(—，：；（、])|(?<=[.!?]\s)|(?<=\n))\s*{NOT_RANGE_EN}(?P<n>{EN_NUMBER})\s+"
        rf"(?:{PART_ADJECTIVE_EN}\s+)?(?P<unit>paragraphs?|paras?|sentences?|sections"
        rf"|bullet\s+points|"
        r"bullets)\b(?=\s*(?:[,.;:!?)\n]|$|\s+(?:separated|divided|split|each|only|please|total|"
        r"on|about|max(?:imum)?|with|in\s+total|long|exactly|precisely|(?:are|is)\s+(?:expected|"
        r"required|needed|wanted|preferred|ideal|what)|(?:should|must|shall|will)\s+be)\b))",
        _opening_count,
        kind="sentence_count", example="Three short sentences on winter mornings.",
        counter="4 sentences minimum"),
    # a length in parts wherever it stands: "make it four sentences long", "at least 350 words
    # and five paragraphs long"
    Phrasing(
        rf"(?<![\w-])(?P<n>{EN_NUMBER})\s+(?:{PART_ADJECTIVE_EN}\s+)?"
        r"(?P<unit>sent[ae]nces?|paragraphs?|paras?)\s+long\b", _long,
        *UNITS_GATE,
        kind="sentence_count", example="Make it four sentences long.",
        counter="Make it four words long."),
    # a count of parts as an adjective without its hyphen: "a 4 paragraph essay"
    Phrasing(
        rf"\ban?\s+(?P<n>{EN_NUMBER})\s+(?P<unit>paragraph|sentence|section|bullet[\s-]point)\s+"
        r"(?!each\b|per\b|long\b)[a-z]+", _opening_count,
        kind="sentence_count", example="write a 5 sentence horror story",
        counter="Write a multi-sentence note."),
)

# the paragraph noun family's rows (`families`), one (example, counter-example) per structure
_PARAGRAPHS = noun_rows("paragraph_count", (
    # before the noun; labelled; after the noun; after the noun with a unit; in parentheses;
    # a limit; referred back to
    ("写两段。", "请写一段产品描述。"),
    ("Paragraphs: 3 to 5.", "3 paragraphs"),
    ("Use paragraphs, at least five of them.", "Use paragraphs, at least five words each."),
    ("段落数量要 5 个。", "段落数量要适中。"),
    ("Write short paragraphs (exactly 4).", "Write short paragraphs (no lists)."),
    ("Limit the paragraphs to 3.", "Limit the paragraphs to short ones."),
    ("Short paragraphs; 4 in total", "Short paragraphs; 4 sentences in total"),
))

TABLES = (Table(_FLAGS, _PHRASINGS), _PARAGRAPHS)

# the mark between paragraphs: "separated by ***", "divided with a line containing only ---",
# "用***分隔"
_DIVIDER = re.compile(
    r"(?:markdown\s+divider|(?:separate[ds]?|divided?|split|mark\s+the\s+breaks?)"
                      r"\b[^.\n]{0,40}?\b"
                      r"(?:with|by|using))\s*:?\s*(?:the\s+)?"
                      r"(?:markdown\s+divider\s*:?\s*)?"
                      # the mark on a line of its own: "with a line containing only ---"
                      r"(?:an?\s+(?:line|row)\s+(?:containing|with|of|holding|that\s+(?:has|"
                      r"contains|is))\s+(?:only|just|nothing\s+but)\s+)?"
                      r"`?(\*[ ]?\*[ ]?\*|-[ ]?-[ ]?-)`?|"
                      r"用\s*(\*\*\*|---)\s*分隔|"
                      # the mark put between them: "using *** between paragraphs"
                      r"\b(?:using|use|with|put|place|insert|add)\s+(?:an?\s+)?`?(\*\*\*|---)`?\s+"
                      r"(?:between|to\s+(?:separate|divide))\s+(?:the\s+|your\s+|each\s+)?"
                      r"paragraphs?\b", re.I)


def divider(request: str) -> str | None:
    """The mark the request says divides its paragraphs, spaces removed; the pre-pass gives
    it to every paragraph count."""
    found = _DIVIDER.search(request)
    if not found:
        return None
    return next(mark for mark in found.groups() if mark).replace(" ", "")

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

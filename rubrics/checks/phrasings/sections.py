"""Sections each opened by a marker and their number, and how many there are: "4 parts, each
beginning with 'PART X'", "Your answer needs 4 sections, with 'SECTION X' at the start of
each", "Begin each section with 'Act' and a number, with exactly 2 sections", "split into Part
1, Part 2 and Part 3", "Mark each section as 'Day 1', 'Day 2', 'Day 3'", "分为四部分，每部分以
“Day 1”开头". A division with no marker ("divided into 4 sections") is `parts`'s."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, to_int
from rubrics.checks.phrasings.shared import (
    DASH,
    PART_ADJECTIVE_EN,
    QUALIFIER_EN,
    ZH_SECTIONS,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    relation_of,
    rules_of,
)

_FLAGS = re.I | re.S
_MARK_VERBS = r"(?:mark|begin|start|label|head|title|prefix|open|number|name|introduce)\w*"
_SECTION_UNITS = r"(?:sections?|parts?|chapters?|segments?|days?)"
# "SECTION X" stands for SECTION 1, SECTION 2...; "Day 1, Day 2 and Day 3" names them; so does
# a word said to come with a number, quoted or capitalised ("'Part' and a number", "the word
# ARTICLE followed by its number"; not "a heading and a number")
_MARKER = (r"(?:[\"'“‘`]?(?P<marker>[A-Za-z]+)\s+(?:X|1)\b[\"'”’`]?|"
           r"(?:[\"'“‘`](?P<quoted>[A-Za-z]+)[\"'”’`]|(?P<capital>(?-i:[A-Z])[A-Za-z]*))\s+"
           r"(?:followed\s+by|and|plus|with)\s+"
           r"(?:a|an|its|their|the)\s+(?:(?:section|part|chapter|own|matching)\s+)?"
           r"(?:number|numeral)s?\b)")
# a count of sections, a range or a bounded one: "6 sections", "4 to 6 parts", "no fewer than 6"
_SECTIONS_N = (rf"(?:(?P<q>{QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})(?:{DASH}(?P<n2>{EN_NUMBER}))?\s+"
               rf"(?:(?:{PART_ADJECTIVE_EN}|numbered)\s+)?{_SECTION_UNITS}\b")
# the same after the sections were named, or "N of them": "..., at most 6 of them"
_SECTIONS_N_AFTER = (rf"(?:(?P<q>{QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})(?:{DASH}"
                     rf"(?P<n2>{EN_NUMBER}))?\s+(?:(?:(?:{PART_ADJECTIVE_EN}|numbered)\s+)?"
                     rf"{_SECTION_UNITS}|of\s+them)\b")
# markers listed in order, which count the sections: "'Day 1', 'Day 2', 'Day 3'" (not when
# the list goes on: "Day 1, Day 2 and so on")
_LISTED = (r"[\"'“‘`]?(?P<marker>[A-Za-z]+)\s+1[\"'”’`]?(?P<rest>(?:\s*(?:,\s*(?:and\s+)?|and\s+)"
           r"[\"'“‘`]?(?P=marker)\s+\d{1,2}[\"'”’`]?)+)"
           r"(?![\"'”’`]?\s*,?\s*(?:\.\.\.|…|etc\b|and\s+so\s+(?:on|forth)\b))")


def _marked(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """N sections (at least N, between N and M...), each opened by a marker and a number
    ("SECTION X" stands for SECTION 1, SECTION 2, ...)."""
    groups = m.groupdict()
    marker = groups.get("marker") or groups.get("quoted") or groups.get("capital")
    if groups.get("n2"):
        return count("section_count", "between", to_int(groups["n"]), to_int(groups["n2"]),
                     marker=marker)
    relation = relation_of(groups["q"]) if groups.get("q") else "exactly"
    return count("section_count", relation, to_int(groups["n"]), marker=marker)


def _listed(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Sections marked by a list of their markers, numbered 1 to N: N sections."""
    numbers = [1, *map(int, re.findall(r"\d+", m.group("rest")))]
    if numbers != list(range(1, len(numbers) + 1)):
        return []
    return count("section_count", "exactly", len(numbers), marker=m.group("marker"))


_PHRASINGS: tuple[Phrasing, ...] = (
    # sections each opened by a marker: "4 parts, each beginning with 'PART X'"
    Phrasing(
        rf"\b{_SECTIONS_N}[^\n]{{0,100}}?\b{_MARK_VERBS}\b[^\n.;]{{0,50}}?{_MARKER}", _marked,
        kind="section_count", example="in 4 sections labelled Part 1, Part 2 and so on",
        counter="Give exactly 4 numbered points (1., 2., and so on)."),
    Phrasing(
        rf"\b(?P<n>{EN_NUMBER})\s+(?:{PART_ADJECTIVE_EN}\s+)?{_SECTION_UNITS}\b[^\n]{{0,100}}?"
        rf"{_MARKER}\s+(?:at\s+the\s+(?:start|beginning|top|head)|to\s+(?:mark|begin|start|open|"
        r"label|introduce)|as\s+(?:the|a|its)\s+(?:heading|header|title|label|marker))"
        r"(?:\s+of\s+(?:each|every)(?:\s+(?:one|section|part|chapter))?)?", _marked,
        kind="section_count",
        example="Your answer needs 4 sections, with 'SECTION X' at the start of each.",
        counter="Your response must have 4 sections. Mark the beginning of each section with "
                "SECTION X."),
    # the marker first, then the count: "Begin each section with 'Act' and a number, with
    # exactly 2 sections", "Mark the start of each section with SECTION X, and have 4 of them",
    # "sections labelled Chapter 1, Chapter 2 and so on, at most 6 of them"
    Phrasing(
        rf"(?:\b{_MARK_VERBS}\s+(?:the\s+(?:start|beginning|top|head)\s+of\s+)?(?:each|every|all|"
        rf"the)\s+(?:one|{_SECTION_UNITS})\s+(?:with|as|by|using)|\b{_SECTION_UNITS}\s+(?:labell?ed|"
        rf"marked|named|titled|headed|called))\s+[^\n.;]{{0,30}}?{_MARKER}[^\n.]{{0,60}}?\b"
        rf"{_SECTIONS_N_AFTER}", _marked,
        kind="section_count", example="Begin each part with 'Step' and a number; 3 parts.",
        counter="Begin each part with a heading and a number; 3 parts."),
    # the markers listed after the division: "split into Part 1, Part 2 and Part 3", "with 2
    # sections, SECTION 1 and SECTION 2", "a two-section guide (Part 1, Part 2)"
    Phrasing(
        rf"\b(?:{_SECTION_UNITS}|into)\b[^\n.;]{{0,20}}?[\s,:(]\s*(?:(?:called|named|labell?ed|"
        rf"marked|titled)\s+)?{_LISTED}", _listed,
        kind="section_count", example="Write a two-section guide (Part 1, Part 2).",
        counter="Split it into Part 1, Part 2 and so on."),
    # the markers listed: "Mark each section as 'Day 1', 'Day 2', 'Day 3'"
    Phrasing(
        rf"\b{_MARK_VERBS}\s+(?:each|every|all|the|your)\s+(?:one|{_SECTION_UNITS})\s+(?:(?:with|"
        rf"as|by|using)\s+)?(?:the\s+)?(?:markers?\s+|labels?\s+|headings?\s+)?{_LISTED}",
        _listed,
        kind="section_count", example="Label the sections Day 1, Day 2 and Day 3.",
        counter="Label the sections Day 1, Day 2 and so on."),
    # in Chinese or both: "分 3 个 sections，每个 section 以 'Part 1' 开头", "分为四部分，每部分以
    # “Day 1”开头"
    Phrasing(
        rf"(?P<n>{EN_NUMBER}|{ZH_NUMBER})\s*个?\s*(?:{_SECTION_UNITS}|{ZH_SECTIONS})"
        rf"[^\n。]{{0,60}}?"
        rf"每(?:个|一)?\s*(?:{_SECTION_UNITS}|{ZH_SECTIONS})?\s*(?:都|均|须|需|要|必须)*\s*(?:以"
        rf"|用)\s*"
        rf"{_MARKER}", _marked,
        kind="section_count",
        example="Please write the 说明书 in 3 parts，每部分以 'Step X' 开头。",
        counter="Please write the entire answer in Spanish."),
)

TABLES = (Table(_FLAGS, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

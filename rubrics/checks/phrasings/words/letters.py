"""How often one letter appears in the response: "the letter 'q' should appear 3 times", "use
the letter e at least 10 times", "the letter 'q' must not appear more than 3 times" (a negation
between the letter and its count turns the bound), "at least 12 instances of the letter a",
"at least 6 z's", "the letter j needs to crop up between 5 and 8 times", "letter 'x' — exactly
4 occurrences", "字母a出现的次数不少于10次"."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, to_int
from rubrics.checks.phrasings.families import FLAGS, REACH
from rubrics.checks.phrasings.shared import (
    COUNT,
    NOT_RANGE_EN,
    QUALIFIER_EN,
    TIMES_EN,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    count_relation,
    relation_of,
    rules_of,
    times,
    times_relation,
)

_FLAGS = re.I | re.S
_LETTER_EN = (r"(?<!\ba\s)(?<!\ban\s)(?<!\byour\s)(?<!\bmy\s)\bletter\s+[\"'“‘]?(?P<letter>[a-z])"
              r"[\"'”’]?(?![\w'’])")
_LETTER_ZH = r"字母\s*[“\"'‘]?(?P<letter>[A-Za-z])[”\"'’]?"
_TIMES_WORDS = {"once": 1, "twice": 2, "thrice": 3}
_NEGATION = re.compile(r"\b(?:not|never)\b|n['’]t\b", re.I)


def _letter_times(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How often one letter must appear."""
    return count("letter_frequency", times_relation(m), times(m),
                 letter=m.group("letter").lower())


def _letters(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How often a letter appears; a negation between the letter and its count turns the
    bound ("must not appear more than 3 times": at most 3)."""
    groups = m.groupdict()
    upper = None
    if "t" in groups:  # an occurrence phrase: "3 times", "twice or more"
        n = _TIMES_WORDS.get((groups["t"] or "").lower()) or to_int(groups["n"] or "")
        relation = times_relation(m)
    else:
        relation, n, upper = count_relation(m, "exactly")
    if n is not None and _NEGATION.search(groups.get("gap") or ""):
        relation, n = {"more than": ("at most", n), "at least": ("at most", n - 1),
                       "less than": ("at least", n), "at most": ("at least", n + 1)}.get(
            relation, (relation, n))
    return count("letter_frequency", relation, n, upper, letter=groups["letter"].lower())


_LETTER_ROWS: tuple[Phrasing, ...] = (
    Phrasing(
        rf"\bthe\s+letter\s+['\"]?([a-z])['\"]?\s+(?:should|must)\s+appear\s+({QUALIFIER_EN})?\s*"
        rf"({EN_NUMBER})\s+times?", lambda m: count(
            "letter_frequency", relation_of(m.group(2) or ""), to_int(m.group(3)),
            letter=m.group(1).lower()),
        kind="letter_frequency",
        example="In your answer, the letter b should appear at least 7 times.",
        counter="In your response, the word 'hope' should appear at least 3 times."),
    Phrasing(
        r"\b(?:the\s+)?letter\s+[\"'“‘]?(?P<letter>[a-z])[\"'”’]?\s+(?:(?:should|must|needs?\s+to|"
        r"has\s+to|to|will)\s+)?(?:appears?|occurs?|(?:be|is)\s+used|shows?\s+up)\s+"
        rf"{TIMES_EN}", _letter_times,
        kind="letter_frequency", example="Have the letter j appear exactly 3 times.",
        counter='The letter "j" may appear 3 times at most.'),
    Phrasing(
        r"\b(?:use|include|using|including)\s+the\s+letter\s+[\"'“‘]?(?P<letter>[a-z])[\"'”’]?\s+"
        rf"{TIMES_EN}", _letter_times,
        kind="letter_frequency", example="Use the letter q at least 3 times.",
        counter='Use the word "tea" at least 3 times.'),
)

# rows that open with an optional count run only near a word of letters (`families.REACH`)
_LETTER_GATED: tuple[Phrasing, ...] = (
    # "the letter 'q' must not appear more than 3 times", "containing the letter s at least
    # eight times", "字母a出现的次数不少于10次"
    # (not the end of a range: "between 5 and 8 times" is the next row's)
    Phrasing(
        rf"{_LETTER_EN}(?P<gap>[^.!?;\n]{{0,40}}?){NOT_RANGE_EN}\b{TIMES_EN}", _letters,
        r"\bletter\b", REACH,
        kind="letter_frequency", example="Use the letter q at least 3 times.",
        counter='Use the word "tea" at least 3 times.'),
    # a range of times, or a count of occurrences, after the letter: "the letter j needs to
    # crop up between 5 and 8 times", "letter 'x' — exactly 4 occurrences"
    Phrasing(
        rf"{_LETTER_EN}(?P<gap>[^.!?;\n]{{0,40}}?)\b(?:(?:between\s+)?(?P<n>{EN_NUMBER})\s*"
        rf"(?:-|–|to|and|or)\s*(?P<n2>{EN_NUMBER})\s+times\b|(?:(?P<q>{QUALIFIER_EN})\s+)?"
        rf"(?P<n1>{EN_NUMBER})\s+(?:occurrences|instances|appearances|uses)\b)", _letters,
        r"\bletter\b", REACH,
        kind="letter_frequency", example="Letter 'x': exactly 4 occurrences.",
        counter="Letter 'x': exactly 4 words."),
    Phrasing(
        rf"{_LETTER_ZH}(?P<gap>[^。；！？\n]{{0,10}}?)(?:要|需|需要|必须|应)?(?:出现)?"
        rf"(?:的次数)?\s*{COUNT}\s*次(?P<post2>以上|以内)?", _letters, r"字母", REACH,
        kind="letter_frequency", example="字母 z 最多出现两次。",
        counter="字母 z 最多用在标题里。"),
    # "at least 12 instances of the letter a", "at least 6 z's"
    Phrasing(
        rf"(?:(?P<q>{QUALIFIER_EN})\s+)?(?P<n1>{EN_NUMBER})(?P<post>\s+or\s+"
        r"more)?\s+(?:instances|occurrences|uses|appearances)\s+of\s+(?:the\s+)?"
        rf"{_LETTER_EN}", _letters, r"\bletter\b", REACH,
        kind="letter_frequency", example='with at most 4 uses of the letter "e"',
        counter='with at most 4 uses of the word "e"'),
    Phrasing(
        rf"(?P<q>{QUALIFIER_EN})\s+(?P<n1>{EN_NUMBER})\s+[\"'“‘]?(?P<letter>[a-z])"
        r"[\"'”’]?['’]s\b", _letters, r"['’]s\b", REACH,
        kind="letter_frequency", example="Use fewer than 10 e's.",
        counter="Use fewer than 10 of Tom's words."),
)

TABLES = (Table(_FLAGS, _LETTER_ROWS), Table(FLAGS, _LETTER_GATED))

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

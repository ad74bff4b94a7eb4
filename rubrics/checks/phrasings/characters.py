"""A length in characters asked in English for a Chinese response: "under 30 Chinese
characters", "a 100-character Chinese promotional line", "within 50 characters (Chinese)",
"somewhere between 150 and 200 Chinese characters", "80 characters max in total", "Length:
120–150 characters", "two hundred Chinese characters", "like 50 chinese characters or so",
"120 Chinese characters tops".

`char_count` counts Han characters, so such a length is one only when the response is to be
Chinese: the unit says so ("Chinese characters", "characters (Chinese)", "a 100-character
Chinese line") or the request asks for Chinese anywhere (`language.asked_languages`: "in
Simplified Chinese", "Language: Chinese", "a Chinese-language introduction"). A tweet under
280 characters, a Japanese text under 100 characters and a story with three characters are no
length of it. The bounds read as the English lengths in words do: "about N" and a bare N are
`between` floor(0.8 N) and ceil(1.2 N), "under N" is at most N - 1, "more than N" at least
N + 1."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, about, to_int
from rubrics.checks.phrasings.language import asked_languages
from rubrics.checks.phrasings.shared import (
    ABOUT_EN,
    QUALIFIER_EN,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    relation_of,
    rules_of,
)

_FLAGS = re.I | re.S
# fewer characters than this are a form, not a length: a line of verse ("a seven-character
# quatrain"), an idiom ("a four-character idiom")
MIN_CHARS = 10
_GATE = (r"\bcharacters?\b", (90, 60))
# the unit, Chinese said before or after it: "Chinese characters", "characters (Chinese)", "a
# 100-character Chinese line"
_UNIT = (r"(?:\s*-\s*|\s+)(?P<zh>(?:Chinese|Han)\s+)?characters?\b(?P<zh_after>\s*\(\s*(?:in\s+)?"
         r"Chinese\s*\)|(?<=character)\s+Chinese\b)?")
_N = rf"(?P<n>{EN_NUMBER})"
# a bound after the unit: "80 characters max", "120 Chinese characters tops", "or so"
_POST = (r"(?P<post>\s+(?:or\s+so|or\s+(?:fewer|less|under)|or\s+more|max(?:imum)?|tops|top|"
         r"at\s+(?:the\s+)?(?:most|max)|at\s+least|minimum|min)\b)?")
_POST_RELATION = {"or so": "about", "or more": "at least", "at least": "at least",
                  "minimum": "at least", "min": "at least"}
# the length of a text the request gives or names is no length: "the 2000 characters of this
# article", "my 800 characters"
_NOT_GIVEN = r"(?<![\w,.\-–—~])(?<!these\s)(?<!those\s)(?<!the\s)(?<!this\s)(?<!my\s)(?<!our\s)"


# Chinese as what the text is in, anywhere in the request: "Describe the Great Wall in Chinese
# in about 150 characters" (not a thing of China: "in Chinese history")
_IN_CHINESE = re.compile(r"\bin\s+(?:simplified\s+|traditional\s+)?(?:chinese|mandarin)\b(?!\s+"
                         r"(?:characters?|culture|history|food|cuisine|medicine|art|poetry|"
                         r"literature|class(?:es)?|lessons?|schools?|society|new\s+year|names?|"
                         r"words?)\b)", re.I)


def _in_chinese(m: re.Match[str]) -> bool:
    """Whether the response is to be Chinese: the unit says so, or the request asks for it
    ("in Chinese", or a language reading of `language`: "Language: Chinese")."""
    return bool(m.group("zh") or m.group("zh_after") or _IN_CHINESE.search(m.string)) \
        or "zh" in asked_languages(m.string)


def _relation(m: re.Match[str]) -> str:
    """The relation the words around the number state: the qualifier before it ("about" or
    "like" is about N), else the bound after it, else about N, as a bare length in words."""
    groups = m.groupdict()
    qualifier = " ".join((groups.get("q") or "").lower().split())
    if qualifier:
        return "about" if re.fullmatch(rf"(?:{ABOUT_EN}|like)", qualifier) \
            else relation_of(qualifier)
    post = " ".join((groups.get("post") or "").lower().split())
    return _POST_RELATION.get(post, "at most") if post else "about"


def _chars(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A length in characters, when the response is Chinese and the length is one."""
    n = to_int(m.group("n"))
    if n is None or n < MIN_CHARS or not _in_chinese(m):
        return []
    if m.groupdict().get("n2"):
        return count("char_count", "between", n, to_int(m.group("n2")))
    relation = _relation(m)
    if relation == "about":
        return count("char_count", "between", *about(n))
    return count("char_count", relation, n)


_PHRASINGS: tuple[Phrasing, ...] = (
    # a range: "between 150 and 200 Chinese characters", "Length: 120–150 characters"
    Phrasing(
        rf"(?:between\s+)?{_N}\s*(?:-|–|—|~|to|and)\s*(?P<n2>{EN_NUMBER}){_UNIT}", _chars, *_GATE,
        kind="char_count", example="A diary entry in Chinese, between 150 and 200 characters.",
        counter="A diary entry in Japanese, between 150 and 200 characters."),
    # a qualifier before, a bound after or neither: "under 30 Chinese characters", "80
    # characters max", "a 100-character Chinese promotional line"
    Phrasing(
        rf"(?:\b(?P<q>{QUALIFIER_EN}|{ABOUT_EN}|like)\s+|{_NOT_GIVEN}){_N}{_UNIT}{_POST}", _chars,
        *_GATE,
        kind="char_count", example="A slogan in Chinese, under 30 characters.",
        counter="A tweet about our bakery, under 280 characters."),
)

TABLES = (Table(_FLAGS, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

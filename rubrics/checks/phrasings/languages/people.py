"""The response's language named by the people it is for: "for my Brazilian readers, in
their language", "Our customers for this order are all in Japan, so the apology should be
written in their language", "in their native tongue", "My grandmother only understands Hindi,
so write this for her in her language".

Only when every people, country and language the request names before it (a people by its
country or demonym, or by the language it speaks, reads or understands: "Russian-speaking
seniors", "she only reads Polish", "his first language is Tamil") is one language: "Swiss
readers", "clients in Canada" or "Brazilian and Japanese clients" name none; nor is it the
response's language in a relative clause about someone ("immigrants who still dream in their
language"). The peoples and countries are `languages.names`'s."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.phrasings.languages.names import (
    CODE_COUNTRY,
    CODE_DEMONYM,
    COUNTRY_NAMES,
    DEMONYMS,
    LANGUAGE_NAMES,
    SEVERAL_LANGUAGES,
    code_of,
)
from rubrics.checks.phrasings.shared import Build, Matcher, Phrasing, Table, rules_of

# the people a text is for: "readers", "customers", "my grandparents"
_PEOPLE_NOUNS = (r"(?:readers|customers|clients|guests|audience|speakers|friends|visitors|"
                 r"students|colleagues|co-?workers|staff|employees|users|followers|fans|"
                 r"subscribers|partners|people|family|relatives|parents|grandparents|"
                 r"grandmother|grandfather|grandma|grandpa|in-laws|neighbou?rs|tourists|buyers|"
                 r"team|viewers|listeners|pen\s+pals?|hosts?)")
_PEOPLE_NAME = rf"(?:{DEMONYMS}|{COUNTRY_NAMES}|{SEVERAL_LANGUAGES})"
# one or several of them: "Brazilian and Japanese", "Spain or Mexico"
_PEOPLE_NAMES = rf"{_PEOPLE_NAME}(?:\s*(?:,|and|or|&)\s*(?:,\s*)?(?:and\s+|or\s+)?{_PEOPLE_NAME})*"
_PEOPLE = re.compile(
    rf"\b(?:{_PEOPLE_NAMES})\s+(?:[\w-]+\s+)?{_PEOPLE_NOUNS}\b|"
    rf"\b(?:are|is)\s+(?:all\s+|mostly\s+|mainly\s+)?(?:{_PEOPLE_NAMES})\b|"
    rf"\b(?:in|from|across|throughout)\s+(?:the\s+)?(?:{_PEOPLE_NAMES})\b", re.I)
_NAME = re.compile(rf"\b{_PEOPLE_NAME}\b", re.I)
# someone named by the languages they speak, read or understand: "she only understands Hindi",
# "Russian-speaking seniors", "his first language is Tamil", "he speaks Spanish and Italian"
_LANGUAGE = re.compile(rf"\b(?:{LANGUAGE_NAMES})\b", re.I)
_LANGUAGES = (rf"(?:{LANGUAGE_NAMES})(?:\s*(?:,|and|or|&)\s*(?:and\s+|or\s+)?"
              rf"(?:{LANGUAGE_NAMES}))*")
_SPEAKS = re.compile(
    rf"\b(?:speaks?|reads?|understands?|knows?)\s+(?:only\s+)?{_LANGUAGES}\b|"
    rf"\b(?:{LANGUAGE_NAMES})[\s-]speaking\b|"
    rf"\b(?:(?:first|native|home|only)\s+language|mother\s+tongue)\s+is\s+{_LANGUAGES}\b",
    re.I)
# a relative clause the words sit in: the language is a character's, not the response's
_RELATIVE = re.compile(r"\b(?:who|whom|whose|which|that|where)\b[^,.;!?\n]*$", re.I)


def _people_codes(found: re.Match[str]) -> set[str | None]:
    """The languages of the peoples and countries named; None for one that speaks several."""
    names = (" ".join(name.lower().split()) for name in _NAME.findall(found.group(0)))
    return {CODE_DEMONYM.get(name) or CODE_COUNTRY.get(name) or CODE_COUNTRY.get(f"the {name}")
            for name in names}


def _their_language(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """The language of the people the request names before "in their language" ("in her
    language"), when every people, country and language it names is that one language (not
    "Swiss", "Canada", nor two peoples), and the words are not a relative clause about someone
    ("immigrants who dream in their language")."""
    if _RELATIVE.search(m.string, 0, m.start()):
        return []
    codes = {code for found in _PEOPLE.finditer(m.string, 0, m.start())
             for code in _people_codes(found)}
    codes |= {code_of(name) for found in _SPEAKS.finditer(m.string, 0, m.start())
              for name in _LANGUAGE.findall(found.group(0))}
    if len(codes) != 1 or None in codes:
        return []
    return [("language", {"language": codes.pop()})]


_PHRASINGS: tuple[Phrasing, ...] = (
    # the language of the people the text is for: "for my Brazilian readers, in their
    # language"
    Phrasing(
        r"\bin\s+(?:their|his|her)\s+(?:own\s+|native\s+|mother\s+)?(?:language|tongue)\b",
        _their_language,
        kind="language", example="Write a note for my Brazilian readers, in their language.",
        counter="Write a note for my Swiss readers, in their language."),
)

TABLES = (Table(re.I | re.S, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

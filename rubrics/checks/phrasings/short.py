"""The usual ways short instruction-following requests state lists, repeated words,
letters, capitals, closing phrases, commas and language, in English and Chinese;
package-internal."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, to_int
from rubrics.checks.phrasings.common import (
    _QUALIFIER_EN,
    _ZH_AT_LEAST,
    _ZH_AT_MOST,
    _ZH_LESS_THAN,
    _ZH_MORE_THAN,
    Build,
    _count,
    _unit_kind,
    relation_of,
)

# --- Lists, repeated words, letters, capitals, closing phrases: the usual ways short
# instruction-following requests state them ---------------------------------------------------
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
# a check of the key's kind read from words inside a longer check of one of the listed kinds
# is a misreading: the "in all capital letters" of "use words in all capital letters at least
# 2 times" asks for capitalised words, not a response all in capitals
PART_OF = {"uppercase": frozenset({"capital_word_count"})}
# one quoted word or phrase, quotes paired; a list of them joined by commas, "and", "or", 、
# (an apostrophe inside a word, "Here's", does not close a single quote, nor open one)
_SINGLE = r"(?<![A-Za-z0-9])'((?:[^'\n]|(?<=[A-Za-z])'(?=[A-Za-z])){1,80})'(?![A-Za-z0-9])"
_CURLY_SINGLE = r"‘((?:[^’\n]|(?<=[A-Za-z])’(?=[A-Za-z])){1,80})’"
_QUOTE_ITEM = (r"(?:\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|" + _SINGLE.replace("((", "(?:(") + "|"
               + _CURLY_SINGLE.replace("((", "(?:(") + r"|「[^」\n]{1,80}」|『[^』\n]{1,80}』)")
_QUOTE_INSIDE = re.compile(r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|" + _SINGLE + "|"
                           + _CURLY_SINGLE + r"|「([^」\n]{1,80})」|『([^』\n]{1,80})』")
_QUOTE_LIST = (rf"{_QUOTE_ITEM}(?:(?:\s*[,，、]\s*|\s+(?:or|and|nor)\s+|\s*,\s*(?:or|and|nor)\s+|"
               rf"\s*[和或及与]\s*|\s*){_QUOTE_ITEM})*")
# a count of occurrences: "3 times", "at least once", "twice", "twice or more", "5 or more
# times", "4+ times", "3 times max"
_TIMES_EN = (rf"(?:(?P<q>{_QUALIFIER_EN})\s+)?(?:(?P<n>{EN_NUMBER})(?P<more>\s*\+|\s+or\s+(?:more|"
             r"fewer|less))?\s+times?\b|(?P<t>once|twice|thrice)\b)(?P<post>\s+or\s+(?:more|"
             r"fewer|less)\b|\s+(?:at\s+(?:least|most)|max(?:imum)?|min(?:imum)?|tops)\b)?")
_POST_RELATION = {"or more": "at least", "at least": "at least", "minimum": "at least",
                  "min": "at least", "+": "at least"}
# a number that is not the end of a range ("3-5 bullets", "between 3 and 5 bullets")
_NOT_RANGE_EN = r"(?<![-–—~/\d])(?<!\bto\s)(?<!\bor\s)(?<!\band\s)"
# a thing said of each of several: "a one-sentence caption for each photo"
_EACH_LATER = re.compile(r"[^.;\n]{0,40}?\b(?:each|every|per)\b", re.I)
# the same, stated earlier in the sentence: "for each product, list 3 features as bullets",
# "每张海报用列表列出三个卖点"
_EACH_EARLIER = re.compile(r"(?:\b(?:each|every|per)\b|每)[^.;!?。；！？\n]{0,60}$", re.I)
# a form named as a topic: "the structure of a 5-paragraph essay"
_FORM_OF = re.compile(r"\b(?:structure|format|outline|template|rules?|parts|example|definition|"
                      r"history|purpose|idea|concept)\s+of\s+(?:an?|the)\s+$", re.I)
_LIST_VERBS_EN = (r"list|give|name|provide|share|write|suggest|offer|outline|present|summari[sz]e|"
                  r"describe|explain|recommend|identify|create|generate|include|make")
_BULLETS_EN = (r"bullet(?:ed)?[\s-]*(?:points?|list|items?)|bullets|numbered\s+(?:list|items?|"
               r"points?)|markdown\s+list")
# what a whole response is limited to: "limit your answer to 3 sentences"
_WHOLE_EN = (r"it|(?:your|the)\s+(?:\w+\s+)?(?:response|answer|reply|essay|text|output|post|"
             r"story|summary|description|message|note)")
_ZH_ITEM = r"(?:个|条|点|项|种|样|步)"
_ZH_BULLETS = (r"(?:markdown|md)?\s*(?:无序)?(?<!有序)(?<!编号)(?<!编号的)列表|项目符号|圆点符号|"
               r"[“\"'‘][-•*][”\"'’](?:开头|标记|标出)")
_ZH_NUMBERED = (r"(?:(?:阿拉伯)?数字|序号)\s*(?:编号|标号|标注|列出|排列)|编号列出|有序列表|"
                r"编号列表|编号的列表|带编号|加编号|标上序号|标明序号")


def quoted_words(text: str) -> list[str]:
    """The words or phrases quoted in `text`, quotes removed, in order."""
    return [next(g for g in groups if g).strip() for groups in _QUOTE_INSIDE.findall(text)]


def _times(m: re.Match[str]) -> int | None:
    """The count an occurrence phrase states ("3 times", "twice"); None if it states none."""
    if m.group("n"):
        return to_int(m.group("n"))
    return _TIMES[m.group("t").lower()] if m.group("t") else None


def times_relation(m: re.Match[str]) -> str:
    """The relation an occurrence phrase states: its qualifier before ("at least 3 times") or
    after ("twice or more", "3 times max"), else exactly."""
    groups = m.groupdict()
    if groups.get("q"):
        return relation_of(groups["q"])
    post = " ".join((groups.get("more") or groups.get("post") or "").lower().split())
    return _POST_RELATION.get(post, "at most") if post else "exactly"






def _letter_times(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How often one letter must appear."""
    return _count("letter_frequency", times_relation(m), _times(m),
                  letter=m.group("letter").lower())


def _list_kind(words: str) -> str:
    """numbered_count for numbered items, bullet_count for bullets or an unnumbered list."""
    numbered = re.search(r"number|(?<!un)ordered|编号|序号|有序", words, re.I)
    return "numbered_count" if numbered else "bullet_count"


def zh_relation_of(qualifier: str) -> str:
    """The relation a Chinese qualifier ("至少", "不超过") states; "exactly" if none."""
    for pattern, relation in ((_ZH_AT_LEAST, "at least"), (_ZH_MORE_THAN, "more than"),
                              (_ZH_AT_MOST, "at most"), (_ZH_LESS_THAN, "less than")):
        if qualifier and re.fullmatch(pattern, qualifier):
            return relation
    return relation_of(qualifier)


def _list_items(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of items the request says are bullets, numbered or a list; not when they are
    those of each of several parts. A Chinese 一 is the article "a" ("一个列表"), not a
    count."""
    if m.group("n").strip() == "一" or _EACH_EARLIER.search(m.string, 0, m.start()):
        return []
    return _count(_list_kind(m.group("list")), zh_relation_of(m.group("q") or ""),
                  to_int(m.group("n")))


def _hyphen_units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A length in a hyphenated adjective ("a two-sentence note", "a 3-paragraph essay"):
    exactly that many; not when the text is one of several ("a one-sentence caption for each
    photo")."""
    if _EACH_LATER.match(m.string, m.end()) or _FORM_OF.search(m.string, 0, m.start()):
        return []
    kind = _unit_kind(m.group("unit").replace("-", " "))
    extra: dict[str, Any] = {"divider": None} if kind == "paragraph_count" else {}
    return _count(kind, "exactly", to_int(m.group("n")), **extra)


def _units_bounded(relation: str) -> Build:
    """A bound on a count of parts ("3 sentences or fewer", "limit it to 3 paragraphs")."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        kind = _unit_kind(m.group("unit"))
        extra: dict[str, Any] = {}
        if kind == "paragraph_count":
            extra["divider"] = None
        if kind == "section_count":
            extra["marker"] = None
        return _count(kind, relation, to_int(m.group("n")), **extra)
    return build


def _limited(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """At most N words or parts: "limit your answer to N words / sentences"."""
    if m.group("unit").lower().startswith("word"):
        return _count("word_count", "at most", to_int(m.group("n")))
    return _units_bounded("at most")(m)


def _zh_sentences(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of sentences: "用三句话", "不超过两句话", "三句话以内"."""
    relation = "at most" if m.group("within") else zh_relation_of(m.group("q") or "")
    return _count("sentence_count", relation, to_int(m.group("n")))


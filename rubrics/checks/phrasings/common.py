"""The pieces the phrasings are built from (English qualifiers, the count and length
builders, Chinese qualifiers) and the English phrasings of lengths, parts, keywords, case
and language; package-internal."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from rubrics.checks.numbers import EN_NUMBER, about, to_int

Build = Callable[[re.Match[str]], list[tuple[str, dict[str, Any]]]]


class Matcher(Protocol):
    """What a rule's pattern is to the pre-pass: a compiled regex, or one behind a gate."""

    def finditer(self, string: str) -> Iterator[re.Match[str]]: ...


def compile_rules(rules: Iterable[tuple[Any, ...]],
                  flags: int) -> tuple[tuple[Matcher, Build], ...]:
    """Rules as (pattern, build) or (pattern, build, gate, reach): the latter run only near
    their gate's matches (`Gated`)."""
    return tuple((Gated(gate[0], pattern, flags, gate[1]) if gate else re.compile(pattern, flags),
                  build) for pattern, build, *gate in rules)


# gates of rules that open with an optional number or qualifier, and how far they reach
WORDS_GATE = (r"\bwords?\b", (80, 60))
UNITS_GATE = (r"paragraph|\bparas?\b|sentence|section|bullet|heading|placeholder|\bparts?\b|"
              r"chapter|numbered", (80, 60))


class _Gate:
    """A gate regex shared by the rules that name it, with the spans it found in the last text
    it read (the pre-pass runs every rule on one request before the next)."""

    _known: dict[tuple[str, int], _Gate] = {}

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._last: tuple[str, list[re.Match[str]]] | None = None

    @classmethod
    def of(cls, gate: str, flags: int) -> _Gate:
        return cls._known.setdefault((gate, flags), cls(re.compile(gate, flags)))

    def hits(self, string: str) -> list[re.Match[str]]:
        if self._last is None or self._last[0] is not string:
            self._last = (string, list(self.pattern.finditer(string)))
        return self._last[1]


class Gated:
    """A pattern tried only near where its cheap gate is found: a rule that opens with an
    optional count or qualifier would otherwise be tried at every position of every request.
    The pattern runs on a window around each gate match (`before` characters before it,
    `after` after it, overlapping windows merged), so its matches must lie within that reach
    of a gate word; with no reach given it runs on the whole text when the gate is found."""

    def __init__(self, gate: str, pattern: str, flags: int = re.I | re.S | re.M,
                 reach: tuple[int, int] | None = None) -> None:
        self.gate = _Gate.of(gate, flags)
        self.pattern = re.compile(pattern, flags)
        self.reach = reach

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        hits = self.gate.hits(string)
        if self.reach is None:
            if hits:
                yield from self.pattern.finditer(string)
            return
        before, after = self.reach
        windows: list[list[int]] = []
        for hit in hits:
            start, end = max(0, hit.start() - before), min(len(string), hit.end() + after)
            if windows and start <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], end)
            else:
                windows.append([start, end])
        seen: set[tuple[int, int]] = set()
        for start, end in windows:
            for match in self.pattern.finditer(string, start, end):
                if match.span() not in seen:
                    seen.add(match.span())
                    yield match

_I = re.I | re.S

_AT_LEAST_EN = (r"at\s+least|no\s+less\s+than|not\s+less\s+than|no\s+fewer\s+than|"
                r"(?:a\s+)?minimum(?:\s+of)?|min\.?")
_MORE_THAN_EN = r"more\s+than|over|exceed(?:ing)?|upwards\s+of|greater\s+than|longer\s+than"
_AT_MOST_EN = (r"at\s+most|no\s+more\s+than|not\s+more\s+than|(?:a\s+)?maximum(?:\s+of)?|"
               r"max\.?|up\s+to|within|not\s+(?:to\s+)?exceed(?:ing)?|limited\s+to|"
               r"no\s+longer\s+than")
_LESS_THAN_EN = r"(?:less|fewer)\s+than|under|below|shorter\s+than"
_QUALIFIER_EN = rf"{_AT_LEAST_EN}|{_MORE_THAN_EN}|{_AT_MOST_EN}|{_LESS_THAN_EN}|exactly|precisely"
_ABOUT_EN = r"about|around|approximately|approx\.?|roughly|~|some"
_DASH = r"\s*(?:-|–|—|~|～|to|and|or)\s*"
_N = rf"({EN_NUMBER})"

def _count(kind: str, relation: str, n: int | None, upper: int | None = None,
           **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    """One count check; the strict "more than N" and "less than N" become at least N + 1 and
    at most N - 1."""
    if n is None:
        return []
    if relation == "more than":
        relation, n = "at least", n + 1
    elif relation == "less than":
        relation, n = "at most", max(0, n - 1)
    return [(kind, {"relation": relation, "n": n, "upper": upper, **extra})]


def relation_of(qualifier: str) -> str:
    """The relation an English qualifier ("no more than", "over", "exactly") states."""
    for pattern, relation in ((_AT_LEAST_EN, "at least"), (_MORE_THAN_EN, "more than"),
                              (_AT_MOST_EN, "at most"), (_LESS_THAN_EN, "less than")):
        if re.fullmatch(pattern, " ".join(qualifier.split()), re.I):
            return relation
    return "exactly"


def _approx(kind: str, n: int | None, **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    if n is None:
        return []
    low, high = about(n)
    return _count(kind, "between", low, high, **extra)


def _numbers(m: re.Match[str]) -> list[int | None]:
    """The numbers of the alternative that matched, in order."""
    return [to_int(g) for g in m.groups() if g is not None]


def _length(kind: str, relation: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        numbers = _numbers(m)
        if relation == "between":
            return _count(kind, "between", *numbers[:2])
        if relation == "about":
            return _approx(kind, numbers[0])
        return _count(kind, relation, numbers[0])
    return build


def _words(relation: str) -> Build:
    return _length("word_count", relation)


_UNITS_EN = {
    "paragraph": "paragraph_count", "bullet": "bullet_count", "bullet point": "bullet_count",
    "sentence": "sentence_count", "section": "section_count", "heading": "heading_count",
    "highlighted section": "highlight_count", "placeholder": "placeholder_count",
    "numbered item": "numbered_count", "numbered point": "numbered_count",
    "part": "section_count", "chapter": "section_count",
}
_UNIT_EN = r"(\*{0,2}highlighted\s+sections?|bullet\s+points?|bullets?|" \
           r"numbered\s+(?:items?|points?)|paragraphs?|paras?|sentences?|sections?|headings?|placeholders?|parts?|chapters?)"


# words between a count and its unit: "three main parts", "4 separate sections"
_PART_ADJECTIVE_EN = (r"(?:separate|distinct|short|markdown|main|major|key|core|primary|clear|"
                      r"full|complete)")


def _unit_kind(word: str) -> str:
    base = " ".join(word.lower().strip("*").split()).rstrip("s")
    return _UNITS_EN.get(base, _UNITS_EN.get(base.rstrip("s"), "paragraph_count"))


def _unit_extra(kind: str) -> dict[str, Any]:
    """The unset parameter a count of paragraphs (divider) or sections (marker) carries."""
    return {"paragraph_count": {"divider": None}, "section_count": {"marker": None}}.get(kind, {})


# "organize it under four headers": "under" is where things go, not a bound
_FILED_UNDER = re.compile(r"\b(?:organi[sz]e|group|arrange|sort|file|put|place|structure|"
                          r"divide|split|break)\w*\s+(?:[\w'-]+\s+){0,3}?$", re.I)


def _units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    relation = relation_of(m.group(1) or "")
    if (m.group(1) or "").lower() == "under" and _FILED_UNDER.search(m.string, 0, m.start()):
        relation = "exactly"
    kind = _unit_kind(m.group(3))
    return _count(kind, relation, to_int(m.group(2)), **_unit_extra(kind))


def _unit_range(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A range of parts: "in 4-5 paragraphs", "between 3 and 5 sections"."""
    kind = _unit_kind(m.group(3))
    return _count(kind, "between", to_int(m.group(1)), to_int(m.group(2)), **_unit_extra(kind))




def _flag(kind: str, **params: Any) -> Build:
    return lambda m: [(kind, dict(params))]


def _phrase(kind: str) -> Build:
    return lambda m: [(kind, {"phrase": m.group(1).strip()})] if m.group(1).strip() else []










# a Chinese pattern that opens with an optional qualifier starts at a Chinese character or a
# digit: the lookahead spares its alternations at every other position of a text
_ZH_START = r"(?=[\u3400-\u9fff\d])"
# Chinese qualifiers of a count
_ZH_AT_LEAST = r"不少于|不低于|至少|最少|不得少于|不能少于|不小于|不应少于|须达到|需达到"
_ZH_MORE_THAN = r"(?<!不)(?:超过|多于|大于)"
_ZH_AT_MOST = r"不超过|不多于|最多|至多|不得超过|不能超过|不要超过|不宜超过|不应超过|不大于"
_ZH_LESS_THAN = r"(?<![不得能应])(?:少于|低于|小于)"

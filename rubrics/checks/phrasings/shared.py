"""The pieces the phrasings of every kind are built from, each under a public name: how a
rule is written (`Phrasing`, `Table`, `Gated`, `rules_of`), the English and Chinese
qualifiers of a count ("at least", "不超过") and the relations they state, numbers, units of
parts, quoted words and phrases, occurrence counts ("3 times", "twice or more"), the
count-and-bound pattern (`COUNT`) the noun families and letters share, and the words around a
count that turn its relation ("don't use more than 3": at most 3; "Fifty words, no more": at
most 50; `negated_bound`, `bounded_after`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, about, to_int

Build = Callable[[re.Match[str]], list[tuple[str, dict[str, Any]]]]


class Matcher(Protocol):
    """What a rule's pattern is to the pre-pass: a compiled regex, or one behind a gate."""

    def finditer(self, string: str) -> Iterator[re.Match[str]]: ...


@dataclass(frozen=True)
class Phrasing:
    """One way of stating a requirement, a row of a kind module's table: the pattern, how its
    match is read into (kind, params), the kind its example reads as, words it must read as
    that kind and a near miss it must not (the table test renders both). A row with a gate
    runs only within `reach` of the gate's matches (`Gated`)."""

    pattern: str
    read: Build
    gate: str | None = None
    reach: tuple[int, int] | None = None
    kind: str = field(kw_only=True)
    example: str = field(kw_only=True)
    counter: str = field(kw_only=True)

    def matcher(self, flags: int) -> Matcher:
        if self.gate:
            return Gated(self.gate, self.pattern, flags, self.reach)
        return re.compile(self.pattern, flags)

    def kinds(self, text: str, flags: int) -> list[str]:
        """The kinds the row alone reads in `text`."""
        return [kind for match in self.matcher(flags).finditer(text)
                for kind, _ in self.read(match)]


@dataclass(frozen=True)
class Table:
    """A kind module's rows and the regex flags they compile with."""

    flags: int
    rows: tuple[Phrasing, ...]


def rules_of(tables: Iterable[Table]) -> tuple[tuple[Matcher, Build], ...]:
    """The tables' rows as the (matcher, build) pairs the pre-pass runs, in order."""
    return tuple((row.matcher(table.flags), row.read) for table in tables for row in table.rows)


def flag(kind: str, **params: Any) -> Build:
    """A kind read whole from its words: no commas, JSON, a title, a P.S. marker."""
    return lambda m: [(kind, dict(params))]


# gates of rules that open with an optional number or qualifier, and how far they reach
WORDS_GATE = (r"\bwords?\b", (80, 60))
UNITS_GATE = (r"paragraph|\bparas?\b|sent[ae]nce|section|bullet|heading|placeholder|\bparts?\b|"
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


# (also as typed in one word: "atleast", "atmost")
AT_LEAST_EN = (r"at\s*least|no\s+less\s+than|not\s+less\s+than|no\s+fewer\s+than|"
               r"(?:a\s+)?minimum(?:\s+of)?|min\.?")
# (also a bound said as a place beyond it: "past 8 items", "north of 200 words"; not "the past
# 3 paragraphs", the ones before; and "south of 120 words" is less than)
MORE_THAN_EN = (r"more\s+than|over|exceed(?:ing)?|upwards\s+of|greater\s+than|longer\s+than|"
                r"(?<!\bthe\s)(?:past|beyond)|north\s+of")
AT_MOST_EN = (r"at\s*most|no\s+more\s+than|not\s+more\s+than|(?:a\s+)?maximum(?:\s+of)?|"
              r"max\.?|up\s+to|within|not\s+(?:to\s+)?exceed(?:ing)?|limited\s+to|"
              r"no\s+longer\s+than")
LESS_THAN_EN = r"(?:less|fewer)\s+than|under|below|shorter\s+than|shy\s+of|south\s+of"
QUALIFIER_EN = rf"{AT_LEAST_EN}|{MORE_THAN_EN}|{AT_MOST_EN}|{LESS_THAN_EN}|exactly|precisely"
ABOUT_EN = (r"about|around|approximately|approx\.?|roughly|~|some|"
            r"in\s+the\s+(?:neighbou?rhood|region|vicinity|ballpark)\s+of")
# an English number as the rule's group
EN_N = rf"({EN_NUMBER})"
DASH = r"\s*(?:-|–|—|~|～|to|and|or)\s*"


def count(kind: str, relation: str, n: int | None, upper: int | None = None,
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


# a second bound after a count, its unit left unsaid: "more than 250 words but no longer than
# 350", "at least 3 paragraphs and at most 5"
SECOND_BOUND = (rf"\s*,?\s+(?:but|and|yet)\s+(?P<q2>{AT_MOST_EN}|{LESS_THAN_EN}|{AT_LEAST_EN}|"
                rf"{MORE_THAN_EN})\s+(?P<n2>{EN_NUMBER})(?=\s*(?:[.,;:!?)\n]|$))")


def two_bounds(kind: str, **extra: Any) -> Build:
    """Both bounds of a count whose second leaves its unit unsaid (the pre-pass merges an
    "at least" and an "at most" into one range)."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        return [*count(kind, relation_of(m.group("q1")), to_int(m.group("n1")), **extra),
                *count(kind, relation_of(m.group("q2")), to_int(m.group("n2")), **extra)]
    return build


def relation_of(qualifier: str) -> str:
    """The relation an English qualifier ("no more than", "over", "exactly") states."""
    for pattern, relation in ((AT_LEAST_EN, "at least"), (MORE_THAN_EN, "more than"),
                              (AT_MOST_EN, "at most"), (LESS_THAN_EN, "less than")):
        if re.fullmatch(pattern, " ".join(qualifier.split()), re.I):
            return relation
    return "exactly"


def numbers_of(m: re.Match[str]) -> list[int | None]:
    """The numbers of the alternative that matched, in order."""
    return [to_int(g) for g in m.groups() if g is not None]


def zh_relation_of(qualifier: str) -> str:
    """The relation a Chinese qualifier ("至少", "不超过") states; "exactly" if none."""
    for pattern, relation in ((ZH_AT_LEAST, "at least"), (ZH_MORE_THAN, "more than"),
                              (ZH_AT_MOST, "at most"), (ZH_LESS_THAN, "less than")):
        if qualifier and re.fullmatch(pattern, qualifier):
            return relation
    return relation_of(qualifier)


UNITS_EN = {
    "paragraph": "paragraph_count", "bullet": "bullet_count", "bullet point": "bullet_count",
    "sentence": "sentence_count", "sentance": "sentence_count", "section": "section_count",
    "heading": "heading_count",
    "highlighted section": "highlight_count", "placeholder": "placeholder_count",
    "numbered item": "numbered_count", "numbered point": "numbered_count",
    "part": "section_count", "chapter": "section_count",
}
UNIT_EN = r"(\*{0,2}highlighted\s+sections?|bullet\s+points?|bullets?|" \
           r"numbered\s+(?:items?|points?)|paragraphs?|paras?|sent[ae]nces?|sections?|headings?|placeholders?|parts?|chapters?)"


# the Chinese words for a part of the text: "部分", "章节", "板块"
ZH_SECTIONS = r"(?:部分|章节|板块|小节|节|章)"
# words between a count and its unit: "three main parts", "4 separate sections"
PART_ADJECTIVE_EN = (r"(?:separate|distinct|short|markdown|main|major|key|core|primary|clear|"
                     r"full|complete)")


def unit_kind(word: str) -> str:
    base = " ".join(word.lower().strip("*").split()).rstrip("s")
    return UNITS_EN.get(base, UNITS_EN.get(base.rstrip("s"), "paragraph_count"))


def unit_extra(kind: str) -> dict[str, Any]:
    """The unset parameter a count of paragraphs (divider) or sections (marker) carries."""
    return {"paragraph_count": {"divider": None}, "section_count": {"marker": None}}.get(kind, {})


# "organize it under four headers": "under" is where things go, not a bound
FILED_UNDER = re.compile(r"\b(?:organi[sz]e|group|arrange|sort|file|put|place|structure|"
                         r"divide|split|break)\w*\s+(?:[\w'-]+\s+){0,3}?$", re.I)


# a Chinese pattern that opens with an optional qualifier starts at a Chinese character or a
# digit: the lookahead spares its alternations at every other position of a text
ZH_START = r"(?=[\u3400-\u9fff\d])"
# Chinese qualifiers of a count
ZH_AT_LEAST = r"不少于|不低于|至少|最少|不得少于|不能少于|不小于|不应少于|须达到|需达到"
ZH_MORE_THAN = r"(?<!不)(?:超过|多于|大于)"
ZH_AT_MOST = r"不超过|不多于|最多|至多|不得超过|不能超过|不要超过|不宜超过|不应超过|不大于"
ZH_LESS_THAN = r"(?<![不得能应])(?:少于|低于|小于)"
# a Chinese number as the rule's group
ZH_N = rf"({ZH_NUMBER})"
# a Chinese number that is not the end of a range ("800～1000字")
ZH_NOT_RANGE = r"(?<![\d～~〜到至\-–—])"

_TIMES = {"once": 1, "twice": 2, "thrice": 3}
# one quoted word or phrase, quotes paired; a list of them joined by commas, "and", "or", 、
# (an apostrophe inside a word, "Here's", does not close a single quote, nor open one)
_SINGLE = r"(?<![A-Za-z0-9])'((?:[^'\n]|(?<=[A-Za-z])'(?=[A-Za-z])){1,80})'(?![A-Za-z0-9])"
_CURLY_SINGLE = r"‘((?:[^’\n]|(?<=[A-Za-z])’(?=[A-Za-z])){1,80})’"
QUOTE_ITEM = (r"(?:\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|" + _SINGLE.replace("((", "(?:(") + "|"
              + _CURLY_SINGLE.replace("((", "(?:(") + r"|「[^」\n]{1,80}」|『[^』\n]{1,80}』)")
_QUOTE_INSIDE = re.compile(r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|" + _SINGLE + "|"
                           + _CURLY_SINGLE + r"|「([^」\n]{1,80})」|『([^』\n]{1,80})』")
QUOTE_LIST = (rf"{QUOTE_ITEM}(?:(?:\s*[,，、]\s*|\s+(?:or|and|nor)\s+|\s*,\s*(?:or|and|nor)\s+|"
              rf"\s*[和或及与]\s*|\s*){QUOTE_ITEM})*")


def quoted_words(text: str) -> list[str]:
    """The words or phrases quoted in `text`, quotes removed, in order."""
    return [next(g for g in groups if g).strip() for groups in _QUOTE_INSIDE.findall(text)]


# a count of occurrences: "3 times", "at least once", "twice", "twice or more", "5 or more
# times", "4+ times", "3 times max"
TIMES_EN = (rf"(?:(?P<q>{QUALIFIER_EN})\s+)?(?:(?P<n>{EN_NUMBER})(?P<more>\s*\+|\s+or\s+(?:more|"
            r"fewer|less))?\s+times?\b|(?P<t>once|twice|thrice)\b)(?P<post>\s+or\s+(?:more|"
            r"fewer|less)\b|\s+(?:at\s+(?:least|most)|max(?:imum)?|min(?:imum)?|tops)\b)?")
_POST_RELATION = {"or more": "at least", "at least": "at least", "minimum": "at least",
                  "min": "at least", "+": "at least"}
# a number that is not the end of a range ("3-5 bullets", "between 3 and 5 bullets")
NOT_RANGE_EN = r"(?<![-–—~/\d])(?<!\bto\s)(?<!\bor\s)(?<!\band\s)"


def times(m: re.Match[str]) -> int | None:
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


# --- a count, a range or a bounded count, in English or Chinese
CJK = re.compile(r"[\u4e00-\u9fff]")
# the ends of a sentence, and of a clause inside one
SENTENCE_BREAK = re.compile(r"[.!?\n](?=\s|$)|[;\n]")
CLAUSE_BREAK = re.compile(r"[.!?\n](?=\s|$)|[;:,\n—–()]")
# how a reading by name reads one mention: what it names (a language's code, a case's kind),
# or None when an exclusion holds
Read = Callable[[re.Match[str]], str | None]


def since(pattern: re.Pattern[str], text: str, at: int) -> str:
    """The text from the last break `pattern` finds before `at` up to `at`."""
    breaks = [m.end() for m in pattern.finditer(text, 0, at)]
    return text[breaks[-1] if breaks else 0:at]


def agreeing(reads: Iterable[tuple[re.Pattern[str], Read]],
             reading: Callable[[str], tuple[str, dict[str, Any]]]) -> Callable[[Read], Build]:
    """The build of each reading by name: a mention's `reading` when every mention any of
    `reads` reads in the request names the same thing (two languages, or both cases, named
    so give none)."""
    reads = tuple(reads)

    def named(text: str) -> set[str]:
        return {got for pattern, read in reads for m in pattern.finditer(text)
                if (got := read(m))}

    def of(read: Read) -> Build:
        def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
            got = read(m)
            if not got or named(m.string) - {got}:
                return []
            return [reading(got)]
        return build
    return of


# a sentence that asks a question, from its first word to its question mark: "Is Korean hard to
# write?", "why do people type in all caps?"
A_QUESTION = re.compile(r"\s*(?:what|what['’]s|why|how|which|when|where|who|whose|is|are|was|"
                        r"were|does|do|did|should|has|have)\b[^?\n]*\?", re.I)
_NUM = rf"(?:{EN_NUMBER}|{ZH_NUMBER})"
_ZH_Q = rf"{ZH_AT_LEAST}|{ZH_AT_MOST}|{ZH_MORE_THAN}|{ZH_LESS_THAN}"
_Q = rf"(?:{QUALIFIER_EN}|{_ZH_Q})"
_POST = (r"(?:\s*(?:\+|or\s+more|or\s+(?:fewer|less)|以上|以内|以下|之内|max(?:imum)?|tops|"
         r"total|in\s+total))")
_VERB_ZH = r"(?:包含|包括|使用|设置|有|放|留出|加上?|分为|分成|分|写|用|共|出现)"
# a count, a range or a bounded count: "between 4 and 6", "4-6", "at least 3", "3+", "至少分六段"
COUNT = (rf"(?:(?:between\s+)?(?P<n>{_NUM})\s*(?:-|–|—|~|～|to|and|到|至)\s*(?P<n2>{_NUM})(?!-)"
         rf"|(?:(?P<q>{_Q})\s*)?(?:{_VERB_ZH}\s*)?(?P<n1>{_NUM})(?!-)(?P<post>{_POST})?)")
_AT_LEAST_POST = ("+", "or more", "以上")
_AT_MOST_POST = ("or fewer", "or less", "以内", "以下", "之内", "max", "maximum", "tops")


def count_relation(m: re.Match[str], default: str) -> tuple[str, int | None, int | None]:
    """The relation, count and upper bound a count states."""
    groups = m.groupdict()
    if groups.get("n2"):
        return "between", to_int(groups["n"]), to_int(groups["n2"])
    n = to_int(groups.get("n1") or "")
    qualifier = " ".join((groups.get("q") or "").split())
    post = " ".join((groups.get("post") or groups.get("post2") or groups.get("post3")
                     or "").lower().split())
    if qualifier.lower() == "under" and FILED_UNDER.search(m.string, 0, m.start()):
        return default, n, None
    if qualifier:
        return (zh_relation_of(qualifier) if CJK.search(qualifier)
                else relation_of(qualifier)), n, None
    if post in _AT_LEAST_POST:
        return "at least", n, None
    if post in _AT_MOST_POST:
        return "at most", n, None
    return default, n, None


# --- words around a count that turn its relation (the pre-pass applies both to every count)

# a bound said after a count: "three words in ALL CAPS, and no more than that", "Fifty words,
# no more" (not "..., no more than 3 paragraphs", a bound of its own, nor "no more, no less")
_BOUND_AFTER = re.compile(r"\s*,?\s*(?:(?:and|but)\s+)?no\s+(?P<which>more|fewer|less)"
                          r"(?:\s+than\s+that)?\b(?!\s+than\b)"
                          r"(?!\s*,?\s*(?:(?:and|or|but)\s+)?no\s+(?:more|fewer|less)\b)", re.I)


def bounded_after(text: str, match: re.Match[str], params: dict[str, Any]) -> dict[str, Any]:
    """A count the words after it bound: "and no more than that" is at most, "but no fewer" at
    least; a bare length so bound is that bound ("Fifty words, no more": at most 50, not the
    about 50 it reads as alone)."""
    after = _BOUND_AFTER.match(text, match.end())
    numbers = {to_int(n) for n in re.findall(EN_NUMBER, match.group(0), re.I)} - {None}
    if not after or "relation" not in params or len(numbers) != 1:
        return params
    n = numbers.pop()
    said = (params["relation"], params["n"], params["upper"])
    if n is None or said not in (("exactly", n, None), ("between", *about(n))):
        return params
    return {**params, "relation": "at most" if after.group("which").lower() == "more"
            else "at least", "n": n, "upper": None}


# a strict bound and the negation governing it: "don't use more than 3 headings", "must not
# contain more than 6 bullet points", "Under no circumstances should it go over 90 words"
_STRICT = re.compile(rf"(?<!\bno\s)(?<!\bnot\s)\b(?P<q>{MORE_THAN_EN}|{LESS_THAN_EN})\s+"
                     rf"(?P<n>{EN_NUMBER})", re.I)
_NEGATED = re.compile(
    r"(?:\b(?:do|does|did|must|should|may|might|can|could|will|would|shall)\s*not|"
    r"\b(?:don|doesn|didn|mustn|shouldn|can|couldn|won|wouldn)['’]?t|\bcannot|\bnever|"
    r"\b(?:under\s+no\s+circumstances|in\s+no\s+case|at\s+no\s+(?:point|time))\s+"
    r"(?:should|must|may|can|will|shall|is|are)\s+\w+)\s+(?:\w+\s+){0,2}$", re.I)


def negated_bound(text: str, match: re.Match[str], params: dict[str, Any]) -> dict[str, Any]:
    """A strict bound a negation governs is the other bound, not strict: "don't use more than
    3 headings" is at most 3 (read alone, "more than 3" is at least 4), "must not have fewer
    than 4 points" at least 4."""
    strict = _STRICT.search(match.group(0))
    if not strict or "relation" not in params:
        return params
    at = match.start() + strict.start()
    if not _NEGATED.search(text, max(0, at - 60), at):
        return params
    n, more = to_int(strict.group("n")), relation_of(strict.group("q")) == "more than"
    if n is None or (params["relation"], params["n"]) != (("at least", n + 1) if more
                                                          else ("at most", max(0, n - 1))):
        return params
    return {**params, "relation": "at most" if more else "at least", "n": n}

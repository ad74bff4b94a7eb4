"""Which requirements may stand together in one prompt: the one place the generator's
compatibility rules are stated.

Three layers, each with the reason a pair or a set is refused:
- kinds that never go together, because no text meets both (all lowercase and all capitals)
  or because the request would not make sense or its count would be unclear (a JSON answer
  with a postscript; a number of paragraphs beside a bulleted list, where the checks count
  the list as a paragraph and a reader might not);
- parameters that clash: a keyword that is also forbidden, a forbidden word inside the
  opening phrase, a comma in a phrase when commas are banned, a capitalised section marker
  in an all-lowercase text;
- sizes that do not fit together: the words the other requirements need (paragraphs,
  sentences, list items, sections, keyword repeats, phrases) against a word limit; the
  letters, capitalised words and keyword repeats that required phrases already bring
  against an upper bound on them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from rubrics.checks import Check
from rubrics.checks.forms import occurrences

# lists and headings: blocks of their own, whose sentences and paragraphs are not clear
STRUCTURE = ("bullet_count", "numbered_count", "section_count", "heading_count")
# the only kinds a JSON answer is asked for with: the rest are markup, layout or prose
JSON_PARTNERS = frozenset({"word_count", "keyword", "forbidden_word", "letter_frequency",
                           "lowercase"})
# English words, phrases and markers, or a JSON layout, inside an answer in another language
NOT_WITH_LANGUAGE = ("keyword", "forbidden_word", "starts_with", "ends_with", "section_count",
                     "json")


def _pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


KIND_CONFLICTS: dict[frozenset[str], str] = {
    _pair("lowercase", "uppercase"): "a text cannot be all lowercase and all capitals",
    _pair("lowercase", "capital_word_count"): "a capitalised word breaks an all-lowercase text",
    _pair("uppercase", "capital_word_count"): "in an all-capitals text every word is capitalised",
    _pair("quoted", "starts_with"): "the opening quote mark would come before the phrase",
    _pair("quoted", "ends_with"): "the closing quote mark would come after the phrase",
    _pair("postscript", "ends_with"): "a postscript would come after the closing phrase",
    _pair("bullet_count", "numbered_count"): "one list, in one style",
    _pair("section_count", "heading_count"): "unclear whether the sections are the headings",
    **{_pair("paragraph_count", kind): "a list or a heading is a block of its own: the number "
       "of paragraphs would be unclear" for kind in STRUCTURE},
    **{_pair("sentence_count", kind): "list items and headings have no clear number of "
       "sentences" for kind in STRUCTURE},
    **{_pair("language", kind): "an English word, phrase or marker, or a JSON layout, in an "
       "answer in another language" for kind in NOT_WITH_LANGUAGE},
}

# the fewest words a sensible text spends on each unit a count kind asks for (a list item's
# marker and a section's marker line count as words too)
WORDS_PER_UNIT = {"sentence_count": 4, "paragraph_count": 10, "bullet_count": 5,
                  "numbered_count": 5, "section_count": 10, "heading_count": 6,
                  "highlight_count": 1, "placeholder_count": 1, "capital_word_count": 1}
WORDS_PER_SENTENCE = 25   # the most words a sensible sentence holds
_CAPITAL_WORD = re.compile(r"\b[A-Z]{2,}(?:['’-][A-Z]+)*\b")  # as capital_word_count counts


def capital_words(text: str) -> int:
    return len(_CAPITAL_WORD.findall(text))


# requirements a genre of task does not take: a poem or a story set out as a list or as JSON
GENRE_CONFLICTS: dict[str, frozenset[str]] = {
    "poem": frozenset({"bullet_count", "numbered_count", "section_count", "heading_count",
                       "placeholder_count", "json"}),
    "story": frozenset({"bullet_count", "numbered_count", "json"}),
}


def genre_conflict(genre: str, kind: str) -> str | None:
    """Why a task of `genre` does not take a requirement of `kind`, or None."""
    if kind in GENRE_CONFLICTS.get(genre, ()):
        return f"a {genre} is not written with this requirement"
    return None


def kind_conflict(a: str, b: str) -> str | None:
    """Why kinds `a` and `b` never go together in one prompt, or None."""
    if a == b:
        return "one requirement of each kind"
    if "json" in (a, b) and ({a, b} - {"json"}).isdisjoint(JSON_PARTNERS):
        return "a JSON answer has no place for this requirement"
    return KIND_CONFLICTS.get(_pair(a, b))


def bounds(check: Check) -> tuple[int, float]:
    """The lowest and highest count a count check allows (the highest may be infinite)."""
    relation, n, upper = check.params["relation"], check.params["n"], check.params["upper"]
    return {"at least": (n, math.inf), "at most": (0, n), "exactly": (n, n),
            "between": (n, upper)}[relation]


def literals(check: Check) -> list[str]:
    """The text a check makes any answer contain, once per time it must be there."""
    p = check.params
    if check.kind in ("starts_with", "ends_with"):
        return [p["phrase"]]
    if check.kind == "keyword":
        return [p["word"]] * bounds(check)[0]
    if check.kind == "section_count":
        return [f"{p['marker']} {i + 1}" for i in range(bounds(check)[0])]
    if check.kind == "postscript":
        return [p["marker"]]
    return []


def _pair_conflict(a: Check, b: Check) -> str | None:
    reason = kind_conflict(a.kind, b.kind)
    if reason:
        return reason
    kinds = {a.kind: a, b.kind: b}
    if "keyword" in kinds and "forbidden_word" in kinds:
        word, banned = kinds["keyword"].params["word"], kinds["forbidden_word"].params["word"]
        if occurrences(word, banned) or occurrences(banned, word):
            return "the keyword contains the forbidden word or the other way round"
    marker = kinds["section_count"].params["marker"] if "section_count" in kinds else None
    if marker and "lowercase" in kinds and not marker.islower():
        return "a capitalised section marker in an all-lowercase text"
    if marker and "uppercase" in kinds and not marker.isupper():
        return "a section marker in small letters in an all-capitals text"
    if "paragraph_count" in kinds and ("title" in kinds or "postscript" in kinds):
        paragraphs = kinds["paragraph_count"]
        if paragraphs.params["relation"] != "at least" and not paragraphs.params["divider"]:
            return "unclear whether the title or the postscript counts as a paragraph"
    if "sentence_count" in kinds and "postscript" in kinds \
            and kinds["sentence_count"].params["relation"] != "at least":
        return "unclear whether the postscript's sentences count"
    return None


def _set_conflicts(checks: Sequence[Check]) -> list[str]:
    by = {c.kind: c for c in checks}
    forced = [text for c in checks for text in literals(c)]
    found = []
    if "forbidden_word" in by:
        banned = by["forbidden_word"].params["word"]
        if any(occurrences(text, banned) for c in checks if c.kind != "keyword"
               for text in literals(c)):
            found.append("a required phrase or marker contains the forbidden word")
    if "no_commas" in by and any("," in text for text in forced):
        found.append("a required phrase contains a comma")
    if "keyword" in by:
        word = by["keyword"].params["word"]
        brought = sum(occurrences(text, word) for c in checks if c.kind != "keyword"
                      for text in literals(c))
        if brought > bounds(by["keyword"])[1]:
            found.append("required phrases already use the keyword more often than allowed")
    if "letter_frequency" in by:
        letter = by["letter_frequency"].params["letter"].casefold()
        if sum(text.casefold().count(letter) for text in forced) > \
                bounds(by["letter_frequency"])[1]:
            found.append("required phrases already use the letter more often than allowed")
    if "capital_word_count" in by:
        capitals = sum(capital_words(text) for text in forced)
        if capitals > bounds(by["capital_word_count"])[1]:
            found.append("required markers already hold more capitalised words than allowed")
    found.extend(_size_conflicts(by, forced))
    return found


def _size_conflicts(by: dict[str, Check], forced: list[str]) -> list[str]:
    found = []
    low = {kind: bounds(c)[0] for kind, c in by.items() if "relation" in c.params}
    sentences_high = bounds(by["sentence_count"])[1] if "sentence_count" in by else math.inf
    if "paragraph_count" in by and low["paragraph_count"] > sentences_high:
        found.append("more paragraphs than sentences")
    if "word_count" not in by:
        return found
    words_low, words_high = bounds(by["word_count"])
    if words_low > WORDS_PER_SENTENCE * sentences_high:
        found.append("too many words for so few sentences")
    prose = max([low.get("sentence_count", 0) * WORDS_PER_UNIT["sentence_count"],
                 low.get("paragraph_count", 0) * WORDS_PER_UNIT["paragraph_count"]]
                + [low[k] * WORDS_PER_UNIT[k] for k in
                   ("highlight_count", "placeholder_count", "capital_word_count") if k in low]
                + [sum(len(text.split()) for text in forced)])
    parts = sum(low[k] * WORDS_PER_UNIT[k] for k in STRUCTURE if k in low)
    extras = 2 * ("title" in by) + 4 * ("postscript" in by)
    if prose + parts + extras > words_high:
        found.append("the other requirements need more words than the word limit allows")
    if "letter_frequency" in by and low["letter_frequency"] > words_high:
        found.append("more of the letter than the word limit leaves room for")
    return found


def conflicts(checks: Sequence[Check]) -> list[str]:
    """Every reason the checks cannot stand together in one prompt; empty when they can."""
    found = [f"{a.kind} + {b.kind}: {reason}" for i, a in enumerate(checks)
             for b in checks[i + 1:] if (reason := _pair_conflict(a, b))]
    return found + _set_conflicts(checks)


def compatible(checks: Sequence[Check]) -> bool:
    return not conflicts(checks)

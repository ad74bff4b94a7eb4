"""The deterministic pre-pass: regexes for the common ways English and Chinese requests state
requirements code can verify ("at least 300 words", "in 3 paragraphs", "不少于800字",
"分为三个部分", "以……结尾", "all lowercase", "in JSON format"...). Each check found keeps the
request words it came from as its `quote`.

Rules the labels of `tests/data/checks/` follow too:
- "about / around / approximately N", "N字左右", "约N字" and a bare "a 500-word essay" or
  "写一篇800字的" are `between` floor(0.8 N) and ceil(1.2 N) (`numbers.TOLERANCE`);
- "more than N" is `at least N`, "less than / under / within N" is `at most N`;
- a length per item ("800 words each", "每段100字") is not a whole-response count: skipped;
- a count of Chinese characters (N字) is `char_count`; a count of words is `word_count`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rubrics.checks.base import ParamsInvalid
from rubrics.checks.model import Check
from rubrics.checks.phrasings import (
    EACH_AFTER,
    EACH_BEFORE,
    EACH_ZH_AFTER,
    EACH_ZH_BEFORE,
    LIST_ITEM_PAREN,
    RULES,
)


def _per_item(text: str, match: re.Match[str]) -> bool:
    after = text[match.end():match.end() + 30]
    before = text[max(0, match.start() - 40):match.start()]
    line_start = text.rfind("\n", 0, match.start()) + 1
    if LIST_ITEM_PAREN.match(text[line_start:match.start()]):
        return True
    return bool(EACH_AFTER.search(after) or EACH_BEFORE.search(before)
                or EACH_ZH_AFTER.match(after) or EACH_ZH_BEFORE.search(before))


def _found(text: str) -> Iterator[tuple[int, Check]]:
    for pattern, build in RULES:
        for match in pattern.finditer(text):
            if _per_item(text, match):
                continue
            for kind, params in build(match):
                try:
                    yield match.start(), Check(kind=kind, params=params, source="prepass",
                                               quote=" ".join(match.group(0).split())[:400])
                except (ParamsInvalid, ValueError):
                    continue


def prepass(request: str) -> tuple[Check, ...]:
    """The checks the request's own words state, first occurrence of each requirement kept,
    in the order they appear; an overlapping, weaker match of the same kind (the "800字" in
    "不少于800字") is dropped."""
    found = [c for _, c in sorted(_found(request), key=lambda pair: pair[0])]
    kept: dict[tuple[str, str], Check] = {}
    spans: list[tuple[str, str]] = []
    for check in found:
        if check.key() in kept:
            continue
        if any(check.kind == kind and check.quote in quote and check.quote != quote
               for kind, quote in spans):
            continue
        kept[check.key()] = check
        spans.append((check.kind, check.quote))
    marked = {(c.params["relation"], c.params["n"]) for c in kept.values()
              if c.kind == "section_count" and c.params["marker"]}
    return tuple(c for c in kept.values() if not (
        c.kind == "section_count" and not c.params["marker"]
        and (c.params["relation"], c.params["n"]) in marked))

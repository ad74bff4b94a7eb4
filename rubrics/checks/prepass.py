"""The deterministic pre-pass: regexes for the common ways English and Chinese requests state
requirements code can verify ("at least 300 words", "in 3 paragraphs", "不少于800字",
"分为三个部分", "以……结尾", "all lowercase", "in JSON format"...). Each check found keeps the
request words it came from as its `quote`.

Rules the labels of `tests/data/checks/` follow too:
- "about / around / approximately N", "N字左右", "约N字" and a bare "a 500-word essay" or
  "写一篇800字的" are `between` floor(0.8 N) and ceil(1.2 N) (`numbers.TOLERANCE`);
- "more than / over / exceeding N" and "超过N字" are `at least N+1`; "less than / under N"
  and "少于N字" are `at most N-1`; "no more than / within / up to N" is `at most N`;
- a length per item ("800 words each", "每段100字") is not a whole-response count: skipped;
- a count of Chinese characters (N字) is `char_count`; a count of words is `word_count`.
"""

from __future__ import annotations

import json
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
    PART_OF,
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


_DIVIDER = re.compile(r"(?:markdown\s+divider|separated\s+(?:with|by))\s*:?\s*(?:the\s+)?"
                      r"(?:markdown\s+divider\s*:?\s*)?`?(\*\*\*|---)`?|用\s*(\*\*\*|---)\s*分隔",
                      re.I)
_SCHEMA = re.compile(r"json\s*schema|schema", re.I)
SCHEMA_CHARS = 4000


def _schemas(request: str) -> Iterator[tuple[int, Check]]:
    """A JSON Schema the request spells out (an object with "type" or "properties" right
    after the word "schema"): the answer must be JSON valid against it."""
    decoder = json.JSONDecoder()
    for match in _SCHEMA.finditer(request):
        brace = request.find("{", match.end(), match.end() + 200)
        if brace < 0:
            continue
        try:
            schema, _ = decoder.raw_decode(request, brace)
        except ValueError:
            continue
        text = json.dumps(schema, ensure_ascii=False, sort_keys=True)
        if isinstance(schema, dict) and {"type", "properties"} & set(schema) \
                and len(text) <= SCHEMA_CHARS:
            yield match.start(), Check(kind="json_schema", params={"schema": text},
                                       quote=match.group(0), source="prepass")


def _is_count(check: Check) -> bool:
    return "relation" in check.params


def _without_misreadings(checks: list[Check]) -> list[Check]:
    """The checks less those read from words a longer check of a kind `PART_OF` names reads
    otherwise (an all-capitals response inside a count of capitalised words)."""
    return [c for c in checks if not any(
        other.kind in PART_OF.get(c.kind, ()) and c.quote in other.quote
        and c.quote != other.quote for other in checks)]


def prepass(request: str) -> tuple[Check, ...]:
    """The checks the request's own words state, first occurrence of each requirement kept,
    in the order they appear. A match inside a longer one of the same kind, or of any count
    kind inside a longer count (the "800字" in "不少于800字", the "2 sections" in "highlight
    at least 2 sections"), is dropped."""
    found = [c for _, c in sorted([*_found(request), *_schemas(request)],
                                  key=lambda pair: pair[0])]
    kept: dict[tuple[str, str], Check] = {}
    spans: list[Check] = []
    for check in found:
        if check.key() in kept:
            continue
        if any(check.quote in other.quote and check.quote != other.quote
               and (check.kind == other.kind or _is_count(check) and _is_count(other))
               for other in spans):
            continue
        kept[check.key()] = check
        spans.append(check)
    divider = _DIVIDER.search(request)
    checks = [c for c in kept.values()]
    if divider:
        mark = divider.group(1) or divider.group(2)
        checks = [c.model_copy(update={"params": {**c.params, "divider": mark}})
                  if c.kind == "paragraph_count" else c for c in checks]
    checks = _without_misreadings(checks)
    marked = {(c.params["relation"], c.params["n"]) for c in checks
              if c.kind == "section_count" and c.params["marker"]}
    return tuple(c for c in checks if not (
        c.kind == "section_count" and not c.params["marker"]
        and (c.params["relation"], c.params["n"]) in marked))

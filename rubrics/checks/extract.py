"""Checks from the checklist agents: the schema they answer under (built from the registry),
reading their answer back, and merging it with the pre-pass.

Strict structured-output modes take no `oneOf`, so one check is a flattened object: the kind
(an enum of the registry), the request words it came from, the count fields (relation, n,
upper) and one `text` field for the kind's other parameter, each nullable; a kind reads the
fields it uses and ignores the rest. An agent's check is kept only if the pre-pass found the
same requirement, or its quote really occurs in the request (whitespace and case aside) and
says that kind of requirement (`supports`): a count quotes its number and what it counts, a
keyword quotes its word, a title quotes "title" or "<<"... A check the request does not say
would fail good answers; a small agent quotes any words of the request ("The sky is blue") for
any kind, and reads a count from any number ("List exactly 3 benefits" as a word count of at
least 3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rubrics.checks.base import MAX_COUNT, RELATIONS, ParamsInvalid, fold
from rubrics.checks.kinds import KINDS
from rubrics.checks.model import Check
from rubrics.checks.numbers import EN_NUMBER, TOLERANCE, ZH_NUMBER, to_int

MAX_AGENT_CHECKS = 6
QUOTE_CHARS = 200


COUNT_FIELDS = ("relation", "n", "upper")
TEXT_CHARS = 200


# What a quote must say for an agent's check of each kind to stand on it; a kind whose
# parameter is a word or phrase must also quote that word or phrase (`_QUOTES_PARAM`).
CUES: dict[str, re.Pattern[str]] = {kind: re.compile(cue, re.I) for kind, cue in {
    "lowercase": r"lower\s*-?\s*case|小写",
    "uppercase": r"capital|upper\s*-?\s*case|all\s+caps|大写",
    "capital_word_count": r"capital|upper\s*-?\s*case|caps|大写",
    "no_commas": r"comma|逗号",
    "quoted": r"quot|引号",
    "title": r"title|<<|标题|题目",
    "postscript": r"p\.\s*s\.|postscript|附言",
    "json": r"json",
    "json_schema": r"schema",
    "language": r"language|english|chinese|french|german|spanish|japanese|korean|russian|"
                r"italian|portuguese|中文|英文|语",
    "starts_with": r"start|begin|open|first|开头|开始|以",
    "ends_with": r"\bend|finish|close|last|conclu|结尾|结束|以",
    "xml_tag": r"<|\btags?\b|标签",
    "field_marker": r"\[\[|marker|field|字段",
    "letter_frequency": r"letter|字母",
    # a count's quote names what it counts: "List exactly 3 benefits" is no word count
    "word_count": r"word|字|词",
    "char_count": r"char|letter|字",
    "sentence_count": r"sentence|句",
    "paragraph_count": r"paragraph|段",
    "bullet_count": r"bullet|point|item|list|dash|要点|条|项|列",
    "numbered_count": r"number|list|item|step|point|条|项|步|列",
    "section_count": r"section|part|chapter|部分|章|节",
    "heading_count": r"heading|header|title|标题",
    "highlight_count": r"highlight|bold|emphas|italic|\*|突出|加粗|强调|标记",
    "placeholder_count": r"placeholder|\[|占位",
}.items()}
_QUOTES_PARAM = {"keyword": "word", "forbidden_word": "word", "starts_with": "phrase",
                 "ends_with": "phrase", "xml_tag": "tag", "field_marker": "name"}


def _quotes_count(check: Check, quote: str) -> bool:
    """Does `quote` write the check's count: a number in it is N or the upper bound (one off
    for "fewer than 50", within the tolerance of "about"), or lies between them."""
    lo, hi = check.params.get("n"), check.params.get("upper")
    for raw in re.findall(f"{EN_NUMBER}|{ZH_NUMBER}", quote, re.I):
        q = to_int(raw)
        if q is None:
            continue
        slack = max(1, round(q * TOLERANCE))
        if any(b is not None and abs(b - q) <= slack for b in (lo, hi)) \
                or (lo is not None and hi is not None and lo <= q <= hi):
            return True
    return False


def supports(check: Check, quote: str) -> bool:
    """Does `quote` state a requirement of the check's kind: the count it asks for, the kind's
    cue word, and the word, phrase, tag or field name the check is about where it has one."""
    if "relation" in check.params and check.kind not in ("keyword", "letter_frequency") \
            and not _quotes_count(check, quote):
        return False
    cue = CUES.get(check.kind)
    if cue is not None and not cue.search(quote):
        return False
    param = _QUOTES_PARAM.get(check.kind)
    return param is None or fold(str(check.params.get(param) or "")) in fold(quote)


def _text_param(kind: str) -> str | None:
    """The kind's one parameter that is not part of a count (every kind has at most one)."""
    names = [n for n in KINDS[kind].params_schema["properties"] if n not in COUNT_FIELDS]
    return names[0] if names else None


def check_item_schema() -> dict[str, Any]:
    """One check, flattened: the count fields, and `text` for the kind's one other parameter
    (the word, phrase, marker, letter, tag, language code...). Six fields keep a check short
    to decode; unused ones are null."""
    properties: dict[str, Any] = {
        "kind": {"type": "string", "enum": list(KINDS)},
        "quote": {"type": "string", "minLength": 1, "maxLength": QUOTE_CHARS},
        "relation": {"type": ["string", "null"], "enum": [*RELATIONS, None]},
        "n": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_COUNT},
        "upper": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_COUNT},
        "text": {"type": ["string", "null"], "maxLength": TEXT_CHARS},
    }
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def checks_schema(max_items: int = MAX_AGENT_CHECKS) -> dict[str, Any]:
    return {"type": "array", "items": check_item_schema(), "maxItems": max_items}


def kinds_prompt() -> str:
    """The registry in a few lines for the agents' prompt: each kind and the fields it uses."""
    lines = []
    for kind in KINDS.values():
        props = kind.params_schema["properties"]
        used = [n for n in COUNT_FIELDS if n in props]
        other = _text_param(kind.name)
        if other:
            used.append(f"text = the {other}")
        lines.append(f"- {kind.name}: {kind.description} ({', '.join(used) or 'no fields'})")
    return "\n".join(lines)


def agent_verdict(item: Mapping[str, Any], request: str,
                  found: Iterable[Check] = ()) -> tuple[Check | None, str]:
    """The check an agent's flattened item states and why it is kept or dropped: "kept",
    "found by the pre-pass", "unknown kind", "bad parameters", "no quote", "quote not in the
    request" or "quote does not say it" (see `supports`)."""
    kind = item.get("kind")
    if kind not in KINDS:
        return None, "unknown kind"
    wanted = KINDS[kind].params_schema["properties"]
    params = {name: item.get(name) for name in COUNT_FIELDS if name in wanted}
    other = _text_param(kind)
    if other:
        params[other] = item.get("text")
    quote = " ".join(str(item.get("quote") or "").split())[:400]
    try:
        check = Check(kind=kind, params=params, quote=quote, source="agent")
    except (ParamsInvalid, ValueError):
        return None, "bad parameters"
    if check.key() in {c.key() for c in found}:
        return check, "found by the pre-pass"
    if not quote:
        return None, "no quote"
    if fold(quote) not in fold(request):
        return None, "quote not in the request"
    if not supports(check, quote):
        return None, "quote does not say it"
    return check, "kept"


def from_agent(item: Mapping[str, Any], request: str,
               found: Iterable[Check] = ()) -> Check | None:
    """The check an agent's flattened item states, or None when it is malformed, or neither
    the pre-pass found it nor its quote occurs in `request` and `supports` it."""
    return agent_verdict(item, request, found)[0]


def _slot(check: Check) -> tuple[Any, ...]:
    """What one requirement is about: two checks in the same slot disagree on its target."""
    p = check.params
    ident = (p.get("word") or p.get("letter") or p.get("marker") or p.get("tag")
             or p.get("name") or "")
    return check.kind, fold(str(ident))


def merge(prepass: Sequence[Check], agent: Sequence[Check]) -> tuple[Check, ...]:
    """The pre-pass's checks, then the agents' new ones: deduplicated by `Check.key()`, and an
    agent check dropped where the pre-pass has the same slot with other params (the pre-pass
    read the request's own numbers; the agent may have rounded them)."""
    out: dict[tuple[str, str], Check] = {c.key(): c for c in prepass}
    slots = {_slot(c) for c in prepass}
    for check in agent:
        if check.key() not in out and _slot(check) not in slots:
            out[check.key()] = check
    return tuple(out.values())

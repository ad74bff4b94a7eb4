"""Token budgets for the loop's structured calls, derived from the schema each call sends.

A hidden call (a coding agent, a judge, a reflection) needs as many tokens as its fullest
planned document: every string at its `maxLength` (small models fill strings to their bound),
every array at its planned number of items, the keys and the punctuation; plus the tokens a
decoder keeps back to close the document when the budget runs low (about one and a half
times its shortest form). A budget below that makes every answer end cut short or empty; a
budget far above it lets a small model spend minutes repeating itself inside one string. The
operator's `max_tokens` for the judge stays the ceiling; the shortest document's need is the
floor.

The string bounds below are what each kind of field needs from any model; they are sent in
the schemas, so a constrained decoder stops every string there and the budget holds.
"""

from __future__ import annotations

import math
from typing import Any

from generation.base import JsonSchema
from generation.types import ChatParams

# What each kind of generated field needs, in characters (sent as the schema's maxLength).
NAME = 60        # a dimension or candidate name
SENTENCE = 200   # a description, rationale, objective or summary: one sentence
REASON = 160     # a candidate's reason, a band description, a rewrite action
QUOTE = 240      # evidence: a quote of a sentence or two, or what is missing
CRITIQUE = 600   # the holistic judge's one paragraph

PLANNED_ITEMS = 2       # items planned for a required array, if its bounds allow
CHARS_PER_TOKEN = 4.0   # English prose in a byte-level BPE vocabulary (SmolLM2: 4.5)
STRUCTURE_CHARS_PER_TOKEN = 3.0  # keys, quotes, brackets
MARGIN = 16


def planned_items(schema: JsonSchema) -> int:
    """Its minimum, at least PLANNED_ITEMS; one for an array that may be empty (checks that
    most requests do not state)."""
    least = int(schema.get("minItems", 0))
    most = schema.get("maxItems")
    count = max(least, PLANNED_ITEMS) if least else 1
    return min(count, int(most)) if most is not None else count


def _tokens(schema: Any, fullest: bool) -> float:
    """Tokens of the fullest planned document (`fullest`) or of the shortest one."""
    if not isinstance(schema, dict):
        return 1.0
    if "enum" in schema:
        values = [str(v) for v in schema["enum"]] or [""]
        chars = max(map(len, values)) if fullest else min(map(len, values))
        return chars / CHARS_PER_TOKEN + 1
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if kind == "object":
        props = schema.get("properties") or {}
        keys = sum(len(k) + 3 for k in props) / STRUCTURE_CHARS_PER_TOKEN
        return 1 + keys + sum(_tokens(p, fullest) for p in props.values())
    if kind == "array":
        count = planned_items(schema) if fullest else max(int(schema.get("minItems", 0)), 1)
        return 1 + count * (1 + _tokens(schema.get("items"), fullest))
    if kind == "string":
        bound = schema.get("maxLength", SENTENCE) if fullest else schema.get("minLength", 0)
        return 1 + int(bound) / CHARS_PER_TOKEN
    return 2.0  # a number, a boolean, null


def schema_budget(schema: JsonSchema) -> int:
    """The tokens a call answering with `schema` needs: its fullest planned document and
    the closing reserve."""
    shortest = _tokens(schema, fullest=False)
    return math.ceil(_tokens(schema, fullest=True) + 1.5 * shortest + MARGIN)


def shortest_budget(schema: JsonSchema) -> int:
    """Below this, even the shortest document may not fit with its closing reserve."""
    return math.ceil(2.5 * _tokens(schema, fullest=False) + MARGIN)


def budgeted(params: ChatParams, schema: JsonSchema) -> ChatParams:
    """`params` with `max_tokens` set for one call answering with `schema`: the schema's
    budget, under the caller's `max_tokens` when that is set, never under the shortest
    document's need."""
    need = schema_budget(schema)
    if params.max_tokens is not None:
        need = min(need, params.max_tokens)
    return params.with_(max_tokens=max(need, shortest_budget(schema)))


def fitted(params: ChatParams, schema: JsonSchema) -> tuple[ChatParams, JsonSchema]:
    """The call's budget (`budgeted`) and the schema to send with it. When the caller's
    `max_tokens` is below the schema's budget, every string bound shrinks by the same factor
    (to no less than MIN_CHARS) so that the planned document fits: each field gets its
    share, where a decoder running out of tokens would otherwise close the last fields
    empty."""
    need = schema_budget(schema)
    cap = params.max_tokens
    if cap is None or cap >= need:
        return params.with_(max_tokens=need), schema
    content = _content_tokens(schema)
    room = cap - (need - content)
    factor = max(0.0, room / content) if content else 1.0
    shrunk = _scaled(schema, factor)
    return budgeted(params, shrunk), shrunk


MIN_CHARS = 24  # a string bound never shrinks below this: a few words


def _content_tokens(schema: Any) -> float:
    """The planned document's tokens spent inside bounded strings (what shrinking saves)."""
    if not isinstance(schema, dict) or "enum" in schema:
        return 0.0
    kind = schema.get("type")
    if kind == "object":
        return sum(_content_tokens(p) for p in (schema.get("properties") or {}).values())
    if kind == "array":
        return planned_items(schema) * _content_tokens(schema.get("items"))
    if kind == "string" and "maxLength" in schema:
        return int(schema["maxLength"]) / CHARS_PER_TOKEN
    return 0.0


def _scaled(schema: Any, factor: float) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if out.get("type") == "string" and "maxLength" in out and "enum" not in out:
        bound = max(MIN_CHARS, int(out.get("minLength", 0)), math.floor(out["maxLength"] * factor))
        out["maxLength"] = min(out["maxLength"], bound)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _scaled(v, factor) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _scaled(out["items"], factor)
    return out

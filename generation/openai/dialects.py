"""How each OpenAI-compatible engine is asked for JSON matching a schema, and which schema
keywords it compiles.

The same request is a 200 on one engine and a crash on another: llama-cpp-python's server
answers `response_format={"type": "json_schema", ...}` with a 500 and wants
`{"type": "json_object", "schema": ...}`; llama.cpp's grammar builder refuses (and has
crashed on) a string `maxLength` near a thousand; older vLLM reads the schema from the extra
field `guided_json`, newer vLLM from `structured_outputs`. A `Dialect` is one request form
plus the keyword rules of the engine behind it. A length or count bound longer than the
engine compiles is sent at the engine's limit (a tighter schema, so the decoder still stops
every string: an unbounded string lets a small model fill its whole token budget with one
field). What a dialect leaves out or tightens is enforced after parsing
(`generation.structured.conform`) against the caller's full schema, and a call without `max_tokens`
gets the full schema's size bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from generation.base import JsonSchema, schema_response_format
from generation.types import Message

Form = Literal["json_schema", "json_object_schema", "structured_outputs", "guided_json", "none"]
FORMS: tuple[Form, ...] = ("json_schema", "json_object_schema", "structured_outputs",
                           "guided_json", "none")
SETTINGS = ("auto", *FORMS)
# The order `auto` tries: the standard form first, llama-cpp-python's next, then vLLM's
# extra fields (newer, older). `none` needs no probe: it is what is left when all refuse.
PROBE_ORDER: tuple[Form, ...] = ("json_schema", "json_object_schema", "structured_outputs",
                                 "guided_json")

# llama.cpp's GBNF parser refuses a repetition whose rules times count reaches 2000
# ("number of rules that are going to be repeated multiplied by the new repetition exceeds
# sane defaults"); a string bound expands to one repetition of its character rule, an array
# bound to one of its item rule (several rules). These bounds keep well under it.
LLAMA_STRING_BOUND = 200
LLAMA_ITEMS_BOUND = 100
# Keywords llama.cpp's json-schema-to-grammar compiles (both llama-server and the copy in
# llama-cpp-python); anything else is dropped from what is sent and checked after parsing.
LLAMA_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "prefixItems",
    "minItems", "maxItems", "minLength", "maxLength", "enum", "const", "anyOf", "oneOf",
    "allOf", "$ref", "$defs", "definitions", "pattern", "format", "minimum", "maximum",
    "description", "title",
})

SCHEMA_INSTRUCTION = ("Answer with only a JSON object, no prose and no code fence, that "
                      "matches this JSON Schema:\n")


@dataclass(frozen=True, slots=True)
class Rules:
    """What an engine compiles: None means no limit."""

    string_bound: int | None = None
    items_bound: int | None = None
    keywords: frozenset[str] | None = None


FULL = Rules()
LLAMA_CPP = Rules(LLAMA_STRING_BOUND, LLAMA_ITEMS_BOUND, LLAMA_KEYWORDS)


@dataclass(frozen=True, slots=True)
class Dialect:
    """A request form and the engine whose keyword rules shape the schema sent."""

    form: Form
    engine: str = "generic"
    rules: Rules = FULL

    @property
    def constrained(self) -> bool:
        """Whether the engine decodes under the schema (not `none`)."""
        return self.form != "none"

    def describe(self) -> dict[str, Any]:
        rules = self.rules
        return {"form": self.form, "engine": self.engine,
                "max_string_length_sent": rules.string_bound,
                "max_items_sent": rules.items_bound}


def dialect(form: Form, engine: str | None = None) -> Dialect:
    """The dialect of `form` on `engine` (a name from `engine_of`, or None when unknown).
    llama-cpp-python's form always means llama.cpp's rules; `json_schema` means them when
    the engine is llama-server."""
    if form == "json_object_schema" or engine == "llama.cpp":
        return Dialect(form, "llama.cpp", LLAMA_CPP if form != "none" else FULL)
    return Dialect(form, engine or "generic")


DIALECTS: dict[str, Dialect] = {form: dialect(form) for form in FORMS}


def engine_of(models: Sequence[dict[str, Any]]) -> str | None:
    """The engine behind an upstream, from its GET /models entries (`owned_by`)."""
    owners = {str(m.get("owned_by") or "") for m in models if isinstance(m, dict)}
    if "llamacpp" in owners:
        return "llama.cpp"
    for name in ("vllm", "sglang"):
        if name in owners:
            return name
    return None


def loosen(schema: Any, rules: Rules) -> Any:
    """`schema` with what `rules` cannot compile taken out (a fresh copy; the input is kept)."""
    if rules == FULL:
        return schema
    return _loosen(schema, rules)


def _loosen(node: Any, rules: Rules) -> Any:
    if isinstance(node, list):
        return [_loosen(item, rules) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if rules.keywords is not None and key not in rules.keywords:
            continue
        if key in _LIMITS and _over(value, limit := getattr(rules, _LIMITS[key])):
            # A longer bound than the engine compiles is sent at the engine's limit (every
            # answer then still fits the caller's schema), unless that would fall below the
            # minimum; a minimum over the limit is only checked after parsing.
            least = _MINIMUM_OF.get(key)
            if least is not None and not _over(node.get(least, 0), limit):
                out[key] = limit
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _loosen(sub, rules) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"):
            out[key] = _loosen(value, rules)
        else:
            out[key] = value
    return out


_LIMITS = {"maxLength": "string_bound", "minLength": "string_bound",
           "maxItems": "items_bound", "minItems": "items_bound"}  # keyword -> the rule that caps it
_MINIMUM_OF = {"maxLength": "minLength", "maxItems": "minItems"}


def _over(value: Any, bound: int | None) -> bool:
    return bound is not None and isinstance(value, int) and value > bound


def shape(body: dict[str, Any], form: Form, schema: JsonSchema) -> None:
    """Put `schema` into a chat request `body` the way `form` asks for it."""
    body.pop("response_format", None)
    if form == "json_schema":
        body["response_format"] = schema_response_format(schema)
    elif form == "json_object_schema":
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif form == "structured_outputs":
        body["structured_outputs"] = {"json": schema}
    elif form == "guided_json":
        body["guided_json"] = schema
    else:
        body["messages"] = with_schema_prompt(body["messages"], schema)


def with_schema_prompt(messages: Sequence[Message], schema: JsonSchema) -> list[Message]:
    """The conversation with the schema stated at the end of the last user turn (a new user
    turn when the last one is not a plain-text user turn)."""
    note = SCHEMA_INSTRUCTION + orjson.dumps(schema).decode()
    out = list(messages)
    last = out[-1] if out else None
    if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
        out[-1] = {**last, "content": f"{last['content']}\n\n{note}"}
    else:
        out.append({"role": "user", "content": note})
    return out


def size_bound(schema: Any, root: Any = None, depth: int = 0) -> int | None:
    """At most how many characters a JSON value valid against `schema` takes (None when the
    schema does not bound it): what replaces a dropped string bound as `max_tokens` (a token
    is at least one character)."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 16:
        return None
    if isinstance(schema.get("$ref"), str):
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return size_bound(target, root, depth + 1)
    if "enum" in schema:
        return max((len(orjson.dumps(v)) for v in schema["enum"]), default=None)
    if "const" in schema:
        return len(orjson.dumps(schema["const"]))
    kind = schema.get("type")
    if kind == "string":
        limit = schema.get("maxLength")
        return None if not isinstance(limit, int) else 2 + 6 * limit  # every char escaped
    if kind == "integer" or kind == "number":
        return 24
    if kind == "boolean" or kind == "null":
        return 5
    if kind == "object":
        if schema.get("additionalProperties") is not False:
            return None
        total = 2
        for name, sub in (schema.get("properties") or {}).items():
            inner = size_bound(sub, root, depth + 1)
            if inner is None:
                return None
            total += len(orjson.dumps(name)) + 4 + inner
        return total
    if kind == "array":
        count, inner = schema.get("maxItems"), size_bound(schema.get("items"), root, depth + 1)
        if not isinstance(count, int) or inner is None:
            return None
        return 2 + count * (inner + 2)
    return None


# -- the start-up probe ---------------------------------------------------------------------
# A schema no model would follow by chance: a property name and value it cannot guess, so an
# upstream that ignores the form it was sent fails the probe. The verdict tests only what a
# form guarantees (the answer parses, the object has exactly the required keys, the enum
# holds, the integer is an integer); bounds such as an integer's minimum are not compiled by
# every engine (llama.cpp's grammar leaves them out) and are checked after parsing anyway, so
# a model's guess at a number never decides the form.
PROBE_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"redraft_probe": {"type": "string", "enum": ["structured"]},
                   "rounds": {"type": "integer"}},
    "required": ["redraft_probe", "rounds"],
    "additionalProperties": False,
}
PROBE_MESSAGES: list[Message] = [{"role": "user", "content": "Reply with a JSON object."}]
PROBE_MAX_TOKENS = 64
PROBE_KEYS = frozenset(PROBE_SCHEMA["required"])


def probe_verdict(value: Any) -> str:
    """What a parsed probe answer says about the form: "ok"; "not supported (...)" when
    nothing of the schema reached the decoder (the server dropped the field); "broke the
    schema (...)" when the schema was applied but not kept."""
    if not isinstance(value, dict) or not PROBE_KEYS & set(value):
        return "not supported (the answer has none of the schema's properties: the server " \
               "dropped the field or ignored it)"
    broken = []
    if set(value) != PROBE_KEYS:
        broken.append(f"keys {sorted(value)} where the schema requires exactly "
                      f"{sorted(PROBE_KEYS)}")
    if value.get("redraft_probe") != "structured":
        broken.append(f"redraft_probe is {value.get('redraft_probe')!r}, outside its enum")
    rounds = value.get("rounds")
    if "rounds" in value and (not isinstance(rounds, int) or isinstance(rounds, bool)):
        broken.append(f"rounds is {rounds!r}, not an integer")
    return f"broke the schema ({'; '.join(broken)})" if broken else "ok"

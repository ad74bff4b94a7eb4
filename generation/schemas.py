"""JSON Schema pieces for structured calls, built per call from the request at hand.

Every schema sent says what its validator checks: enums for names that must be one of a
known set, integer bounds for scores, `minItems`/`maxItems` for counts, `maxLength` for text
that is cut to that length anyway. Only what strict structured-output modes (OpenAI's
strict mode, vLLM's xgrammar and outlines, llguidance) accept is used: every object lists
all its properties as required and forbids others; no `$ref`, no `pattern`, no `format`.
What a schema cannot say (distinct names, bands that tile a scale) is repaired by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generation.base import JsonSchema


def name_key(name: str) -> str:
    """Names that differ only in case or spacing are the same dimension to a judge."""
    return " ".join(name.split()).casefold()


NAME_CHARS = 80      # a dimension or candidate name
LINE_CHARS = 400     # a description, rationale, reason, objective, action or summary
EVIDENCE_CHARS = 1000  # a quote from the judged text


def obj(properties: dict[str, JsonSchema]) -> JsonSchema:
    """An object with exactly these properties, all required, in this order."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def text(max_length: int = LINE_CHARS, min_length: int = 0) -> JsonSchema:
    schema: JsonSchema = {"type": "string", "maxLength": max_length}
    if min_length:
        schema["minLength"] = min_length
    return schema


def integer(low: int, high: int) -> JsonSchema:
    return {"type": "integer", "minimum": low, "maximum": high}


def one_of(values: Sequence[str] | Sequence[int]) -> JsonSchema:
    """An enum of distinct values; the type is stated too (some decoders want it)."""
    distinct = list(dict.fromkeys(values))
    kind = "integer" if distinct and isinstance(distinct[0], int) else "string"
    return {"type": kind, "enum": distinct}


def array(items: JsonSchema, min_items: int = 0, max_items: int | None = None) -> JsonSchema:
    schema: JsonSchema = {"type": "array", "items": items}
    if min_items:
        schema["minItems"] = min_items
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def clip(value: str, limit: int) -> str:
    """`value` stripped and cut to `limit` characters: what the schema's maxLength allows."""
    return value.strip()[:limit].strip()


def distinct_names(names: Sequence[str], *, fallback: str = "Dimension") -> list[str]:
    """Names made non-blank and distinct (case and spacing ignored), order kept.

    A blank name becomes "<fallback> <position>"; a repeated one gets " (2)", " (3)"... —
    what a constrained decoder cannot be told, repaired rather than retried.
    """
    seen: set[str] = set()
    out = []
    for position, raw in enumerate(names, 1):
        base = " ".join(raw.split())[:NAME_CHARS] or f"{fallback} {position}"
        name, copy = base, 1
        while name_key(name) in seen:
            copy += 1
            name = f"{base} ({copy})"
        seen.add(name_key(name))
        out.append(name)
    return out


def strict_problems(schema: Any, path: str = "$") -> list[str]:
    """Where `schema` breaks the strict-mode rules above (empty when it keeps them)."""
    allowed = {"type", "properties", "required", "additionalProperties", "items", "minItems",
               "maxItems", "minLength", "maxLength", "minimum", "maximum", "enum",
               "description", "title"}
    problems: list[str] = []
    if not isinstance(schema, dict):
        return [f"{path}: not a schema object"]
    extra = set(schema) - allowed
    if extra:
        problems.append(f"{path}: unsupported keywords {sorted(extra)}")
    if schema.get("type") == "object":
        props = schema.get("properties") or {}
        if sorted(schema.get("required") or []) != sorted(props):
            problems.append(f"{path}: not every property is required")
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties is not false")
        for name, sub in props.items():
            problems.extend(strict_problems(sub, f"{path}.{name}"))
    if schema.get("type") == "array":
        problems.extend(strict_problems(schema.get("items"), f"{path}[]"))
    if "type" not in schema:
        problems.append(f"{path}: no type")
    return problems

"""Validation against the JSON Schema subset a request can give and a kind's params use:
type (one or a list), enum, const, properties, required, additionalProperties (bool or a
schema), items, minItems/maxItems, minLength/maxLength, minimum/maximum, anyOf/oneOf/allOf.

`jsonschema` is only a test dependency, so this is the part of it the checks need; keywords
outside the subset are ignored (never a false failure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, (object,)))


def problems(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Where `value` breaks `schema` (empty when it is valid)."""
    if schema is True or not isinstance(schema, Mapping):
        return []
    if schema is False:
        return [f"{path}: not allowed"]
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(value, k) for k in kinds):
            return [f"{path}: expected {' or '.join(kinds)}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: must be {schema['const']!r}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{path}: longer than {schema['maxLength']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: above {schema['maximum']}")
    if isinstance(value, dict):
        out.extend(_object(value, schema, path))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        if isinstance(schema.get("items"), Mapping):
            for i, item in enumerate(value):
                out.extend(problems(item, schema["items"], f"{path}[{i}]"))
    for sub in schema.get("allOf", ()):
        out.extend(problems(value, sub, path))
    for key in ("anyOf", "oneOf"):
        if key in schema and all(problems(value, sub, path) for sub in schema[key]):
            out.append(f"{path}: matches none of {key}")
    return out


def _object(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
    out = [f"{path}: missing {name!r}" for name in schema.get("required", ())
           if name not in value]
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in props:
            out.extend(problems(item, props[name], f"{path}.{name}"))
        elif extra is False:
            out.append(f"{path}: unexpected {name!r}")
        elif isinstance(extra, Mapping):
            out.extend(problems(item, extra, f"{path}.{name}"))
    return out

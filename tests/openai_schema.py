"""Validate bodies against the OpenAI components vendored in tests/data/openai/.

Each vendored file is an OpenAPI 3.1 `components.schemas` excerpt. OpenAPI 3.1 schemas are
JSON Schema 2020-12 plus a few keywords; what `jsonschema` needs done first:

- `nullable: true` (OpenAPI 3.0 style, still found in some components) becomes a type array
  with "null" (3.1 type arrays such as `["string", "null"]` are already JSON Schema);
- a `$ref` to a component that was not vendored becomes `false`, so a body carrying that
  field fails loudly instead of passing unchecked (redraft never sends those fields);
- `discriminator`, `x-*` and `deprecated` are annotations; the validator ignores them.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

DATA = Path(__file__).parent / "data" / "openai"
# Each file is a self-contained excerpt (chat completions and errors; the Responses API);
# a component is looked up in them in this order.
SPECS = (DATA / "chat_schemas.json", DATA / "responses_schemas.json")
_PREFIX = "#/components/schemas/"


def _resolved(node: Any, known: set[str]) -> Any:
    if isinstance(node, list):
        return [_resolved(n, known) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX) and ref[len(_PREFIX):] not in known:
        return False
    out = {k: _resolved(v, known) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        elif kind is None:
            out = {"anyOf": [out, {"type": "null"}]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


@cache
def _document(spec: Path) -> dict[str, Any]:
    raw = json.loads(spec.read_text())
    schemas = raw["components"]["schemas"]
    return {"components": {"schemas": _resolved(schemas, set(schemas))}}


@cache
def validator(component: str) -> Draft202012Validator:
    document = next((d for d in map(_document, SPECS) if component in d["components"]["schemas"]),
                    None)
    if document is None:
        raise KeyError(f"{component} is not vendored in {', '.join(s.name for s in SPECS)}")
    schema = {**document, "$ref": _PREFIX + component}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(component: str, body: Any) -> list[str]:
    """Every violation of `component` by `body`, as `path: message` lines (empty: valid)."""
    errors = list(validator(component).iter_errors(body))
    out = []
    for err in errors:
        # oneOf/anyOf failures: name the deepest, most specific reason
        err = best_match([err]) if err.context else err
        path = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{path}: {err.message}")
    return out


def assert_valid(component: str, body: Any) -> None:
    found = problems(component, body)
    assert not found, f"{component} violated:\n  " + "\n  ".join(found) + \
        f"\nbody: {json.dumps(body)[:2000]}"

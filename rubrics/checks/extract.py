"""Checks from the checklist agents: the schema they answer under (built from the registry),
reading their answer back, and merging it with the pre-pass.

Strict structured-output modes take no `oneOf`, so one check is a flattened object: the kind
(an enum of the registry), the request words it came from, and every parameter any kind has,
each nullable; a kind reads the parameters it knows and ignores the rest. An agent's check is
kept only if the pre-pass found the same requirement or its quote really occurs in the request
(whitespace and case aside): a check the request does not say would fail good answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rubrics.checks.base import ParamsInvalid, fold
from rubrics.checks.kinds import KINDS
from rubrics.checks.model import Check

MAX_AGENT_CHECKS = 8
QUOTE_CHARS = 200


def _nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    kind = out.get("type")
    kinds = list(kind) if isinstance(kind, list) else [kind]
    out["type"] = kinds if "null" in kinds else [*kinds, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    out.pop("minLength", None)
    return out


def flat_params() -> dict[str, dict[str, Any]]:
    """Every parameter of every kind, once, nullable (the first kind to name it sets its
    schema; kinds sharing a name share its meaning)."""
    params: dict[str, dict[str, Any]] = {}
    for kind in KINDS.values():
        for name, schema in kind.params_schema["properties"].items():
            params.setdefault(name, _nullable(schema))
    return params


def check_item_schema() -> dict[str, Any]:
    properties: dict[str, Any] = {
        "kind": {"type": "string", "enum": list(KINDS)},
        "quote": {"type": "string", "minLength": 1, "maxLength": QUOTE_CHARS},
        **flat_params(),
    }
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def checks_schema(max_items: int = MAX_AGENT_CHECKS) -> dict[str, Any]:
    return {"type": "array", "items": check_item_schema(), "maxItems": max_items}


def kinds_prompt() -> str:
    """The registry in a few lines for the agents' prompt: each kind and its parameters."""
    lines = []
    for kind in KINDS.values():
        names = ", ".join(kind.params_schema["properties"]) or "no parameters"
        lines.append(f"- {kind.name}: {kind.description} ({names})")
    return "\n".join(lines)


def from_agent(item: Mapping[str, Any], request: str,
               found: Iterable[Check] = ()) -> Check | None:
    """The check an agent's flattened item states, or None when it is malformed, or neither
    the pre-pass found it nor its quote occurs in `request`."""
    kind = item.get("kind")
    if kind not in KINDS:
        return None
    wanted = KINDS[kind].params_schema["properties"]
    params = {name: item.get(name) for name in wanted}
    quote = " ".join(str(item.get("quote") or "").split())[:400]
    try:
        check = Check(kind=kind, params=params, quote=quote, source="agent")
    except (ParamsInvalid, ValueError):
        return None
    if check.key() in {c.key() for c in found}:
        return check
    return check if quote and fold(quote) in fold(request) else None


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

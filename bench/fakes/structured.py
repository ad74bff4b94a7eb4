"""How the fake upstream takes a structured-output request: like one real engine, or any form.

Each mode accepts one way of asking for JSON and refuses the others as that engine does:
llama-cpp-python's server answers `response_format` type json_schema with a 500 (it wants
`{"type": "json_object", "schema": ...}`), the others a 400; both llama.cpp modes refuse a
string or array bound past what llama.cpp's grammar builder expands, with its message and a
500. `ignore` is an upstream that drops every structured field and reads a schema stated in
the prompt, as an instruction-following model would. An accepted request is rewritten to
the standard json_schema form, which is what the responders read.

It imports nothing of ours, so the fake upstream can load it when run by path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

MODES = ("any", "json_schema", "llama-server", "json_object_schema", "structured_outputs",
         "guided_json", "ignore")
# The form each mode accepts (None: every form).
ACCEPTS = {"any": None, "json_schema": "json_schema", "llama-server": "json_schema",
           "json_object_schema": "json_object_schema", "structured_outputs": "structured_outputs",
           "guided_json": "guided_json", "ignore": None}
LLAMA_MODES = ("llama-server", "json_object_schema")
# llama.cpp's MAX_REPETITION_THRESHOLD is 2000 rules times count; the fake refuses earlier,
# at the bound redraft keeps under, so a test fails when redraft sends more.
LLAMA_BOUND = 200
LLAMA_GRAMMAR_ERROR = ("failed to parse grammar: number of rules that are going to be repeated "
                       "multiplied by the new repetition exceeds sane defaults, please reduce "
                       "the number of repetitions or rule complexity")
PROMPT_MARKER = "matches this JSON Schema:\n"


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    message: str
    param: str | None = None


def owned_by(mode: str) -> str:
    """What GET /models names as the owner: llama-server says "llamacpp"."""
    return "llamacpp" if mode == "llama-server" else "fake"


def asked_form(req: dict[str, Any]) -> tuple[str | None, Any]:
    """(the form a request asks in, its schema); (None, None) for a plain request."""
    fmt = req.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return "json_schema", (fmt.get("json_schema") or {}).get("schema")
    if isinstance(fmt, dict) and fmt.get("type") == "json_object" and "schema" in fmt:
        return "json_object_schema", fmt.get("schema")
    if isinstance(req.get("structured_outputs"), dict):
        return "structured_outputs", req["structured_outputs"].get("json")
    if "guided_json" in req:
        return "guided_json", req["guided_json"]
    return None, None


def admit(req: dict[str, Any], mode: str) -> Refusal | None:
    """The refusal an upstream of `mode` gives `req`, or None after rewriting `req` in place
    to the standard form (or, for `ignore`, to what the prompt asks)."""
    form, schema = asked_form(req)
    if mode == "ignore":
        for key in ("response_format", "structured_outputs", "guided_json"):
            req.pop(key, None)
        schema = _schema_in_prompt(req)
        if schema is not None:
            _standard(req, schema)
        return None
    if form is None:
        return None
    accepted = ACCEPTS.get(mode)
    if accepted is not None and form != accepted:
        if mode == "json_object_schema" and form == "json_schema":
            return Refusal(500, "Internal Server Error")
        return Refusal(400, f"this server does not take structured output as {form}",
                       "response_format" if form.startswith("json") else form)
    if mode in LLAMA_MODES and _too_long(schema):
        return Refusal(500, LLAMA_GRAMMAR_ERROR)
    _standard(req, schema)
    return None


def _standard(req: dict[str, Any], schema: Any) -> None:
    req.pop("structured_outputs", None)
    req.pop("guided_json", None)
    req["response_format"] = {"type": "json_schema",
                              "json_schema": {"name": "answer", "schema": schema or {}}}


def _too_long(node: Any) -> bool:
    if isinstance(node, list):
        return any(_too_long(item) for item in node)
    if not isinstance(node, dict):
        return False
    for key in ("maxLength", "minLength", "maxItems", "minItems"):
        if isinstance(node.get(key), int) and node[key] > LLAMA_BOUND:
            return True
    return any(_too_long(value) for value in node.values() if isinstance(value, dict | list))


def _schema_in_prompt(req: dict[str, Any]) -> Any:
    """The schema the last user turn states after PROMPT_MARKER, taken out of the turn."""
    messages = req.get("messages") or []
    last = messages[-1] if messages else None
    if not isinstance(last, dict) or last.get("role") != "user":
        return None
    content = last.get("content")
    if not isinstance(content, str) or PROMPT_MARKER not in content:
        return None
    head, _, tail = content.rpartition(PROMPT_MARKER)
    try:
        schema = orjson.loads(tail)
    except orjson.JSONDecodeError:
        return None
    # The instruction line before the marker goes too: the responder sees the plain task.
    rest = head.rpartition("\n\n")[0] if "\n\n" in head else ""
    req["messages"] = [*messages[:-1], {**last, "content": rest}] if rest else messages[:-1]
    return schema

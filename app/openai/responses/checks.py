"""What pydantic cannot check on a Responses request, and its errors in OpenAI's terms.

`check_request` holds the cross-field rules and refuses the OpenAI features redraft cannot
honour (a 400 saying why, never silently ignored); `check_schema` checks the structure of a
JSON Schema a client sends (`text.format`, tool parameters); `request_error` turns pydantic's
errors into one OpenAI error whose `param` is the field as the client wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError

from app.http.errors import param_of, validation_message
from app.openai.responses.wire import (
    FormatJsonSchema,
    ResponseCreateRequest,
    ToolChoiceFunction,
)
from generation.errors import InvalidRequest

# Why each OpenAI feature above is refused when asked for; its "off" values pass.
_UNSUPPORTED: dict[str, tuple[tuple[Any, ...], str]] = {
    "background": ((None, False), "background mode is not supported: each response is "
                                  "generated while the request is open"),
    "include": ((None, []), "no extra output data can be included: redraft returns no "
                            "logprobs, reasoning or built-in tool results"),
    "truncation": ((None, "disabled"), "automatic truncation is not supported"),
    "service_tier": ((None, "auto", "default"), "service tiers are not supported"),
    "top_logprobs": ((None, 0), "logprobs are not returned by the Responses API here"),
    "conversation": ((None,), "the Conversations API is not served: chain responses with "
                              "previous_response_id"),
    "prompt": ((None,), "stored prompt templates are not supported"),
    "context_management": ((None,), "context management is not supported"),
    "moderation": ((None,), "moderation is not supported"),
    "prompt_cache_options": ((None,), "prompt cache options are not supported"),
}


def check_request(req: ResponseCreateRequest) -> None:
    """Cross-field rules, and the OpenAI features redraft refuses rather than ignores."""
    for name, (off, why) in _UNSUPPORTED.items():
        value = getattr(req, name)
        if value is None:
            continue
        if not any(value == o and type(value) is type(o) for o in off):
            raise InvalidRequest(f"'{name}' is not supported: {why}", param=name,
                                 code="unsupported_parameter")
    if req.reasoning is not None and any(v is not None for v in req.reasoning.values()):
        raise InvalidRequest("'reasoning' is not supported: the served model is not a "
                             "reasoning model", param="reasoning", code="unsupported_parameter")
    if req.text is not None and req.text.verbosity is not None:
        raise InvalidRequest("'text.verbosity' is not supported", param="text.verbosity",
                             code="unsupported_parameter")
    if req.stream_options is not None and not req.stream:
        raise InvalidRequest("stream_options is only allowed with stream: true",
                             param="stream_options")
    choice = req.tool_choice
    if choice not in (None, "none", "auto") and not req.tools:
        raise InvalidRequest("tool_choice needs tools", param="tool_choice")
    if isinstance(choice, ToolChoiceFunction) and choice.name not in {
            t.name for t in req.tools or ()}:
        raise InvalidRequest(f"tool_choice names {choice.name!r}, which is not among the tools",
                             param="tool_choice.name")
    names = [t.name for t in req.tools or ()]
    if len(names) != len(set(names)):
        raise InvalidRequest("tool names must be unique", param="tools")
    fmt = req.text.format if req.text is not None else None
    if isinstance(fmt, FormatJsonSchema):
        check_schema(fmt.schema_, "text.format.schema")
    if req.tools:
        for i, tool in enumerate(req.tools):
            if tool.parameters is not None:
                check_schema(tool.parameters, f"tools[{i}].parameters")


_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def check_schema(schema: Any, param: str) -> None:
    """A JSON Schema's structure: the keywords an engine compiles have the right shapes."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise InvalidRequest(f"{param} must be a JSON Schema object", param=param)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if not all(isinstance(k, str) and k in _TYPES for k in kinds) or (
            isinstance(kind, list) and not kind):
        raise InvalidRequest(f"{param}.type must be one of {sorted(_TYPES)} (or a list of them)",
                             param=f"{param}.type")
    required = schema.get("required")
    if required is not None and not (isinstance(required, list)
                                     and all(isinstance(r, str) for r in required)):
        raise InvalidRequest(f"{param}.required must be a list of property names",
                             param=f"{param}.required")
    for key in _SUBSCHEMA_MAPS:
        if key in schema:
            if not isinstance(schema[key], dict):
                raise InvalidRequest(f"{param}.{key} must be an object", param=f"{param}.{key}")
            for name, sub in schema[key].items():
                check_schema(sub, f"{param}.{key}.{name}")
    for key in _SUBSCHEMA_LISTS:
        if key in schema:
            if not isinstance(schema[key], list) or not schema[key]:
                raise InvalidRequest(f"{param}.{key} must be a non-empty list",
                                     param=f"{param}.{key}")
            for i, sub in enumerate(schema[key]):
                check_schema(sub, f"{param}.{key}[{i}]")
    for key in ("items", "additionalProperties", "not"):
        if key in schema:
            check_schema(schema[key], f"{param}.{key}")
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        raise InvalidRequest(f"{param}.enum must be a non-empty list", param=f"{param}.enum")


# Pydantic's locations name the union member that failed: a type ("str"), a model class, or a
# discriminator's tag (a content part's type after its index, a text format's after `format`).
_UNION_MEMBERS = {"str", "int", "float", "bool", "list", "dict"}
_PART_TAGS = {"input_text", "input_image", "output_text", "refusal"}
_FORMAT_TAGS = {"text", "json_object", "json_schema"}


def field_param(loc: Sequence[Any]) -> str | None:
    """A pydantic error location as the field the client wrote: `input[0].content[1].text`."""
    kept = []
    for i, part in enumerate(loc):
        before = loc[i - 1] if i else None
        if isinstance(part, str) and (
                part in _UNION_MEMBERS or part[:1].isupper()
                or (isinstance(before, int) and part in _PART_TAGS)
                or (before == "format" and part in _FORMAT_TAGS)):
            continue
        kept.append(part)
    return param_of(tuple(kept))


def most_specific(errors: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Of the errors of one value (a union's members each fail), the one that got furthest."""
    return max(errors, key=lambda e: len(e["loc"]))


def request_error(exc: RequestValidationError) -> Exception:
    """The body's validation failure as one OpenAI error (unknown fields in OpenAI's words);
    a body that is not JSON keeps the generic error."""
    errors = exc.errors()
    if not errors or errors[0].get("type") == "json_invalid":
        return exc
    first = errors[0]
    if first.get("type") == "extra_forbidden":
        param = field_param(first["loc"])
        return InvalidRequest(f"Unrecognized request argument supplied: {param}", param=param,
                              code="unknown_parameter")
    # the errors of the first field that failed; the deepest of them says the most
    field = first["loc"][:1]
    worst = most_specific([e for e in errors if tuple(e["loc"][:1]) == tuple(field)])
    param = field_param(worst["loc"])
    return InvalidRequest(validation_message(worst, param), param=param, code="invalid_value")

"""The body of a POST /chat/completions: the caller's sampling options, and a structured
call's schema in the upstream's dialect."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from generation.base import JsonSchema
from generation.openai.dialects import Dialect, dialect, loosen, shape, size_bound
from generation.types import ChatParams, Message

DEFAULT_DIALECT = dialect("json_schema")
"""What a structured call speaks while the upstream's dialect is undecided."""

_FIELDS = ("temperature", "top_p", "max_tokens", "seed", "presence_penalty",
           "frequency_penalty", "tools", "tool_choice", "logprobs", "top_logprobs", "user",
           "response_format")


def request_body(messages: Sequence[Message], params: ChatParams, schema: JsonSchema | None,
                 *, model: str, stream: bool,
                 dialect: Dialect | None = None) -> tuple[bytes, bool]:
    """The request body (for `model` unless `params` names one), and whether the upstream
    was left part of `schema` to enforce (a loosened schema, or `none`): then the answer is
    conformed to `schema` by the caller."""
    # Typed fields win over `extra`, which otherwise reaches the upstream verbatim.
    body: dict[str, Any] = dict(params.extra) if params.extra else {}
    body["model"] = params.model or model
    body["messages"] = messages if isinstance(messages, list | tuple) else list(messages)
    for key in _FIELDS:
        value = getattr(params, key)
        if value is not None:
            body[key] = value
    if params.stop is not None:
        body["stop"] = list(params.stop)
    if params.n != 1:
        body["n"] = params.n
    loosened = False
    if schema is not None:
        spoken = dialect or DEFAULT_DIALECT
        sent = loosen(schema, spoken.rules)
        loosened = sent != schema or not spoken.constrained
        shape(body, spoken.form, sent)
        if loosened and params.max_tokens is None:
            bound = size_bound(schema)  # what the dropped bounds no longer cap
            if bound is not None:
                body["max_tokens"] = bound
    if stream:
        body["stream"] = True
        body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
    elif params.extra:  # a stray `stream` in extra would turn the JSON answer into SSE
        body.pop("stream", None)
        body.pop("stream_options", None)
    return orjson.dumps(body), loosened

"""Reading what an OpenAI-compatible upstream sends: server-sent events, the completion and
chunk objects (into `generation.types`), answers cut to the full schema, and what a
structured-output probe's answer says about the form it tried."""

from __future__ import annotations

from typing import Any

import orjson

from generation.base import JsonSchema
from generation.errors import RedraftError, UpstreamError
from generation.openai.dialects import probe_verdict
from generation.retry import error_from_event
from generation.structured import AnswerInvalid, conform_text, parse_json
from generation.types import Choice, ChunkChoice, Completion, Usage


class SSEParser:
    """Incremental server-sent events: bytes in, complete `data` payloads out."""

    __slots__ = ("_buffer", "_data")

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[bytes] = []

    def feed(self, piece: bytes) -> list[bytes]:
        lines = (self._buffer + piece).split(b"\n") if self._buffer else piece.split(b"\n")
        self._buffer = lines.pop()
        events = []
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if self._data:
                    events.append(self._data[0] if len(self._data) == 1
                                  else b"\n".join(self._data))
                    self._data = []
            elif line.startswith(b"data:"):
                self._data.append(line[6:] if line[5:6] == b" " else line[5:])
        return events


def loads_event(event: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(event)
    except orjson.JSONDecodeError:
        raise UpstreamError("the upstream sent a malformed stream event") from None
    if not isinstance(obj, dict):
        raise UpstreamError("the upstream sent a malformed stream event")
    return obj


def usage_of(obj: Any) -> Usage:
    return Usage(int(obj.get("prompt_tokens") or 0), int(obj.get("completion_tokens") or 0))


def chunk_choice(c: dict[str, Any]) -> ChunkChoice:
    delta = c.get("delta") or {}
    return ChunkChoice(c.get("index", 0), delta.get("content"), delta.get("role"),
                       delta.get("tool_calls"), c.get("finish_reason"), c.get("logprobs"),
                       delta.get("refusal"))


def completion_of(obj: Any, model: str) -> Completion:
    if isinstance(obj, dict) and "error" in obj:
        raise error_from_event(obj)
    if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
        raise UpstreamError("the upstream answer has no choices")
    try:
        choices = tuple(
            Choice(c.get("index", i), (c.get("message") or {}).get("content"),
                   c.get("finish_reason"), (c.get("message") or {}).get("tool_calls"),
                   c.get("logprobs"), (c.get("message") or {}).get("refusal"))
            for i, c in enumerate(obj["choices"])
        )
        usage = usage_of(obj.get("usage") or {})
    except (AttributeError, TypeError, ValueError):
        raise UpstreamError("the upstream answer is malformed") from None
    return Completion(choices, usage, obj.get("model") or model, obj.get("id"),
                      obj.get("created"), obj.get("system_fingerprint"))


def conformed(completion: Completion, schema: JsonSchema) -> Completion:
    """The completion with each text cut to what the full schema allows (strings over their
    maxLength), for dialects whose engine was sent a looser schema."""
    choices = tuple(c if c.text is None else Choice(c.index, conform_text(c.text, schema),
                                                    c.finish_reason, c.tool_calls, c.logprobs,
                                                    c.refusal)
                    for c in completion.choices)
    return Completion(choices, completion.usage, completion.model, completion.id,
                      completion.created, completion.system_fingerprint)


# Answers to a probe that say nothing about the form: the upstream is down, unauthorised,
# busy or loading (llama-server answers 503 while it loads the model).
_NOT_A_REFUSAL = frozenset({401, 403, 404, 408, 429, 502, 503, 504})


def probe_outcome(status: int, raw: bytes, model: str) -> str:
    """What one probe answer says about a structured-output form: "ok", "refused (…)",
    "not supported (…)", "broke the schema (…)", or "no answer (…)" when it says nothing
    about the form."""
    if status in _NOT_A_REFUSAL:
        return f"no answer (HTTP {status})"
    if status != 200:
        return f"refused (HTTP {status})"
    try:
        value = parse_json(completion_of(orjson.loads(raw), model).text)
    except (orjson.JSONDecodeError, RedraftError, AnswerInvalid):
        return "not supported (the answer is not JSON: the server dropped the field or " \
               "ignored it)"
    return probe_verdict(value)

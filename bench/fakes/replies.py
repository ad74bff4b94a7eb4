"""What the fake upstream answers: one OpenAI completion (or its stream chunks) per request.

Replies are deterministic: by default they quote the last user message, and a structured-output
request gets a minimal instance of its JSON schema. A `Responder` (e.g. `bench.fakes.writer`)
may supply the content instead. It imports nothing of ours, so the fake runs from any working
directory.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

# The content of choice `index` for a request body, or None for the default reply.
Responder = Callable[[dict[str, Any], int], str | None]


class Reply:
    """The deterministic answer to one request: per choice a list of pieces (stream deltas)."""

    def __init__(self, req: dict[str, Any], seq: int, responder: Responder | None = None) -> None:
        self.req = req
        self.responder = responder
        self.id = f"chatcmpl-fake{seq}"
        self.created = int(time.time())
        self.model = req.get("model") or "fake-model"
        self.n = int(req.get("n") or 1)
        self.limit = req.get("max_tokens") or req.get("max_completion_tokens")
        self.prompt_tokens = sum(len(text_of(m.get("content")).split())
                                 for m in req["messages"]) or 1
        self.tool = forced_tool(req)
        self.args = orjson.dumps(instance((self.tool or {}).get("parameters") or {})).decode()
        self.pieces = [self._pieces(i) for i in range(self.n)]
        self.finish = "tool_calls" if self.tool else None

    def _pieces(self, index: int) -> list[str]:
        fmt = self.req.get("response_format") or {}
        if self.tool:
            return []
        content = self.responder(self.req, index) if self.responder is not None else None
        if content is not None and fmt.get("type") in ("json_schema", "json_object"):
            pieces = [content[i:i + 8] for i in range(0, len(content), 8)]
        elif content is not None:
            pieces = _words(content)
        elif fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {}
            text = orjson.dumps(instance(schema)).decode()
            pieces = [text[i:i + 8] for i in range(0, len(text), 8)]
        elif fmt.get("type") == "json_object":
            pieces = ["{}"]
        else:
            last = next((text_of(m.get("content")) for m in reversed(self.req["messages"])
                         if m.get("role") == "user"), "")
            topic = " ".join(last.split()[:12]) or "nothing"
            prefix = f"Variant {index}: " if index else ""
            pieces = _words(f"{prefix}This is a deterministic fake reply about: {topic}")
        return pieces[: self.limit] if self.limit else pieces

    def finish_reason(self, index: int) -> str:
        if self.finish:
            return self.finish
        full = self.limit is None or len(self.pieces[index]) < self.limit
        return "stop" if full else "length"

    def tokens(self) -> int:
        if self.tool:
            return self.n * (len(self.args) // 4 + 1)
        return sum(len(p) for p in self.pieces)

    def usage(self) -> dict[str, int]:
        done = self.tokens()
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": done,
                "total_tokens": self.prompt_tokens + done}

    def tool_call(self, index: int) -> dict[str, Any]:
        return {"id": f"call_{self.id}_{index}", "type": "function",
                "function": {"name": self.tool["name"], "arguments": self.args}}  # type: ignore[index]

    def logprobs(self, pieces: list[str]) -> dict[str, Any] | None:
        if not self.req.get("logprobs"):
            return None
        top = int(self.req.get("top_logprobs") or 0)
        return {"content": [token_logprob(p, top) for p in pieces]}

    def completion(self) -> dict[str, Any]:
        choices = []
        for i in range(self.n):
            if self.tool:
                msg = {"role": "assistant", "content": None, "tool_calls": [self.tool_call(i)]}
            else:
                msg = {"role": "assistant", "content": "".join(self.pieces[i])}
            choices.append({"index": i, "message": msg, "logprobs": self.logprobs(self.pieces[i]),
                            "finish_reason": self.finish_reason(i)})
        return {"id": self.id, "object": "chat.completion", "created": self.created,
                "model": self.model, "system_fingerprint": "fp_fake", "choices": choices,
                "usage": self.usage()}

    def chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        obj: dict[str, Any] = {"id": self.id, "object": "chat.completion.chunk",
                               "created": self.created, "model": self.model,
                               "system_fingerprint": "fp_fake", "choices": choices}
        if (self.req.get("stream_options") or {}).get("include_usage"):
            obj["usage"] = usage
        return b"data: " + orjson.dumps(obj) + b"\n\n"

    def chunks(self) -> Iterator[bytes]:
        def delta(i: int, d: dict, lp: dict | None = None, fin: str | None = None) -> dict:
            return {"index": i, "delta": d, "logprobs": lp, "finish_reason": fin}

        for i in range(self.n):
            first: dict[str, Any] = {"role": "assistant", "content": "" if not self.tool else None}
            if self.tool:
                first["tool_calls"] = [{"index": 0, **self.tool_call(i),
                                        "function": {"name": self.tool["name"], "arguments": ""}}]
            yield self.chunk([delta(i, first)])
        if self.tool:
            for i in range(self.n):
                args = {"tool_calls": [{"index": 0, "function": {"arguments": self.args}}]}
                yield self.chunk([delta(i, args)])
        for step in range(max((len(p) for p in self.pieces), default=0)):
            for i in range(self.n):
                if step < len(self.pieces[i]):
                    piece = self.pieces[i][step]
                    yield self.chunk([delta(i, {"content": piece}, self.logprobs([piece]))])
        for i in range(self.n):
            yield self.chunk([delta(i, {}, fin=self.finish_reason(i))])
        if (self.req.get("stream_options") or {}).get("include_usage"):
            yield self.chunk([], self.usage())
        yield b"data: [DONE]\n\n"



def forced_tool(req: dict[str, Any]) -> dict[str, Any] | None:
    """The tool this request calls: the one `tool_choice` names or requires, or under "auto"
    the first one the last message names, when the user wrote it (a tool result answers)."""
    tools = [t.get("function") or {} for t in req.get("tools") or []]
    choice = req.get("tool_choice")
    if not tools or choice == "none":
        return None
    if choice in (None, "auto"):
        last = (req.get("messages") or [{}])[-1]
        said = text_of(last.get("content")) if last.get("role") == "user" else ""
        return next((t for t in tools if t.get("name") and t["name"] in said), None)
    if choice == "required":
        return tools[0]
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    return next((t for t in tools if t.get("name") == name), None)


def token_logprob(token: str, top: int) -> dict[str, Any]:
    alts = [{"token": token if j == 0 else f"{token}~{j}", "logprob": -0.25 - j,
             "bytes": list((token if j == 0 else f"{token}~{j}").encode())} for j in range(top)]
    return {"token": token, "logprob": -0.25, "bytes": list(token.encode()), "top_logprobs": alts}


_STRING_FORMATS = {"date": "1970-01-01", "date-time": "1970-01-01T00:00:00Z", "time": "00:00:00Z",
                   "email": "a@example.com", "uri": "https://example.com", "uuid":
                   "00000000-0000-0000-0000-000000000000"}


def instance(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A small JSON value valid against `schema` (common keywords; patterns are not honoured)."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 32:
        return None
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if part and isinstance(target, dict) else target
        return instance(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance(schema[key][0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {"type": "object", "properties": {}}
        for part in schema["allOf"]:
            merged["properties"].update((part or {}).get("properties") or {})
        return instance(merged, root, depth + 1)
    kind = schema.get("type") or ("object" if "properties" in schema else
                                  "array" if "items" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {k: instance(v, root, depth + 1) for k, v in properties.items()}
    if kind == "array":
        return [instance(schema.get("items") or {}, root, depth + 1)
                for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return _STRING_FORMATS.get(schema.get("format", ""), "x" * schema.get("minLength", 0))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        value = min(max(0, low), schema.get("maximum", max(0, low)))
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    return None


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""



def _words(text: str) -> list[str]:
    """Stream deltas of one word each, the space going with the word after it."""
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]

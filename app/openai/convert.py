"""Conversion between OpenAI wire shapes and the domain's plain objects, one function a way."""

from __future__ import annotations

import time
import uuid
from typing import Any

from app.openai.wire import ChatCompletionRequest
from generation.errors import InvalidRequest
from generation.types import ChatParams, Chunk, Completion, Message, wire_finish_reason
from loops.record import usage_dict


def check_request(req: ChatCompletionRequest) -> None:
    """Cross-field rules pydantic cannot attach to one field."""
    if req.top_logprobs is not None and not req.logprobs:
        raise InvalidRequest("top_logprobs needs logprobs: true", param="top_logprobs")
    if req.stream_options is not None and not req.stream:
        raise InvalidRequest("stream_options is only allowed with stream: true",
                             param="stream_options")
    if req.tool_choice not in (None, "none") and not req.tools:
        raise InvalidRequest("tool_choice needs tools", param="tool_choice")


def to_messages(req: ChatCompletionRequest) -> list[Message]:
    return [m.model_dump(exclude_none=True, by_alias=True) for m in req.messages]


def to_params(req: ChatCompletionRequest, default_model: str) -> ChatParams:
    stop = req.stop
    extra = dict(req.model_extra) if req.model_extra else {}
    return ChatParams(
        model=req.model or default_model,
        temperature=req.temperature,
        top_p=req.top_p,
        max_tokens=req.max_completion_tokens or req.max_tokens,
        stop=(stop,) if isinstance(stop, str) else tuple(stop) if stop else None,
        n=req.n,
        seed=req.seed,
        presence_penalty=req.presence_penalty,
        frequency_penalty=req.frequency_penalty,
        response_format=_dump(req.response_format),
        tools=[t.model_dump(exclude_none=True) for t in req.tools] if req.tools else None,
        tool_choice=_dump(req.tool_choice),
        logprobs=req.logprobs,
        top_logprobs=req.top_logprobs,
        user=req.user,
        extra=extra,
    )


def _dump(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return value.model_dump(exclude_none=True, by_alias=True)


def completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex


def to_response(completion: Completion, *, response_id: str, model: str,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    choices = []
    for c in completion.choices:
        message: dict[str, Any] = {"role": "assistant", "content": c.text, "refusal": c.refusal}
        if c.tool_calls:
            message["tool_calls"] = c.tool_calls
        choices.append({"index": c.index, "message": message, "logprobs": wire_logprobs(c.logprobs),
                        "finish_reason": wire_finish_reason(c.finish_reason)})
    body: dict[str, Any] = {
        "id": response_id,
        "object": "chat.completion",
        "created": completion.created or int(time.time()),
        "model": completion.model or model,
        "choices": choices,
        "usage": usage_dict(completion.usage),
    }
    if isinstance(completion.system_fingerprint, str):  # OpenAI types it string: omit, never null
        body["system_fingerprint"] = completion.system_fingerprint
    if extra:
        body.update(extra)
    return body


def wire_logprobs(logprobs: Any) -> Any:
    """A choice's `logprobs` in OpenAI's shape: `content` and `refusal` are both required
    (null allowed); upstreams such as vLLM send only `content`."""
    if not isinstance(logprobs, dict):
        return logprobs
    return {"content": None, "refusal": None, **logprobs}


def to_chunk(chunk: Chunk, *, response_id: str, created: int, model: str,
             include_usage: bool) -> dict[str, Any]:
    choices = []
    for c in chunk.choices:
        delta: dict[str, Any] = {}
        if c.role is not None:
            delta["role"] = c.role
        if c.content is not None:
            delta["content"] = c.content
        if c.tool_calls is not None:
            delta["tool_calls"] = c.tool_calls
        if c.refusal is not None:
            delta["refusal"] = c.refusal
        choices.append({"index": c.index, "delta": delta, "logprobs": wire_logprobs(c.logprobs),
                        "finish_reason": wire_finish_reason(c.finish_reason)})
    body: dict[str, Any] = {  # no system_fingerprint: chunks do not carry one, and null is off-spec
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": chunk.model or model,
        "choices": choices,
    }
    if include_usage:
        body["usage"] = usage_dict(chunk.usage) if chunk.usage is not None else None
    return body

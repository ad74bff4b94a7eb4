"""Conversion between the Responses API and the chat completions the upstream speaks.

One named function per direction: `to_chat` turns a request and its conversation items into
chat messages and `ChatParams`; `to_response` turns an answer (from the backend or the loop)
into OpenAI's Response object. The rest are the small pieces they share with streaming.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.openai.responses.items import Item, item_id
from app.openai.responses.wire import (
    FormatJsonObject,
    FormatJsonSchema,
    ResponseCreateRequest,
    ToolChoiceFunction,
)
from generation.types import ChatParams, Completion, Message, Usage
from loops.trace import LoopTrace


@dataclass(frozen=True, slots=True)
class Answer:
    """What the model answered, in the terms both directions share."""

    text: str | None
    tool_calls: tuple[dict[str, Any], ...] = ()
    refusal: str | None = None
    finish_reason: str | None = "stop"
    usage: Usage = Usage()
    model: str = ""


def answer_of_completion(completion: Completion) -> Answer:
    choice = completion.choices[0] if completion.choices else None
    if choice is None:
        return Answer("", usage=completion.usage, model=completion.model)
    return Answer(choice.text, tuple(choice.tool_calls or ()), choice.refusal,
                  choice.finish_reason, completion.usage, completion.model)


def answer_of_trace(trace: LoopTrace, model: str) -> Answer:
    """The loop's best text; its usage counts every hidden call, as on chat completions."""
    return Answer(trace.answer.text, finish_reason=trace.answer.finish_reason or "stop",
                  usage=trace.ledger.total, model=model)


# -- request direction --------------------------------------------------------------------------

def json_output(req: ResponseCreateRequest) -> bool:
    fmt = req.text.format if req.text is not None else None
    return isinstance(fmt, FormatJsonObject | FormatJsonSchema)


def to_chat(req: ResponseCreateRequest, items: Sequence[Item],
            default_model: str) -> tuple[list[Message], ChatParams]:
    """The conversation as chat messages (instructions first) and the sampling options."""
    messages: list[Message] = []
    if req.instructions:
        messages.append({"role": "system", "content": req.instructions})
    for item in items:
        kind = item["type"]
        if kind == "message":
            messages.append(_chat_message(item))
        elif kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":  # one turn: text, then calls
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"],
                             "content": item["output"]})
    return messages, _params(req, default_model)


def _chat_message(item: Item) -> Message:
    # Upstreams without a `developer` role are common; it means what `system` means there.
    role = "system" if item["role"] == "developer" else item["role"]
    parts = item["content"]
    if all(p["type"] in ("input_text", "output_text", "refusal") for p in parts):
        text = "\n".join(p.get("text", p.get("refusal", "")) for p in parts)
        return {"role": role, "content": text}
    content = [{"type": "image_url", "image_url": {"url": p["image_url"], "detail": p["detail"]}}
               if p["type"] == "input_image" else {"type": "text", "text": p["text"]}
               for p in parts]
    return {"role": role, "content": content}


def _params(req: ResponseCreateRequest, default_model: str) -> ChatParams:
    extra: dict[str, Any] = {}
    if req.tools and req.parallel_tool_calls is not None:
        extra["parallel_tool_calls"] = req.parallel_tool_calls
    fmt = req.text.format if req.text is not None else None
    response_format: dict[str, Any] | None = None
    if isinstance(fmt, FormatJsonObject):
        response_format = {"type": "json_object"}
    elif isinstance(fmt, FormatJsonSchema):
        spec = {"name": fmt.name, "schema": fmt.schema_, "description": fmt.description,
                "strict": fmt.strict}
        response_format = {"type": "json_schema",
                           "json_schema": {k: v for k, v in spec.items() if v is not None}}
    tools = None
    if req.tools:
        tools = [{"type": "function", "function": t.model_dump(exclude={"type"},
                                                                  exclude_none=True)}
                 for t in req.tools]
    choice: Any = req.tool_choice
    if isinstance(choice, ToolChoiceFunction):
        choice = {"type": "function", "function": {"name": choice.name}}
    return ChatParams(model=req.model or default_model, temperature=req.temperature,
                      top_p=req.top_p, max_tokens=req.max_output_tokens,
                      response_format=response_format, tools=tools,
                      tool_choice=choice if tools else None, user=req.user, extra=extra)


def loop_request(req: ResponseCreateRequest, messages: list[Message], params: ChatParams,
                 response_id: str) -> dict[str, Any]:
    """The request as a loop record keeps it: the chat shape the trainer and admin read."""
    record: dict[str, Any] = {"model": params.model, "messages": messages,
                              "response_id": response_id}
    for key, value in (("temperature", params.temperature), ("top_p", params.top_p),
                       ("max_tokens", params.max_tokens), ("user", params.user)):
        if value is not None:
            record[key] = value
    if req.reflection is not None:
        record["reflection"] = req.reflection.model_dump(mode="json", exclude_none=True)
    return record


# -- response direction -------------------------------------------------------------------------

# A text cut where it began repeating itself (REPETITION) is complete as kept.
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def output_items(answer: Answer) -> list[Item]:
    """The answer as output items: a message (unless it is only tool calls), then the calls."""
    status = "incomplete" if answer.finish_reason in _INCOMPLETE else "completed"
    items: list[Item] = []
    if answer.text or answer.refusal or not answer.tool_calls:
        content: list[dict[str, Any]] = []
        if answer.text or not answer.refusal:
            content.append(text_part(answer.text or ""))
        if answer.refusal:
            content.append({"type": "refusal", "refusal": answer.refusal})
        items.append(message_item(content, status))
    for call in answer.tool_calls:
        function = call.get("function") or {}
        items.append(call_item(call.get("id") or item_id("call"), function.get("name", ""),
                               function.get("arguments", ""), status))
    return items


def text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(content: list[dict[str, Any]], status: str, mid: str | None = None) -> Item:
    return {"id": mid or item_id("msg"), "type": "message", "role": "assistant",
            "status": status, "content": content}


def call_item(call_id: str, name: str, arguments: str, status: str,
              fid: str | None = None) -> Item:
    return {"id": fid or item_id("fc"), "type": "function_call", "call_id": call_id,
            "name": name, "arguments": arguments, "status": status}


def usage_of(usage: Usage) -> dict[str, Any]:
    return {"input_tokens": usage.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.total_tokens}


def to_response(req: ResponseCreateRequest, answer: Answer | None, *, response_id: str,
                created_at: int, model: str, output: list[Item] | None = None,
                reflection: dict[str, Any] | None = None,
                error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Response object: in progress (no answer yet), failed (`error`), incomplete (cut at
    the token limit or filtered) or completed. `output` defaults to the answer's items."""
    status, incomplete = "in_progress", None
    if error is not None:
        status = "failed"
    elif answer is not None:
        reason = _INCOMPLETE.get(answer.finish_reason or "")
        status = "incomplete" if reason else "completed"
        incomplete = {"reason": reason} if reason else None
    if output is None:
        output = output_items(answer) if answer is not None and error is None else []
    choice: Any = req.tool_choice
    if isinstance(choice, ToolChoiceFunction):
        choice = choice.model_dump()
    body: dict[str, Any] = {
        "id": response_id, "object": "response", "created_at": created_at,
        "status": status, "completed_at": int(time.time()) if status == "completed" else None,
        "error": error, "incomplete_details": incomplete,
        "instructions": req.instructions, "max_output_tokens": req.max_output_tokens,
        "model": (answer.model if answer is not None and answer.model else model),
        "output": output, "parallel_tool_calls": req.parallel_tool_calls is not False,
        "previous_response_id": req.previous_response_id,
        "store": req.store is not False, "background": False,
        "temperature": req.temperature, "top_p": req.top_p,
        "text": {"format": req.text.format.model_dump(by_alias=True, exclude_none=True)
                 if req.text is not None and req.text.format is not None
                 else {"type": "text"}},
        "tool_choice": choice or "auto",
        "tools": [{"type": "function", "name": t.name, "description": t.description,
                   "parameters": t.parameters, "strict": t.strict} for t in req.tools or ()],
        "truncation": "disabled", "metadata": req.metadata or {},
    }
    if req.user is not None:
        body["user"] = req.user
    if answer is not None:
        body["usage"] = usage_of(answer.usage)
    if reflection is not None:
        body["reflection"] = reflection
    return body

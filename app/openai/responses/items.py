"""Input items: validated one by one, then normalised to the shape they are stored and listed in.

Each item is checked against the model of its `type`, so an error names the item and the field
(`input[2].call_id`). Normalised items are OpenAI's item resources: every item has an `id`,
messages hold content parts, a user message's string content becomes one `input_text` part and
an assistant's becomes `output_text`. Item references are resolved here, against the caller's
own stored responses. The whole conversation (earlier turns and the new input) is then checked:
every function call output answers a call made before it, and every call is answered.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from app.http.errors import validation_message
from app.openai.responses.checks import field_param, most_specific
from app.openai.responses.wire import (
    FunctionCallItem,
    FunctionCallOutputItem,
    ItemReference,
    MessageItem,
)
from generation.errors import InvalidRequest

Item = dict[str, Any]
FindItem = Callable[[str], Awaitable[Item | None]]

_MODELS: dict[str, type[BaseModel]] = {
    "message": MessageItem,
    "function_call": FunctionCallItem,
    "function_call_output": FunctionCallOutputItem,
    "item_reference": ItemReference,
}


def item_id(prefix: str) -> str:
    return f"{prefix}_{os.urandom(16).hex()}"


async def parse_input(value: str | list[Any], find: FindItem) -> list[Item]:
    """The request's `input` as normalised items; a 400 naming the field for a bad one."""
    if isinstance(value, str):
        return [_message("user", [{"type": "input_text", "text": value}])]
    items = []
    for index, raw in enumerate(value):
        param = f"input[{index}]"
        model = _validate(raw, param)
        if isinstance(model, ItemReference):
            found = await find(model.id)
            if found is None:
                raise InvalidRequest(f"no stored item with id {model.id!r}", param=f"{param}.id",
                                     code="not_found")
            items.append(found)
        else:
            items.append(normalise(model))
    return items


def _validate(raw: Any, param: str) -> BaseModel:
    if not isinstance(raw, dict):
        raise InvalidRequest(f"{param} must be an item object", param=param)
    kind = raw.get("type")
    if kind is None:
        kind = "message" if "role" in raw else "item_reference" if "id" in raw else None
    if kind is None:
        raise InvalidRequest(f"{param} needs a type (or a role, for a message)",
                             param=f"{param}.type")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise InvalidRequest(f"{param}: item type {kind!r} is not supported (messages, "
                             "function_call, function_call_output and item_reference are)",
                             param=f"{param}.type")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        worst = most_specific(exc.errors())
        field = field_param(worst["loc"])
        where = f"{param}.{field}" if field and not field.startswith("[") else \
            f"{param}{field or ''}"
        raise InvalidRequest(validation_message(worst, where), param=where,
                             code="invalid_value") from None


def normalise(model: BaseModel) -> Item:
    if isinstance(model, MessageItem):
        parts = ([{"type": "text", "text": model.content}] if isinstance(model.content, str)
                 else [p.model_dump(exclude_none=True) for p in model.content])
        if model.role == "assistant":
            return _message("assistant", [_output_part(p) for p in parts], model.id)
        return _message(model.role, [_input_part(p) for p in parts], model.id)
    if isinstance(model, FunctionCallItem):
        return {"id": model.id or item_id("fc"), "type": "function_call",
                "call_id": model.call_id, "name": model.name, "arguments": model.arguments,
                "status": "completed"}
    assert isinstance(model, FunctionCallOutputItem)
    output = model.output if isinstance(model.output, str) else \
        "".join(p.text for p in model.output)
    return {"id": model.id or item_id("fco"), "type": "function_call_output",
            "call_id": model.call_id, "output": output, "status": "completed"}


def _message(role: str, content: list[dict[str, Any]], given_id: str | None = None) -> Item:
    return {"id": given_id or item_id("msg"), "type": "message", "role": role,
            "status": "completed", "content": content}


def _input_part(part: dict[str, Any]) -> dict[str, Any]:
    if part["type"] == "input_image":
        return {"type": "input_image", "image_url": part["image_url"], "detail": part["detail"]}
    return {"type": "input_text", "text": part["text"]}


def _output_part(part: dict[str, Any]) -> dict[str, Any]:
    if part["type"] == "refusal":
        return {"type": "refusal", "refusal": part["refusal"]}
    return {"type": "output_text", "text": part["text"], "annotations": [], "logprobs": []}


def check_conversation(history: Sequence[Item], new: Sequence[Item]) -> None:
    """Every function call output answers an earlier call; every call gets its output."""
    calls = {i["call_id"] for i in history if i["type"] == "function_call"}
    answered = {i["call_id"] for i in history if i["type"] == "function_call_output"}
    for index, item in enumerate(new):
        if item["type"] == "function_call":
            calls.add(item["call_id"])
        elif item["type"] == "function_call_output":
            if item["call_id"] not in calls:
                raise InvalidRequest(f"no function call found with call_id {item['call_id']!r} "
                                     "for this function_call_output",
                                     param=f"input[{index}].call_id")
            answered.add(item["call_id"])
    unanswered = sorted(calls - answered)
    if unanswered:
        raise InvalidRequest(f"no function_call_output found for the function call with "
                             f"call_id {unanswered[0]!r}: answer every call before going on",
                             param="input")

"""One schema-constrained question to a backend, validated, with bounded retries.

No backend promises that its JSON matches the schema, so every answer is parsed and
validated here; a bad one is retried with the error in the follow-up message, and after the
last attempt the caller gets `value=None` and decides how to degrade. Bad model output never
raises; upstream failures other than a garbled answer do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from generation.base import Backend, JsonSchema
from generation.errors import InvalidRequest, UpstreamError
from generation.truncated import closed_prefixes
from generation.types import ChatParams, Message, Usage

RETRY = ("Your previous answer could not be used: {error}\n"
         "Answer again with only the JSON object asked for, fixing that problem.")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class AnswerModel(BaseModel):
    """Base of the shapes asked for: extra keys are ignored when reading, but the schema
    sent still forbids them (strict structured-output modes require that)."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": False})


class AnswerInvalid(ValueError):
    """The answer parsed but cannot be used; the message goes into the retry prompt."""


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    value: T | None
    usage: Usage
    calls: int
    error: str | None = None


def for_schema(params: ChatParams) -> ChatParams:
    """The caller's sampling options minus what would break a single JSON answer."""
    return params.with_(n=1, tools=None, tool_choice=None, response_format=None, stop=None,
                        logprobs=None, top_logprobs=None)


def parse_json(text: str) -> Any:
    """JSON from a model's answer, tolerating a code fence or prose around one object, and
    raw line breaks and tabs inside its strings (llama-cpp-python's grammar lets SmolLM2
    write them)."""
    match = _FENCE.match(text)
    body = match[1] if match else text.strip()
    start, end = body.find("{"), body.rfind("}")
    for candidate in (body, body[start:end + 1] if 0 <= start < end else None):
        if candidate is None:
            continue
        try:
            return orjson.loads(candidate)
        except ValueError:
            pass
        try:
            return json.loads(candidate, strict=False)
        except ValueError:
            pass
    raise AnswerInvalid("the answer is not a JSON object")


def conform(value: Any, schema: Any, root: Any = None, depth: int = 0) -> Any:
    """`value` with every string longer than its schema's `maxLength` cut to it: what an
    engine that compiled the bound would have produced, for one that was not sent it."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 32:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target: Any = root
        for part in ref.lstrip("#/").split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return conform(value, target, root, depth + 1)
    if isinstance(value, str):
        limit = schema.get("maxLength")
        return value[:limit] if isinstance(limit, int) and len(value) > limit else value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {k: conform(v, props[k] if k in props else extra, root, depth + 1)
                for k, v in value.items()}
    if isinstance(value, list):
        return [conform(v, schema.get("items"), root, depth + 1) for v in value]
    return value


def conform_text(text: str, schema: JsonSchema) -> str:
    """A JSON answer conformed to `schema` (`conform`); the text as it came when it does not
    parse (the caller's validation says so) or needs no change."""
    try:
        value = parse_json(text)
    except AnswerInvalid:
        return text
    conformed = conform(value, schema)
    return text if conformed == value else orjson.dumps(conformed).decode()


@cache
def _schema_json(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema())


def schema_of(model: type[BaseModel]) -> JsonSchema:
    """`model`'s JSON Schema: built once per class (pydantic takes milliseconds to build one),
    handed out as a fresh copy so a caller may edit it."""
    return json.loads(_schema_json(model))


def describe_error(exc: ValidationError, limit: int = 5) -> str:
    """pydantic's errors in one line, short enough for a retry prompt or an error message."""
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
             for e in exc.errors()[:limit]]
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def system_user(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def ask(backend: Backend, messages: Sequence[Message], params: ChatParams,
              model: type[M], accept: Callable[[M], T], *, retries: int,
              schema: JsonSchema | None = None) -> Answer[T]:
    """Ask until `accept(answer)` returns a value, at most `retries + 1` times.

    `accept` repairs what is obviously fixable and raises AnswerInvalid (or an InvalidRequest
    such as ChecklistInvalid) for the rest.
    """
    schema = schema if schema is not None else schema_of(model)
    conversation = list(messages)
    usage, calls, error = Usage(), 0, None
    for _ in range(retries + 1):
        calls, error = calls + 1, None
        try:
            completion = await backend.chat(conversation, params, schema=schema)
        except UpstreamError as exc:
            # A garbled upstream answer is bad output like any other: worth another try.
            error = exc.message
            continue
        usage += completion.usage
        try:
            documents: Iterable[Any] = (parse_json(completion.text),)
        except AnswerInvalid as exc:
            # cut short (the token budget ran out inside an element): its complete elements
            error, documents = str(exc), closed_prefixes(completion.text)
        for document in documents:
            try:
                return Answer(accept(model.model_validate(document)), usage, calls)
            except ValidationError as exc:
                error = error or describe_error(exc)
            except AnswerInvalid as exc:
                error = error or str(exc)
            except InvalidRequest as exc:
                error = error or exc.message
        conversation = [*conversation, {"role": "assistant", "content": completion.text},
                        {"role": "user", "content": RETRY.format(error=error)}]
    return Answer(None, usage, calls, error)

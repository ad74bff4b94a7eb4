"""Deterministic backend for tests and demos: replays queued replies and records every call.

Not registered in the settings' backend choices: it is a test double, never a product path.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from generation.base import JsonSchema
from generation.errors import InvalidRequest
from generation.types import ChatParams, Choice, Chunk, ChunkChoice, Completion, Message, Usage

Reply = str | BaseException | Callable[[Sequence[Message], ChatParams, JsonSchema | None], str]


@dataclass(frozen=True, slots=True)
class Call:
    messages: tuple[Message, ...]
    params: ChatParams
    schema: JsonSchema | None


def count_tokens(text: str) -> int:
    """Whitespace word count: deterministic and good enough for usage arithmetic in tests."""
    return len(text.split())


class ScriptedBackend:
    name = "scripted"

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        default: Reply | None = None,
        model: str = "scripted",
        latency: float = 0.0,
    ) -> None:
        self._queue: deque[Reply] = deque(replies)
        self._default = default
        self.model = model
        self.latency = latency
        self.calls: list[Call] = []

    def enqueue(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def models(self) -> list[str]:
        return [self.model]

    async def ready(self) -> bool:
        return True

    def _next_text(self, messages: Sequence[Message], params: ChatParams,
                   schema: JsonSchema | None) -> str:
        self.calls.append(Call(tuple(messages), params, schema))
        if self._queue:
            reply = self._queue.popleft()
        elif self._default is not None:
            reply = self._default
        else:
            raise InvalidRequest("scripted backend has no reply queued")
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(messages, params, schema)
        return reply

    def _usage(self, messages: Sequence[Message], texts: Sequence[str]) -> Usage:
        prompt = sum(count_tokens(_content_text(m.get("content"))) for m in messages)
        return Usage(prompt, sum(count_tokens(t) for t in texts))

    async def chat(self, messages: Sequence[Message], params: ChatParams,
                   schema: JsonSchema | None = None) -> Completion:
        if self.latency:
            await asyncio.sleep(self.latency)
        texts = [self._next_text(messages, params, schema) for _ in range(params.n)]
        choices = tuple(Choice(i, t, "stop") for i, t in enumerate(texts))
        return Completion(choices, self._usage(messages, texts), params.model or self.model)

    async def stream(self, messages: Sequence[Message], params: ChatParams,
                     schema: JsonSchema | None = None) -> AsyncIterator[Chunk]:
        if self.latency:
            await asyncio.sleep(self.latency)
        texts = [self._next_text(messages, params, schema) for _ in range(params.n)]
        model = params.model or self.model
        for i, text in enumerate(texts):
            yield Chunk((ChunkChoice(i, content="", role="assistant"),), model=model)
            for word in _pieces(text):
                yield Chunk((ChunkChoice(i, content=word),), model=model)
            yield Chunk((ChunkChoice(i, finish_reason="stop"),), model=model)
        yield Chunk((), usage=self._usage(messages, texts), model=model)


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""

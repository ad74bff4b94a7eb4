"""Plain data passed to and returned by every backend.

Messages stay in OpenAI's dict shape (role, content as a string or content parts, tool_calls,
tool_call_id, name): every backend either forwards them untouched or renders them with a chat
template, so a richer type would only be converted back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True, slots=True)
class ChatParams:
    """Sampling and request options. `extra` is forwarded verbatim as extra body fields."""

    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    n: int = 1
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_format: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    user: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def with_(self, **changes: Any) -> ChatParams:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Choice:
    index: int
    text: str | None
    # OpenAI's reasons, plus REPETITION: the text was cut where it began repeating itself
    # (`generation.local.repeats`); `wire_finish_reason` says it in OpenAI's words
    finish_reason: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    logprobs: dict[str, Any] | None = None
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class Completion:
    choices: tuple[Choice, ...]
    usage: Usage
    model: str
    id: str | None = None
    created: int | None = None
    system_fingerprint: str | None = None

    @property
    def text(self) -> str:
        return self.choices[0].text or "" if self.choices else ""

    @property
    def finish_reason(self) -> str | None:
        return self.choices[0].finish_reason if self.choices else None

    @property
    def logprobs(self) -> dict[str, Any] | None:
        return self.choices[0].logprobs if self.choices else None


@dataclass(frozen=True, slots=True)
class ChunkChoice:
    """One choice's delta in a streamed chunk."""

    index: int
    content: str | None = None
    role: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str | None = None
    logprobs: dict[str, Any] | None = None
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """A streamed piece: deltas for some choices, or (last) only the usage."""

    choices: tuple[ChunkChoice, ...] = ()
    usage: Usage | None = None
    model: str | None = None
    id: str | None = None


REPETITION = "repetition"


def wire_finish_reason(reason: str | None) -> str | None:
    """A finish reason as OpenAI's clients know them: a text cut where it began repeating
    itself is "length" (the server ended it, not the model; what is kept ends before the
    repeats)."""
    return "length" if reason == REPETITION else reason

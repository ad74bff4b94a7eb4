"""The one interface every generation backend implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from generation.types import ChatParams, Chunk, Completion, Message

JsonSchema = dict[str, Any]


@runtime_checkable
class Backend(Protocol):
    """A source of chat completions.

    `schema`, when given, asks for a JSON answer matching that JSON Schema. Upstreams receive
    it as OpenAI's `response_format={"type": "json_schema", ...}`; the local backend decodes
    under constraint when it can. Callers still validate the text: no backend promises it.

    Errors are raised as `generation.errors.RedraftError` subclasses (invalid request, upstream
    unavailable / timeout / bad gateway); a backend never returns an error object.
    """

    name: str

    async def start(self) -> None:
        """Acquire pools, processes or weights. Called once in the app's lifespan."""

    async def aclose(self) -> None:
        """Release everything `start` acquired."""

    async def chat(
        self,
        messages: Sequence[Message],
        params: ChatParams,
        schema: JsonSchema | None = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[Message],
        params: ChatParams,
        schema: JsonSchema | None = None,
    ) -> AsyncIterator[Chunk]:
        """Yield chunks as they are produced; the last one carries the usage."""
        ...

    async def models(self) -> list[str]:
        """Model ids this backend serves."""
        ...

    async def ready(self) -> bool:
        """True when a request would be served now (used by /ready)."""
        ...


def schema_response_format(schema: JsonSchema, name: str = "answer") -> dict[str, Any]:
    """OpenAI's structured-output request for `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}

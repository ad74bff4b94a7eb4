"""OpenAI wire models for chat completions, with OpenAI's field names exactly.

Only the request is a pydantic model (it must be validated, with the offending field named);
responses and chunks are built as plain dicts by `app.openai.convert`, which is both faster and
keeps the exact OpenAI shape (nulls included) under our control.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TextPart(_Open):
    type: Literal["text"]
    text: str


class ImagePart(_Open):
    type: Literal["image_url"]
    image_url: dict[str, Any]


class AudioPart(_Open):
    type: Literal["input_audio"]
    input_audio: dict[str, Any]


class FilePart(_Open):
    type: Literal["file"]
    file: dict[str, Any]


class RefusalPart(_Open):
    type: Literal["refusal"]
    refusal: str


ContentPart = Annotated[
    TextPart | ImagePart | AudioPart | FilePart | RefusalPart, Field(discriminator="type")
]


class ChatMessage(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None

    @model_validator(mode="after")
    def _content_present(self) -> ChatMessage:
        if self.role in ("system", "developer", "user") and self.content is None:
            raise ValueError(f"a {self.role} message needs content")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs tool_call_id")
        if self.role == "assistant" and self.content is None and not self.tool_calls:
            raise ValueError("an assistant message needs content or tool_calls")
        return self


class StreamOptions(_Open):
    include_usage: bool = False


class JsonSchemaSpec(_Open):
    name: str = Field(min_length=1, max_length=64)
    schema_: dict[str, Any] | None = Field(None, alias="schema")
    strict: bool | None = None
    description: str | None = None


class ResponseFormat(_Open):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaSpec | None = None

    @model_validator(mode="after")
    def _schema_given(self) -> ResponseFormat:
        if self.type == "json_schema" and self.json_schema is None:
            raise ValueError("response_format type json_schema needs a json_schema object")
        return self


class FunctionSpec(_Open):
    name: str = Field(min_length=1, max_length=64)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class Tool(_Open):
    type: Literal["function"]
    function: FunctionSpec


class NamedToolChoice(_Open):
    type: Literal["function"]
    function: dict[str, Any]


class ReflectionOptions(BaseModel):
    """The `reflection` object (the SDK's extra_body); unset fields take the server defaults."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = None
    max_rounds: int | None = Field(None, ge=0, le=10)
    threshold: float | None = Field(None, ge=0, le=1)
    candidates: int | None = Field(None, ge=1, le=8)
    checklist: dict[str, Any] | list[dict[str, Any]] | str | None = None
    evaluation: Literal["auto", "joint", "per_dimension", "holistic", "checks"] | None = None
    memory: bool | None = None
    conform: bool | None = None
    return_trace: bool | None = None


class ChatCompletionRequest(_Open):
    """POST /v1/chat/completions. Unknown fields are kept and forwarded as extra body."""

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stop: str | list[str] | None = None
    n: int = Field(1, ge=1, le=128)
    seed: int | None = None
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    stream: bool = False
    stream_options: StreamOptions | None = None
    response_format: ResponseFormat | None = None
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    user: str | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    reflection: ReflectionOptions | None = None

    @field_validator("stop")
    @classmethod
    def _stop_count(cls, v: str | list[str] | None) -> str | list[str] | None:
        if isinstance(v, list) and len(v) > 4:
            raise ValueError("at most 4 stop sequences")
        return v

"""Responses API wire models, with OpenAI's field names exactly.

The request refuses fields it does not know (400 naming the field) and, as OpenAI does, values
of the wrong JSON type (strict mode: "yes" is not a boolean). OpenAI fields that redraft cannot
honour are declared so that their "off" value (null, [], false, "disabled") passes and anything
else gets a 400 that says why (`app.openai.responses.checks`). Input items are kept as plain
dicts here and validated one by one in `app.openai.responses.items`, so that an error names
the exact item and field (`input[2].call_id`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.openai.wire import ReflectionOptions

NAME_PATTERN = r"^[a-zA-Z0-9_-]+$"
ItemId = Annotated[str, Field(min_length=1, max_length=64)]
ItemStatus = Literal["in_progress", "completed", "incomplete"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# -- input items (validated per item by app.openai.responses.items) ----------------------------

class InputText(_Strict):
    type: Literal["input_text"]
    text: str


class InputImage(_Strict):
    type: Literal["input_image"]
    image_url: str | None = None
    file_id: str | None = None
    detail: Literal["low", "high", "auto", "original"] = "auto"

    @model_validator(mode="after")
    def _url_given(self) -> InputImage:
        if self.file_id is not None:
            raise ValueError("file_id needs OpenAI's Files API, which redraft does not serve: "
                             "send the image as image_url (an https or data: URL)")
        if not self.image_url:
            raise ValueError("an input_image needs image_url")
        return self


class OutputText(_Strict):
    type: Literal["output_text"]
    text: str
    annotations: list[Any] = Field(default_factory=list)
    logprobs: list[Any] | None = None


class Refusal(_Strict):
    type: Literal["refusal"]
    refusal: str


ContentPart = Annotated[InputText | InputImage | OutputText | Refusal,
                        Field(discriminator="type")]


class MessageItem(_Strict):
    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "developer"]
    content: str | list[ContentPart]
    id: ItemId | None = None
    status: ItemStatus | None = None
    phase: Literal["commentary", "final_answer"] | None = None

    @model_validator(mode="after")
    def _parts_fit_the_role(self) -> MessageItem:
        if isinstance(self.content, str):
            return self
        allowed = ({"output_text", "refusal", "input_text"} if self.role == "assistant"
                   else {"input_text", "input_image"})
        for part in self.content:
            if part.type not in allowed:
                raise ValueError(f"{self.role} messages cannot hold {part.type} parts")
        return self


class FunctionCallItem(_Strict):
    type: Literal["function_call"]
    call_id: ItemId
    name: str = Field(min_length=1, max_length=128)
    arguments: str
    id: ItemId | None = None
    status: ItemStatus | None = None


class FunctionCallOutputItem(_Strict):
    type: Literal["function_call_output"]
    call_id: ItemId
    output: str | list[InputText]
    id: ItemId | None = None
    status: ItemStatus | None = None


class ItemReference(_Strict):
    type: Literal["item_reference"] | None = "item_reference"
    id: ItemId


# -- tools, tool choice, text format ------------------------------------------------------------

class FunctionTool(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: str
    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _function_only(cls, value: Any) -> Any:
        kind = value.get("type") if isinstance(value, dict) else None
        if kind is not None and kind != "function":
            raise ValueError(f"tool type {kind!r} is not supported: redraft's upstream is a chat "
                             "completions server, which runs function tools only")
        return value


class ToolChoiceFunction(_Strict):
    type: Literal["function"]
    name: str = Field(min_length=1)


class FormatText(_Strict):
    type: Literal["text"]


class FormatJsonObject(_Strict):
    type: Literal["json_object"]


class FormatJsonSchema(_Strict):
    type: Literal["json_schema"]
    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN)
    schema_: dict[str, Any] = Field(alias="schema")
    description: str | None = None
    strict: bool | None = None


class TextConfig(_Strict):
    format: Annotated[FormatText | FormatJsonObject | FormatJsonSchema,
                      Field(discriminator="type")] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


class StreamOptions(_Strict):
    include_obfuscation: bool | None = None


# -- the request -------------------------------------------------------------------------------

class ResponseCreateRequest(_Strict):
    """POST /v1/responses."""

    model: str | None = None
    input: str | list[Any]
    instructions: str | None = None
    max_output_tokens: int | None = Field(None, ge=16)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    tools: list[FunctionTool] | None = None
    tool_choice: Literal["none", "auto", "required"] | ToolChoiceFunction | None = None
    parallel_tool_calls: bool | None = None
    text: TextConfig | None = None
    metadata: dict[str, Annotated[str, Field(max_length=512)]] | None = None
    store: bool | None = None
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    previous_response_id: str | None = Field(None, min_length=1, max_length=64)
    user: str | None = None
    reflection: ReflectionOptions | None = None
    # Hints for OpenAI's own caching and abuse detection: accepted, not used.
    prompt_cache_key: str | None = None
    prompt_cache_retention: Literal["in_memory", "24h"] | None = None
    safety_identifier: str | None = Field(None, max_length=64)
    max_tool_calls: int | None = Field(None, ge=1)  # counts built-in tool calls: there are none
    # OpenAI features redraft cannot honour: only their "off" value passes (check_request).
    include: list[str] | None = None
    background: bool | None = None
    truncation: Literal["auto", "disabled"] | None = None
    reasoning: dict[str, Any] | None = None
    service_tier: str | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    conversation: Any = None
    prompt: Any = None
    context_management: Any = None
    moderation: Any = None
    prompt_cache_options: Any = None

    @field_validator("metadata")
    @classmethod
    def _metadata_bounds(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None:
            if len(value) > 16:
                raise ValueError("at most 16 metadata pairs")
            if any(len(key) > 64 for key in value):
                raise ValueError("metadata keys are at most 64 characters")
        return value

    @field_validator("input")
    @classmethod
    def _input_given(cls, value: str | list[Any]) -> str | list[Any]:
        if isinstance(value, list) and not value:
            raise ValueError("input needs at least one item")
        return value

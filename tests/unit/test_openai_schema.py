"""The schema glue itself: the vendored OpenAI components reject what the issue found wrong."""

from __future__ import annotations

import copy

from app.openai.convert import to_chunk, to_response
from generation.types import Choice, Chunk, ChunkChoice, Completion, Usage
from tests.openai_schema import _resolved, problems

GOOD = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "hi", "refusal": None}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
LOGPROB = {"token": "hi", "logprob": -0.1, "bytes": [104, 105], "top_logprobs": []}


def test_a_good_response_and_extra_fields_validate() -> None:
    assert problems("CreateChatCompletionResponse", {**GOOD, "reflection": {"rounds": 1}}) == []


def test_null_fingerprint_and_logprobs_without_refusal_are_rejected() -> None:
    body = copy.deepcopy(GOOD)
    body["system_fingerprint"] = None
    body["choices"][0]["logprobs"] = {"content": [LOGPROB]}
    found = problems("CreateChatCompletionResponse", body)
    assert any(p.startswith("system_fingerprint") for p in found)
    assert any(p.startswith("choices/0/logprobs") for p in found)


def test_fields_of_components_not_vendored_fail_instead_of_passing() -> None:
    assert problems("CreateChatCompletionResponse", {**GOOD, "service_tier": "default"})


def test_openapi_nullable_becomes_a_type_array() -> None:
    assert _resolved({"type": "string", "nullable": True, "enum": ["a"]}, set()) == {
        "type": ["string", "null"], "enum": ["a", None]}
    assert _resolved({"$ref": "#/components/schemas/Missing"}, set()) is False


def test_converted_bodies_carry_refusal_and_no_null_fingerprint() -> None:
    completion = Completion((Choice(0, "hi", "stop", logprobs={"content": [LOGPROB]}),),
                            Usage(1, 1), "m")
    body = to_response(completion, response_id="chatcmpl-1", model="m")
    assert "system_fingerprint" not in body
    assert problems("CreateChatCompletionResponse", body) == []
    chunk = to_chunk(Chunk((ChunkChoice(0, content="hi", logprobs={"content": [LOGPROB]}),)),
                     response_id="chatcmpl-1", created=1, model="m", include_usage=True)
    assert chunk["choices"][0]["logprobs"]["refusal"] is None
    assert problems("CreateChatCompletionStreamResponse", chunk) == []

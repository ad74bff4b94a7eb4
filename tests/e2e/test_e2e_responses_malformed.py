"""Malformed Responses API requests, sent raw, plain and streamed: each gets an OpenAI error
object with a 4xx status that names the field (`param`), and none reaches the upstream.
Nothing malformed is a 5xx. (Bodies that are not JSON at all: tests/e2e/test_e2e_malformed.py,
for both routes.)"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import API_KEY, MODEL, OTHER_KEY, Fake, Server
from tests.e2e.test_e2e_malformed import check_error as check_chat_error
from tests.openai_schema import assert_valid

TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
FOREIGN = "<a response stored by another key>"


def image(**part: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "input_image", **part}]}


# (request body, the field `param` must name or start with, status); None: the whole body
CASES: list[tuple[Any, str | None, int]] = [
    ({"model": MODEL}, "input", 400),
    ({"input": 5}, "input", 400),
    ({"input": []}, "input", 400),
    ({"input": ["hi"]}, "input[0]", 400),
    ({"input": [{"type": "reasoning", "summary": []}]}, "input[0].type", 400),
    ({"input": [{"type": "message", "role": "robot", "content": "x"}]}, "input[0].role", 400),
    ({"input": [{"role": "user"}]}, "input[0].content", 400),
    ({"input": [{"role": "user", "content": 5}]}, "input[0].content", 400),
    ({"input": [{"role": "user", "content": [{"type": "output_text", "text": "x"}]}]},
     "input[0]", 400),
    ({"input": [{"role": "assistant", "content": [{"type": "input_image",
                                                   "image_url": "https://x.test/a.png"}]}]},
     "input[0]", 400),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]},
     "input[0].content[0]", 400),
    ({"input": [image(file_id="file-1")]}, "input[0].content[0]", 400),
    ({"input": [{"role": "user", "content": "x", "colour": "red"}]}, "input[0].colour", 400),
    ({"input": [{"type": "function_call_output", "call_id": "call_1", "output": "x"}]},
     "input[0].call_id", 400),
    ({"input": [CALL, {"role": "user", "content": "and now?"}]}, "input", 400),
    ({"input": [{k: v for k, v in CALL.items() if k != "call_id"}]}, "input[0].call_id", 400),
    ({"input": [{"type": "item_reference", "id": "msg_nope"}]}, "input[0].id", 400),
    ({"input": "hi", "previous_response_id": "resp_nope"}, "previous_response_id", 404),
    ({"input": "hi", "previous_response_id": FOREIGN}, "previous_response_id", 404),
    ({"input": "hi", "max_output_tokens": -5}, "max_output_tokens", 400),
    ({"input": "hi", "max_output_tokens": 4}, "max_output_tokens", 400),
    ({"input": "hi", "temperature": 3}, "temperature", 400),
    ({"input": "hi", "top_p": -0.1}, "top_p", 400),
    ({"input": "hi", "instructions": 7}, "instructions", 400),
    ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "x"}}},
     "text.format.schema", 400),
    ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "x",
                                         "schema": {"type": "banana"}}}},
     "text.format.schema.type", 400),
    ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "x", "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}, "required": "a"}}}},
     "text.format.schema.required", 400),
    ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "bad name!",
                                         "schema": {}}}}, "text.format.name", 400),
    ({"input": "hi", "text": {"format": {"type": "xml"}}}, "text.format", 400),
    ({"input": "hi", "tools": [{"type": "web_search"}]}, "tools[0]", 400),
    ({"input": "hi", "tools": [{"type": "function"}]}, "tools[0].name", 400),
    ({"input": "hi", "tools": [{**TOOL, "parameters": {"type": "object",
                                                       "properties": []}}]},
     "tools[0].parameters.properties", 400),
    ({"input": "hi", "tool_choice": "required"}, "tool_choice", 400),
    ({"input": "hi", "tools": [TOOL], "tool_choice": "always"}, "tool_choice", 400),
    ({"input": "hi", "tools": [TOOL], "tool_choice": {"type": "function", "name": "nope"}},
     "tool_choice.name", 400),
    ({"input": "hi", "parallel_tool_calls": "maybe"}, "parallel_tool_calls", 400),
    ({"input": "hi", "metadata": {"k": 5}}, "metadata.k", 400),
    ({"input": "hi", "store": "yes"}, "store", 400),
    ({"input": "hi", "seed": 1}, "seed", 400),
    ({"input": "hi", "background": True}, "background", 400),
    ({"input": "hi", "reasoning": {"effort": "high"}}, "reasoning", 400),
    ({"input": "hi", "include": ["reasoning.encrypted_content"]}, "include", 400),
    ({"input": "hi", "conversation": "conv_1"}, "conversation", 400),
    ({"input": "hi", "reflection": {"max_rounds": 99}}, "reflection.max_rounds", 400),
    ({"input": "hi", "reflection": {"rounds": 2}}, "reflection.rounds", 400),
    ([{"model": MODEL, "input": "hi"}], None, 400),  # JSON, but not an object
]
@pytest.fixture(scope="module")
def foreign_id(passthrough: Server) -> str:
    """A response stored under another key's namespace."""
    resp = httpx.post(passthrough.base_url + "/responses", json={"model": MODEL, "input": "x"},
                      headers={"Authorization": f"Bearer {OTHER_KEY}"}, timeout=30)
    assert resp.status_code == 200, resp.text
    return resp.json()["id"]


def check_error(resp: httpx.Response, status: int) -> dict[str, Any]:
    error = check_chat_error(resp, (status,))
    assert_valid("ErrorResponse", resp.json())
    return error


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(("body", "param", "status"), CASES,
                         ids=[f"{i}-{p}" for i, (_, p, _) in enumerate(CASES)])
def test_malformed_body_is_a_4xx_naming_the_field(passthrough: Server, fake: Fake,
                                                  foreign_id: str, body: Any,
                                                  param: str | None, status: int,
                                                  stream: bool) -> None:
    if isinstance(body, dict):
        body = {k: foreign_id if v == FOREIGN else v for k, v in body.items()}
        body = {"model": MODEL, **body, **({"stream": True} if stream else {})}
    resp = httpx.post(passthrough.base_url + "/responses", json=body, timeout=10,
                      headers={"Authorization": f"Bearer {API_KEY}"})
    error = check_error(resp, status)
    assert error["type"] == ("not_found_error" if status == 404 else "invalid_request_error")
    if param is not None:
        assert error["param"] is not None and error["param"].startswith(param), error
    assert fake.chat_requests() == 0


@pytest.mark.parametrize(("path", "params", "param"), [
    ("/responses/{id}/input_items", {"limit": 0}, "limit"),
    ("/responses/{id}/input_items", {"limit": 101}, "limit"),
    ("/responses/{id}/input_items", {"order": "sideways"}, "order"),
    ("/responses/{id}/input_items", {"after": "msg_nope"}, "after"),
    ("/responses/{id}", {"stream": "true"}, "stream"),
    ("/responses/{id}", {"include[]": "message.output_text.logprobs"}, "include"),
])
def test_bad_query_parameters_are_a_400_naming_them(passthrough: Server, foreign_id: str,
                                                    path: str, params: dict[str, Any],
                                                    param: str) -> None:
    mine = httpx.post(passthrough.base_url + "/responses", json={"model": MODEL, "input": "x"},
                      headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30).json()["id"]
    resp = httpx.get(passthrough.base_url + path.format(id=mine), params=params, timeout=10,
                     headers={"Authorization": f"Bearer {API_KEY}"})
    assert check_error(resp, 400)["param"] == param


def test_there_are_at_least_30_malformed_bodies() -> None:
    assert len(CASES) >= 30  # and the unreadable ones, in test_e2e_malformed.py

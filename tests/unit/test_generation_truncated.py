"""Answers cut short by the token budget, closed at their last complete element."""

from __future__ import annotations

import json

import pytest

from generation.scripted import ScriptedBackend
from generation.structured import AnswerInvalid, AnswerModel, ask
from generation.truncated import closed_prefixes
from generation.types import ChatParams


class Dim(AnswerModel):
    name: str
    bands: list[str]


class Rubric(AnswerModel):
    dimensions: list[Dim]
    checks: list[str] = []


FULL = {"dimensions": [{"name": "Tone", "bands": ["flat", "warm", "vivid"]},
                       {"name": "Length", "bands": ["long", "fits"]}],
        "checks": ["lowercase"]}


def test_a_document_cut_inside_an_element_keeps_the_elements_before_it():
    text = json.dumps(FULL)
    cut = text[:text.index('"fits"') + 3]           # inside the last band
    first = next(closed_prefixes(cut))
    assert first == {"dimensions": [FULL["dimensions"][0],
                                    {"name": "Length", "bands": ["long"]}]}
    assert {"dimensions": [FULL["dimensions"][0]]} in list(closed_prefixes(cut))


@pytest.mark.parametrize("text", [
    json.dumps(FULL),                      # complete: nothing was cut
    "no JSON here",
    '{"dimensions": [{"name": "To',        # nothing complete inside the object
])
def test_nothing_to_close(text):
    assert list(closed_prefixes(text)) == []


def test_brackets_and_commas_inside_strings_are_text():
    text = '{"dimensions": [{"name": "a, [b]", "bands": ["x}", "y"]}, {"name": "c'
    assert next(closed_prefixes(text)) == {"dimensions": [
        {"name": "a, [b]", "bands": ["x}", "y"]}]}


async def test_ask_uses_the_longest_valid_prefix_before_retrying():
    text = json.dumps(FULL)
    cut = text[:text.index('"Length"') + 4]         # inside the second dimension's name
    backend = ScriptedBackend([cut])
    answer = await ask(backend, [{"role": "user", "content": "rubric"}], ChatParams(),
                       Rubric, lambda r: r, retries=1)
    assert answer.calls == 1 and answer.error is None
    assert [d.name for d in answer.value.dimensions] == ["Tone"]


async def test_a_prefix_the_caller_refuses_is_retried_with_the_parse_error():
    cut = '{"dimensions": [{"name": "Tone", "bands": ["flat"]}, {"na'
    backend = ScriptedBackend([cut, json.dumps(FULL)])
    answer = await ask(backend, [{"role": "user", "content": "rubric"}], ChatParams(),
                       Rubric, lambda r: r if len(r.dimensions) == 2 else _refuse(), retries=1)
    assert answer.calls == 2 and len(answer.value.dimensions) == 2
    assert "not a JSON object" in backend.calls[1].messages[-1]["content"]


def _refuse() -> Rubric:
    raise AnswerInvalid("too few dimensions")


def test_raw_line_breaks_inside_strings_are_read():
    # what llama-cpp-python's grammar let SmolLM2 write inside an evidence string
    from generation.structured import parse_json
    assert parse_json('{"evidence": "[7, 8]\n<response>\n- walk", "score": 5}') == {
        "evidence": "[7, 8]\n<response>\n- walk", "score": 5}
    assert next(closed_prefixes('{"items": [{"e": "a\tb"}, {"e": "c')) == {
        "items": [{"e": "a\tb"}]}

"""The local backend's pure parts: stop strings, JSON checks, prompts, and missing extras."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generation.errors import InvalidRequest
from generation.local.constrain import requested_schema, schema_problem
from generation.local.decode import _StopScanner
from generation.local.model import ModelLoadError, flatten_content, load_model
from generation.types import ChatParams

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "colour": {"enum": ["red", "green"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
}


def scan(stops: tuple[str, ...], pieces: list[str]) -> tuple[str, bool]:
    scanner = _StopScanner(stops)
    shown = []
    for piece in pieces:
        visible, hit = scanner.feed(piece)
        shown.append(visible)
        if hit:
            return "".join(shown), True
    return "".join(shown) + scanner.flush(), False


def test_stop_string_split_across_tokens_is_cut_before_it_shows():
    scanner = _StopScanner(("END",))
    assert scanner.feed("hello E") == ("hello ", False)  # "E" may start "END": held back
    assert scanner.feed("N") == ("", False)
    assert scanner.feed("D and more") == ("", True)


def test_held_back_text_is_released_when_it_cannot_start_a_stop():
    assert scan(("END",), ["ab E", "x", "yz"]) == ("ab Exyz", False)
    assert scan(("END",), ["trailing EN"]) == ("trailing EN", False)  # flushed at the end


def test_earliest_of_several_stop_strings_wins():
    assert scan(("world", "lo"), ["hello world"]) == ("hel", True)
    assert scan((), ["no stops"]) == ("no stops", False)


@pytest.fixture
def without_jsonschema(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # exercise the built-in checks


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"name": "Ada", "age": 36}', None),
        ('{"name": "Ada", "age": 36, "colour": "red", "tags": ["a"]}', None),
        ('{"name": "Ada"', "not valid JSON"),
        ('{"name": "Ada"}', "missing the required key 'age'"),
        ('{"name": "Ada", "age": "36"}', "$.age should be of type integer"),
        ('{"name": "Ada", "age": true}', "$.age should be of type integer"),
        ('{"name": "Ada", "age": 1, "colour": "mauve"}', "$.colour should be one of"),
        ('{"name": "Ada", "age": 1, "tags": ["a", 2]}', "$.tags[1] should be of type string"),
        ('["name"]', "$ should be of type object"),
    ],
)
def test_basic_schema_check_names_the_problem(without_jsonschema, text, problem):
    found = schema_problem(text, SCHEMA)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_response_format_selects_the_schema():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    as_schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}
    assert requested_schema(ChatParams(response_format=as_schema), None) == schema
    assert requested_schema(ChatParams(response_format={"type": "json_object"}), None) == {
        "type": "object"}
    assert requested_schema(ChatParams(response_format={"type": "text"}), None) is None
    explicit = {"type": "array"}
    assert requested_schema(ChatParams(response_format=as_schema), explicit) == explicit


def test_content_parts_flatten_to_text_and_images_are_refused():
    assert flatten_content([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "ab"
    assert flatten_content(None) == ""
    with pytest.raises(InvalidRequest) as caught:
        flatten_content([{"type": "image_url", "image_url": {"url": "http://x"}}])
    assert caught.value.param == "messages"


def test_missing_extras_raise_a_load_error_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ModelLoadError) as caught:
        load_model("/nowhere")
    message = str(caught.value)
    assert "pip install 'redraft[local]'" in message
    assert "REDRAFT_UPSTREAM_URL" in message


def test_importing_the_backend_needs_neither_torch_nor_transformers():
    code = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'llguidance'):\n"
        "    sys.modules[name] = None\n"
        "import generation.local\n"
        "backend = generation.local.LocalBackend('some/model')\n"
        "print(backend.model)\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "some/model"

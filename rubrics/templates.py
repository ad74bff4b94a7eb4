"""Prompt templates: `rubrics/prompts/<name>.txt`, rendered with string.Template ($name).

string.Template rather than str.format because the prompts show JSON, whose braces
str.format would read as fields.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def _template(name: str) -> Template:
    # Package files never change while the process runs, so reading each once is safe.
    return Template(files("rubrics").joinpath("prompts", f"{name}.txt").read_text("utf-8"))


def render(name: str, **values: object) -> str:
    """The template filled in; a missing value raises KeyError rather than leaking `$name`."""
    return _template(name).substitute({k: str(v) for k, v in values.items()})


@cache
def fixed_text(*names: str) -> str:
    """The templates' own words, placeholders left out: what a model copying its prompt
    copies."""
    return "\n".join(_template(n).template.replace("$", " ") for n in names)

"""Prompt templates: `rubrics/prompts/<name>.txt`, rendered with string.Template ($name)."""

from __future__ import annotations

from functools import cache

from generation.conversation import prompt_template, render_prompt


def render(name: str, **values: object) -> str:
    """The template filled in; a missing value raises KeyError rather than leaking `$name`."""
    return render_prompt("rubrics", name, **values)


@cache
def fixed_text(*names: str) -> str:
    """The templates' own words, placeholders left out: what a model copying its prompt
    copies."""
    return "\n".join(prompt_template("rubrics", n).template.replace("$", " ") for n in names)

"""Rendering the loop's prompts from their template files."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from string import Template

from llm.conversation import detect_language
from rubrics.checklist import Checklist, Evaluation


@cache
def template(name: str) -> Template:
    """A prompt template from loops/prompts (read once; the files are package data)."""
    return Template(resources.files("loops").joinpath("prompts", f"{name}.txt").read_text("utf-8"))


@lru_cache(maxsize=1024)
def language_rule(query_text: str) -> str:
    if detect_language(query_text) == "zh":
        return "Write in Chinese (简体中文), the language of the request."
    return "Write in the language of the request."


def render_scores(checklist: Checklist, evaluation: Evaluation) -> str:
    by_name = {s.name: s for s in evaluation.scores}
    lines = []
    for dim in checklist.dimensions:
        s = by_name.get(dim.name)
        if s is not None:
            lines.append(f"- {dim.name}: {s.score}/{dim.scale_max} — {s.evidence}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One earlier round, as the working memory shows it to the next."""

    round: int
    summary: str
    before: float
    after: float


def render_history(attempts: list[Attempt], limit: int = 3) -> str:
    if not attempts:
        return "(none: this is the first revision)"
    return "\n".join(
        f"- round {a.round}: {a.summary or 'revised'} -> score {a.before:.2f} to {a.after:.2f} "
        f"({a.after - a.before:+.2f})" for a in attempts[-limit:])


"""Rendering the loop's prompts from their template files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from string import Template

from generation.conversation import detect_language, prompt_template
from rubrics.checklist import Checklist, Evaluation
from rubrics.checks import CheckOutcome


def template(name: str) -> Template:
    """A prompt template from loops/prompts (read once; the files are package data)."""
    return prompt_template("loops", name)


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
    # what the round's revision measured on the request's checks, in words ("67 words -> 58
    # words, needs at most 49 words"); said instead of the score when there is one, since a
    # share of checks met does not say which way a count moved
    measured: str = ""


def render_history(attempts: list[Attempt], limit: int = 3) -> str:
    if not attempts:
        return "(none: this is the first revision)"
    return "\n".join(_attempt_line(a) for a in attempts[-limit:])


def _attempt_line(a: Attempt) -> str:
    """A judged round says its score; a round scored by checks alone (no summary) says only
    what the revision measured."""
    parts = [] if a.measured and not a.summary else [
        f"{a.summary or 'revised'} -> score {a.before:.2f} to {a.after:.2f} "
        f"({a.after - a.before:+.2f})"]
    return f"- round {a.round}: " + "; ".join(parts + ([a.measured] if a.measured else []))


def measured_change(before: Sequence[CheckOutcome], after: Sequence[CheckOutcome]) -> str:
    """What one revision did to the checks either text failed, in words: "the revision went
    from 67 words to 58 words (needs at most 49 words)"; empty when both meet every check."""
    parts = []
    for b, a in zip(before, after, strict=False):
        if b.passed and a.passed:
            continue
        if a.passed:
            parts.append(f"met {a.target} (had {b.measured})")
        elif b.passed:
            parts.append(f"broke {a.target}: had {b.measured}, now {a.measured}")
        else:
            parts.append(f"went from {b.measured} to {a.measured} (needs {a.target})")
    return "the revision " + "; ".join(parts) if parts else ""


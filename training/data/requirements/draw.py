"""Drawing a requirement's parameters for a task, saying them in a template's words, and
setting the said requirements around the task: before it, inside it in parentheses, or
after it.

Sizes suit short answers from a small model: word limits of 40 to 120, a handful of
sentences, paragraphs, list items or sections. Keywords and forbidden words come from the
task's own topic words (or, for forbidden words, from common filler words), opening and
closing phrases from a pool for the task's genre."""

from __future__ import annotations

import random
import re
from typing import Any

from training.data.requirements.catalog import Task, Template

# how often each kind is drawn, relative to the others: answers in another language are rare
# for a small model, and JSON fits few kinds
KIND_WEIGHTS = {"word_count": 3.0, "sentence_count": 2.0, "paragraph_count": 2.0,
                "lowercase": 2.0, "uppercase": 1.0, "no_commas": 2.0, "starts_with": 2.0,
                "ends_with": 2.0, "quoted": 1.0, "title": 1.5, "bullet_count": 2.0,
                "numbered_count": 1.5, "section_count": 1.0, "heading_count": 1.0,
                "highlight_count": 1.5, "placeholder_count": 1.0, "capital_word_count": 1.0,
                "keyword": 3.0, "forbidden_word": 2.0, "postscript": 1.5, "json": 1.0,
                "letter_frequency": 1.0, "language": 0.4}

# (kind, group) -> the values n, or (n, upper) for `between`, are drawn from
SIZES: dict[tuple[str, str], tuple[Any, ...]] = {
    ("word_count", "at most"): (40, 50, 60, 70, 80, 90, 100, 120),
    ("word_count", "at least"): (30, 40, 50, 60, 80, 100),
    ("word_count", "exactly"): (20, 25, 30, 40, 50),
    ("word_count", "between"): ((20, 50), (30, 60), (40, 80), (50, 100), (60, 120)),
    ("sentence_count", "at most"): (2, 3, 4, 5, 6, 8),
    ("sentence_count", "at least"): (2, 3, 4, 5, 6),
    ("sentence_count", "exactly"): (1, 2, 3, 4, 5),
    ("sentence_count", "between"): ((2, 4), (3, 5), (3, 6), (4, 8), (2, 5)),
    ("paragraph_count", "exactly"): (2, 3, 4),
    ("paragraph_count", "at least"): (2, 3),
    ("paragraph_count", "divider"): (2, 3, 4),
    ("bullet_count", "exactly"): (3, 4, 5, 6),
    ("bullet_count", "at least"): (3, 4, 5),
    ("numbered_count", "exactly"): (3, 4, 5, 6),
    ("numbered_count", "at least"): (3, 4, 5),
    ("section_count", "exactly"): (2, 3, 4),
    ("heading_count", "exactly"): (2, 3),
    ("heading_count", "at least"): (2, 3),
    ("highlight_count", "at least"): (2, 3),
    ("placeholder_count", "at least"): (2, 3),
    ("capital_word_count", "at least"): (2, 3, 4, 5),
    ("capital_word_count", "at most"): (2, 3),
    ("keyword", "present"): (1,),
    ("keyword", "at least"): (2, 3),
    ("keyword", "exactly"): (1, 2, 3),
    ("letter_frequency", "at least"): (5, 8, 10, 12, 15),
    ("letter_frequency", "at most"): (1, 2, 3),
}
SPELLED_SHARE = 0.35  # how often a number is written in words rather than digits
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def spell(n: int) -> str:
    """`n` (0 to 100) in English words: 'seven', 'forty-five', 'a hundred'."""
    if n < 20:
        return _ONES[n]
    if n == 100:
        return "a hundred"
    if not 20 <= n < 100:
        raise ValueError(f"no words for {n}")
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")


def _times(n: int, number: str) -> str:
    return {1: "once", 2: "twice"}.get(n) or f"{number} times"


def draw_params(template: Template, task: Task, phrases: dict[str, Any],
                rng: random.Random) -> dict[str, Any]:
    """Parameters of the template's kind and group, for this task (in the registry's schema;
    nullable ones are left for `Check` to fill)."""
    kind, group = template.kind, template.group
    if (kind, group) in SIZES:
        size = rng.choice(SIZES[(kind, group)])
        relation = {"present": "at least", "divider": "exactly"}.get(group, group)
        n, upper = size if relation == "between" else (size, None)
        params: dict[str, Any] = {"relation": relation, "n": n, "upper": upper}
        if kind == "paragraph_count":
            params["divider"] = "***" if group == "divider" else None
        if kind == "keyword":
            params["word"] = rng.choice(task.keywords)
        if kind == "section_count":
            params["marker"] = rng.choice(phrases["section_markers"])
        if kind == "letter_frequency":
            pool = "common_letters" if relation == "at least" else "rare_letters"
            params["letter"] = rng.choice(phrases[pool])
        return params
    if kind in ("starts_with", "ends_with"):
        pool = phrases["start" if kind == "starts_with" else "end"][task.genre]
        return {"phrase": rng.choice(pool)}
    if kind == "forbidden_word":
        pool = task.keywords if rng.random() < 0.5 else phrases["fillers"]
        return {"word": rng.choice(pool)}
    if kind == "postscript":
        return {"marker": rng.choice(phrases["postscript_markers"])}
    if kind == "language":
        return {"language": rng.choice(sorted(phrases["languages"]))}
    return {}


def render(template: Template, params: dict[str, Any], phrases: dict[str, Any],
           rng: random.Random) -> str:
    """The template's text with its slots filled from `params`."""
    n, upper = params.get("n"), params.get("upper")
    # both numbers of a range in the same style: "20 to 50", "twenty to fifty"
    spelled = rng.random() < SPELLED_SHARE and max(n or 0, upper or 0) <= 100
    number = {v: spell(v) if spelled else str(v) for v in (n, upper) if v is not None}
    slots = {"n": number.get(n, ""), "upper": number.get(upper, ""),
             "times": _times(n, number[n]) if n is not None else "",
             "word": params.get("word", ""), "phrase": params.get("phrase", ""),
             "marker": params.get("marker", ""), "letter": params.get("letter", ""),
             "language": phrases["languages"].get(params.get("language", ""), "")}
    text = template.text.format(**slots)
    if n == 1 and "{n}" in template.text:  # "exactly one sentences" -> "exactly one sentence"
        text = re.sub(rf"\b({slots['n']}\s+\w+?)s\b", r"\1", text, count=1)
    return text


def assemble(task: Task, said: list[tuple[str, str]]) -> str:
    """The query: the task with each (at, text) requirement set where its template goes. A
    lead-in ending in a comma takes the task after it in lower case ('In at most 50 words,
    describe ...'); requirements after the task follow in the order given."""
    text = task.text
    for at, piece in said:
        if at == "paren":
            text = f"{text[:-1]} ({piece}){text[-1]}"
    for at, piece in said:
        if at == "start":
            text = f"{piece} {text[0].lower()}{text[1:]}" if piece.endswith(",") \
                else f"{piece} {text}"
    after = [piece for at, piece in said if at == "end"]
    if after:
        text = " ".join([text, *after])
    return f"{text}\n\n{task.passage}" if task.passage else text

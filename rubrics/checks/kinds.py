"""The registry of check kinds: an explicit dict from kind name to its parameter schema and
its pure function of (text, params) -> CheckOutcome."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rubrics.checks.model import CheckOutcome

Relation = str  # "at least" | "at most" | "exactly" | "between"
RELATIONS = ("at least", "at most", "exactly", "between")


@dataclass(frozen=True, slots=True)
class CheckKind:
    name: str
    description: str
    params_schema: Mapping[str, Any]   # JSON Schema of the kind's parameters (strict form)
    run: Callable[[str, Mapping[str, Any]], CheckOutcome]


def relation_holds(value: int, relation: Relation, n: int, upper: int | None = None) -> bool:
    if relation == "at least":
        return value >= n
    if relation == "at most":
        return value <= n
    if relation == "exactly":
        return value == n
    if relation == "between":
        return n <= value <= (upper if upper is not None else n)
    raise ValueError(f"unknown relation {relation!r}")


def target_words(relation: Relation, n: int, upper: int | None, unit: str) -> str:
    if relation == "between":
        return f"between {n} and {upper} {unit}"
    return f"{relation} {n} {unit}"


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\s\u3400-\u9fff\uf900-\ufaff]+")


def count_words(text: str) -> int:
    """Words as WritingBench counts them: whitespace-separated tokens, each CJK character one."""
    return len(_WORD.findall(text))


COUNT_PARAMS = {
    "type": "object",
    "properties": {"relation": {"type": "string", "enum": list(RELATIONS)},
                   "n": {"type": "integer", "minimum": 0, "maximum": 100000},
                   "upper": {"type": ["integer", "null"], "minimum": 0, "maximum": 100000}},
    "required": ["relation", "n", "upper"],
    "additionalProperties": False,
}


def _word_count(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    value = count_words(text)
    relation, n, upper = params["relation"], int(params["n"]), params.get("upper")
    return CheckOutcome(kind="word_count", passed=relation_holds(value, relation, n, upper),
                        measured=f"{value} words",
                        target=target_words(relation, n, upper, "words"))


KINDS: dict[str, CheckKind] = {
    "word_count": CheckKind("word_count", "the number of words (each CJK character counts one)",
                            COUNT_PARAMS, _word_count),
}

"""What every check kind shares: the outcome a run gives, the kind record, relations between a
count and its target, the parameter schemas kinds are built from, and the strict validation of
a kind's params. Nothing here knows a `Check`, so the model of a check can import the registry
that is built on this module."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from rubrics.checks.jsonsubset import problems

Relation = str  # "at least" | "at most" | "exactly" | "between"
RELATIONS = ("at least", "at most", "exactly", "between")
MAX_COUNT = 100_000
PHRASE_CHARS = 200


class CheckOutcome(BaseModel):
    """What running a check on a text gives: pass or fail, the value measured on the text and
    the target, both in words a reflection can quote ("45 words; needs at least 120")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    passed: bool
    measured: str   # what the text has: "45 words"
    target: str     # what the request asks: "at least 120 words"
    quote: str = ""
    # what to do to meet it, in words a reviser can act on ("Add at least 75 words."); empty
    # when it passes
    action: str = ""

    def line(self) -> str:
        """One line for a trace, a reflection item or the admin UI."""
        mark = "pass" if self.passed else "FAIL"
        return f"[{mark}] {self.kind}: {self.measured}; needs {self.target}"


@dataclass(frozen=True, slots=True)
class CheckKind:
    name: str
    description: str
    params_schema: Mapping[str, Any]   # JSON Schema of the kind's parameters (strict form)
    run: Callable[[str, Mapping[str, Any]], CheckOutcome]
    # The text changed so that it meets the check, where one exact change keeps every word
    # of it (its case, its commas, an opening or closing phrase added); None where no such
    # change exists for this text. Kinds that need new content (a count, a keyword) have none.
    conform: Callable[[str, Mapping[str, Any]], str | None] | None = None


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
        return f"between {n} and {upper if upper is not None else n} {unit}"
    return f"{relation} {n} {unit}"


def params_schema(**properties: Mapping[str, Any]) -> dict[str, Any]:
    """A strict object schema: every property required, no others."""
    return {"type": "object", "properties": dict(properties), "required": list(properties),
            "additionalProperties": False}


def string(max_length: int = PHRASE_CHARS, *, nullable: bool = False) -> dict[str, Any]:
    return {"type": ["string", "null"] if nullable else "string", "minLength": 0 if nullable
            else 1, "maxLength": max_length}


def count(*, nullable: bool = False) -> dict[str, Any]:
    return {"type": ["integer", "null"] if nullable else "integer", "minimum": 0,
            "maximum": MAX_COUNT}


RELATION = {"type": "string", "enum": list(RELATIONS)}
COUNT_PROPS: dict[str, Mapping[str, Any]] = {"relation": RELATION, "n": count(),
                                             "upper": count(nullable=True)}
COUNT_PARAMS = params_schema(**COUNT_PROPS)
NO_PARAMS = params_schema()


def bounds(relation: Relation, n: int, upper: int | None) -> tuple[int, float]:
    """The counts a relation allows, as (lowest, highest)."""
    return {"at least": (n, float("inf")), "at most": (0, n), "exactly": (n, n),
            "between": (n, upper if upper is not None else n)}[relation]


def counted(kind: str, value: int, params: Mapping[str, Any], unit: str,
            measured_unit: str | None = None, thing: str | None = None,
            how: str = "") -> CheckOutcome:
    """The outcome of a count check: the value against its relation, both said in words, and
    how far it is off (`thing`, e.g. "sentences", names what is added or removed; `how`, what
    one looks like, follows an addition: a small reviser told to "add 2 highlighted spans"
    wrote the words "highlighted section")."""
    relation, n, upper = params["relation"], int(params["n"]), params.get("upper")
    passed = relation_holds(value, relation, n, upper)
    target = target_words(relation, n, upper, unit)
    action = ""
    if not passed:
        low, high = bounds(relation, n, upper)
        what = thing or unit
        action = (_removal(value, int(high), what, unit) if value > high
                  else f"Add at least {low - value} {what}" + (f" ({how})." if how else "."))
    return CheckOutcome(kind=kind, passed=passed, measured=f"{value} {measured_unit or unit}",
                        target=target, action=action)


# the share of a text to cut, in words a writer judges by eye (no model counts 67 words)
_SHARES = ((0.1, "a tenth"), (0.2, "a fifth"), (0.25, "a quarter"), (1 / 3, "a third"),
           (0.5, "half"), (2 / 3, "two thirds"), (0.75, "three quarters"))


def _removal(value: int, high: int, what: str, unit: str) -> str:
    """How much to cut: of a length, the share of the text; of countable parts (sentences,
    items, paragraphs), how many to keep."""
    cut = value - high
    if unit in ("words", "Chinese characters"):
        share = next((name for limit, name in _SHARES if cut / value <= limit), "most")
        return f"Remove at least {cut} {what}: about {share} of the text."
    return f"Remove at least {cut} {what}: keep {high}."


def flag(kind: str, passed: bool, measured: str, target: str, action: str = "") -> CheckOutcome:
    return CheckOutcome(kind=kind, passed=passed, measured=measured, target=target,
                        action="" if passed else action)


def fold(text: str) -> str:
    """Whitespace collapsed and case folded: how a phrase or a quote is compared."""
    return " ".join(text.split()).casefold()


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def is_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


class ParamsInvalid(ValueError):
    """Parameters that break their kind's schema."""


def validate_params(schema: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` checked against a kind's strict schema; a nullable property left out is filled
    with null, so the same requirement always has the same parameters (and `Check.key`)."""
    props = schema["properties"]
    filled = dict(params)
    for name, sub in props.items():
        if name not in filled and isinstance(sub.get("type"), list) and "null" in sub["type"]:
            filled[name] = None
    found = problems(filled, schema)
    if found:
        raise ParamsInvalid("; ".join(found))
    if filled.get("relation") == "between":
        upper = filled.get("upper")
        if upper is None or upper < filled["n"]:
            raise ParamsInvalid("a 'between' relation needs upper >= n")
    return filled

"""Every structured call of the loop gets a token budget from its schema: enough for the
fullest planned document, never less than the shortest one needs, under the caller's cap."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.judges.assess import assess_schema
from loops.judges.holistic import holistic_schema
from loops.reflection import reflection_schema
from rubrics.agents import AxialDimension, Candidate, _Task
from rubrics.budget import (
    MIN_CHARS,
    QUOTE,
    budgeted,
    fitted,
    schema_budget,
    shortest_budget,
)
from rubrics.evaluate import evaluate, joint_schema, judged_schema
from rubrics.packs import PackLibrary

CHECKLIST = PackLibrary().generic("en")
TASK = _Task("conversation", "en", 4, 8, 2)
CANDIDATES = [Candidate(name=f"candidate {i}", aspect="genre", reason="r") for i in range(8)]
AXIAL = [AxialDimension(name=f"Dimension {i}", description="d", rationale="r", merged_from=[])
         for i in range(4)]
SCHEMAS = {
    "open coding": TASK.open_schema(), "axial coding": TASK.axial_schema(CANDIDATES),
    "selective coding": TASK.selective_schema(AXIAL), "fused coding": TASK.fused_schema(),
    "joint": joint_schema(CHECKLIST.dimensions), "dimension": judged_schema(
        CHECKLIST.dimensions[0]), "assess": assess_schema(CHECKLIST),
    "reflect": reflection_schema(CHECKLIST), "holistic": holistic_schema()}


def strings(schema: Any) -> list[dict[str, Any]]:
    if not isinstance(schema, dict):
        return []
    found = [schema] if schema.get("type") == "string" and "enum" not in schema else []
    for sub in (schema.get("properties") or {}).values():
        found += strings(sub)
    return found + strings(schema.get("items"))


@pytest.mark.parametrize("kind", SCHEMAS)
def test_every_generated_string_is_bounded_so_the_budget_holds(kind: str) -> None:
    """A bound keeps a small model from spending the whole budget on one field."""
    for spec in strings(SCHEMAS[kind]):
        assert "maxLength" in spec and spec["maxLength"] <= 600, (kind, spec)


@pytest.mark.parametrize("kind", SCHEMAS)
def test_a_budget_fits_the_shortest_document_with_room_and_stays_modest(kind: str) -> None:
    schema = SCHEMAS[kind]
    assert shortest_budget(schema) < schema_budget(schema) <= 2000
    # The operator's ceiling wins over the schema's plan, but not over the shortest need.
    assert budgeted(ChatParams(max_tokens=10**6), schema).max_tokens == schema_budget(schema)
    assert budgeted(ChatParams(max_tokens=1), schema).max_tokens == shortest_budget(schema)
    assert budgeted(ChatParams(), schema).max_tokens == schema_budget(schema)


def test_budgets_grow_with_what_the_schema_asks_for() -> None:
    assert schema_budget(joint_schema(CHECKLIST.dimensions)) > schema_budget(
        joint_schema(CHECKLIST.dimensions[:2]))
    assert schema_budget(TASK.selective_schema(AXIAL)) > schema_budget(
        TASK.selective_schema(AXIAL[:2]))
    # a quote's budget covers the whole quote (about four characters a token)
    assert schema_budget(judged_schema(CHECKLIST.dimensions[0])) > QUOTE / 4


def test_each_judge_call_is_sent_its_own_budget() -> None:
    judge = ScriptedBackend(default=lambda m, p, s: json.dumps(
        {"evidence": "x", "score": 5} if "score" in s["properties"] else
        {"scores": {d.name: {"evidence": "x", "score": 5} for d in CHECKLIST.dimensions}}))
    query = [{"role": "user", "content": "Write a note."}]
    asyncio.run(evaluate(judge, query, "A note.", CHECKLIST, ChatParams(max_tokens=4096)))
    asyncio.run(evaluate(judge, query, "A note.", CHECKLIST, ChatParams(max_tokens=4096),
                         mode="per_dimension"))
    joint, *single = judge.calls
    assert joint.params.max_tokens == schema_budget(joint_schema(CHECKLIST.dimensions))
    assert {c.params.max_tokens for c in single} == {
        schema_budget(judged_schema(d)) for d in CHECKLIST.dimensions}


def test_under_a_low_ceiling_every_string_gets_its_share_of_the_budget() -> None:
    schema = SCHEMAS["selective coding"]
    roomy, same = fitted(ChatParams(max_tokens=4096), schema)
    assert same is schema and roomy.max_tokens == schema_budget(schema)
    ceiling = schema_budget(schema) // 2
    params, shrunk = fitted(ChatParams(max_tokens=ceiling), schema)
    bounds = [s["maxLength"] for s in strings(shrunk)]
    before = [s["maxLength"] for s in strings(schema)]
    assert all(MIN_CHARS <= b < a for a, b in zip(before, bounds, strict=True))
    assert params.max_tokens == min(ceiling, schema_budget(shrunk))
    assert schema_budget(shrunk) <= ceiling + 8
    # enums (the dimension names) are left alone; the schema is a copy
    assert shrunk["properties"]["dimensions"]["items"]["properties"]["name"] == \
        schema["properties"]["dimensions"]["items"]["properties"]["name"]
    assert strings(schema)[0]["maxLength"] == before[0]


def test_a_ceiling_below_the_shortest_document_is_raised_to_it() -> None:
    schema = SCHEMAS["joint"]
    params, shrunk = fitted(ChatParams(max_tokens=8), schema)
    assert params.max_tokens == shortest_budget(shrunk) > 8
    assert {s["maxLength"] for s in strings(shrunk)} == {MIN_CHARS}

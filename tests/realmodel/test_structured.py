"""Every structured call kind the loop, the rubric agents and the memory bank send, decoded by
the local backend on SmolLM2 under its real schema (built by the functions the callers use),
is JSON that validates against that schema and parses as the caller's answer model.

Each call gets the schema's closing reserve plus a few tokens: the budget a caller with a
small `max_tokens` leaves, where an unconstrained end would be cut inside a string.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from generation.types import ChatParams
from loops.judges.assess import AssessOut, assess_schema
from loops.judges.holistic import HolisticOut, holistic_schema
from loops.reflection import ReflectionOut, reflection_schema
from memory.recollect import (
    KEY_SCHEMA,
    SUMMARY_SCHEMA,
    Selection,
    Summary,
    TaskKey,
    selection_schema,
)
from rubrics.agents import (
    AxialCoding,
    AxialDimension,
    Candidate,
    FusedCoding,
    OpenCoding,
    SelectiveCoding,
    _Task,
)
from rubrics.evaluate import Judged, joint_schema, judged_schema
from rubrics.packs import PackLibrary

jsonschema = pytest.importorskip("jsonschema")

QUERY = "Write a two-sentence note thanking a neighbour for watering my plants."
TEXT = "Dear Sam, thank you so much for watering my plants while I was away."
SPARE = 24  # tokens of content beyond the closing reserve

TASK = _Task(f"user: {QUERY}", "en", 4, 6, 2)
CHECKLIST = PackLibrary().get("generic:general-en")
CANDIDATES = [Candidate(name=n, aspect="task_goal", reason="asked for")
              for n in ("Gratitude", "Brevity", "Warmth", "Specificity")]
AXIAL = [AxialDimension(name=n, description=f"{n} of the note", rationale="it matters",
                        merged_from=[n]) for n in ("Gratitude", "Brevity", "Warmth", "Tone")]


def _joint(value: dict[str, Any]) -> Any:
    return {name: Judged.model_validate(v) for name, v in value["scores"].items()}


# kind -> (schema, the caller's answer model or reader, what is asked)
KINDS: dict[str, tuple[dict[str, Any], Callable[[Any], Any], str]] = {
    "open coding": (TASK.open_schema(), OpenCoding.model_validate,
                    "List candidate dimensions for judging answers to this request."),
    "axial coding": (TASK.axial_schema(CANDIDATES), AxialCoding.model_validate,
                     "Merge these candidate dimensions into key dimensions: "
                     + ", ".join(c.name for c in CANDIDATES)),
    "selective coding": (TASK.selective_schema(AXIAL), SelectiveCoding.model_validate,
                         "Write a banded rubric for each dimension: "
                         + ", ".join(d.name for d in AXIAL)),
    "fused checklist": (TASK.fused_schema(), FusedCoding.model_validate,
                        "Write a checklist of dimensions with banded rubrics."),
    "joint judge": (joint_schema(CHECKLIST.dimensions), _joint,
                    "Score the text on each dimension, quoting evidence."),
    "per-dimension judge": (judged_schema(CHECKLIST.dimensions[0]), Judged.model_validate,
                            f"Score the text on {CHECKLIST.dimensions[0].name}."),
    "assess and reflect": (assess_schema(CHECKLIST), AssessOut.model_validate,
                           "Score the text on each dimension and say how to improve it."),
    "reflection": (reflection_schema(CHECKLIST), ReflectionOut.model_validate,
                   "Say how to improve the text on its weakest dimensions."),
    "memory key": (KEY_SCHEMA, TaskKey.model_validate,
                   "Describe the kind of task: genre, audience, constraints."),
    "memory selection": (selection_schema(5, 2), Selection.model_validate,
                         "Choose the relevant experiences among the five listed."),
    "memory summary": (SUMMARY_SCHEMA, Summary.model_validate,
                       "Summarise in one paragraph what made the rewrite better."),
    "holistic judge": (holistic_schema(), HolisticOut.model_validate,
                       "Critique the text, list rewrite actions and score it 1 to 10."),
}


@pytest.mark.parametrize("kind", list(KINDS))
async def test_structured_answers_validate_against_their_schema(backend, tokenizer, kind):
    from generation.local.constrain import closing_reserve

    schema, read, ask = KINDS[kind]
    messages = [{"role": "system", "content": "You answer with a single JSON object."},
                {"role": "user", "content": f"Request: {QUERY}\nText: {TEXT}\n{ask}"}]
    max_tokens = closing_reserve(tokenizer, schema) + SPARE
    completion = await backend.chat(messages, ChatParams(max_tokens=max_tokens, temperature=0),
                                    schema=schema)

    value = json.loads(completion.text)
    jsonschema.validate(value, schema)
    read(value)  # what the caller does with it: its pydantic model accepts the answer
    assert completion.finish_reason == "stop"
    assert completion.usage.completion_tokens <= max_tokens

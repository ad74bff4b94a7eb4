"""Whole loops against an upstream that answers every structured call with a random instance of
the schema it was sent (what a constrained decoder guarantees, and no more).

Every checklist mode, joint (fused and not) and per-dimension evaluation, reflection, and
memory recall / select / remember: no loop degrades, no call is retried (but for evidence
that quotes nothing of the judged text), every score lies in
its dimension's bands, every loop runs a round, and a loop that gained is remembered.
"""

from __future__ import annotations

import jsonschema
import pytest
from pydantic import BaseModel

from bench.fakes.random_instance import RandomInstance
from generation.schemas import strict_problems
from generation.scripted import ScriptedBackend
from generation.structured import RETRY
from generation.types import ChatParams
from loops.checklists import ChecklistSpec, Resolved
from loops.controller import ReflectionLoop
from loops.judges.assess import assess_schema
from loops.memory_step import MemoryStep
from loops.options import LoopOptions
from loops.record import to_record
from loops.reflection import ReflectionItemOut, ReflectionOut, reflection_schema, to_reflection
from memory.recollect import KEY_SCHEMA, SUMMARY_SCHEMA, selection_schema
from rubrics.agents import AxialDimension, Candidate, _Task, build_checklist
from rubrics.checklist import Band, Checklist, Dimension
from rubrics.evaluate import joint_schema, judged_schema
from store import Store
from tests.banks import hashing_bank

RETRY_OPENING = RETRY.split(":")[0]
QUERIES = [
    "Write a short announcement of our spring opening hours for the customers of a bike shop.",
    "Write a short announcement of our summer opening hours for the customers of a bakery.",
    "Write a wedding toast for my sister Anna, warm and under three minutes.",
    "Write a short announcement of new winter classes for the members of a small gym.",
    "Write a wedding toast for my best friend Marco, funny but kind.",
    "Write a product description of a tea kettle for teenagers, about 100 words.",
    "Write a short announcement of our autumn opening hours for the customers of a florist.",
    "Write a product description of a desk lamp for students, about 100 words.",
]
MODES = [  # checklist mode, evaluation mode, fused reflection
    ("three_agent", "joint", True),
    ("fused", "joint", True),
    ("three_agent", "per_dimension", False),
    ("fused", "joint", False),
]


class RandomUpstream:
    """A backend that answers with random schema instances, and records every call."""

    def __init__(self, seed: int) -> None:
        self.instances = RandomInstance(seed)
        self.backend = ScriptedBackend(default=self._reply, model="random")

    def _reply(self, messages, params, schema) -> str:
        return self.instances.prose() if schema is None else self.instances.text_for(schema)

    def retries(self) -> list[str]:
        return [str(m["content"]) for call in self.backend.calls for m in call.messages
                if m["role"] == "user" and str(m["content"]).startswith(RETRY_OPENING)]


class Agents:
    """The real coding agents (no store or cache around them); a degraded build fails."""

    def __init__(self, judge: ScriptedBackend) -> None:
        self.judge = judge
        self.degraded: list[str] = []

    async def fixed(self, spec: ChecklistSpec, namespace: str) -> Resolved:
        raise AssertionError("no fixed checklist here")

    async def build(self, query, model, namespace, mode) -> Resolved:  # type: ignore[no-untyped-def]
        built = await build_checklist(self.judge, query, ChatParams(), mode=mode)
        if built.degraded:
            self.degraded.append(built.error or "degraded")
        return Resolved(built.checklist, "generated", "id", built.usage, built.calls)


@pytest.fixture
async def store(tmp_path):
    opened = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'memory.db'}")
    yield opened
    await opened.close()


@pytest.fixture
async def bank(store, tmp_path):
    opened = await hashing_bank(store, tmp_path / "index")
    yield opened
    await opened.aclose()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("checklist_mode, evaluation, fuse", MODES)
async def test_random_schema_instances_finish_every_loop_without_a_retry(
        store, bank, seed, checklist_mode, evaluation, fuse) -> None:
    upstream = RandomUpstream(seed)
    model = upstream.backend
    agents = Agents(model)
    # The floor is measured for MiniLM; hashing vectors of unrelated random text are far apart,
    # and this test is about the selector's and the rewrite's calls, so every hit is offered.
    step = MemoryStep(bank, model, model, ChatParams(), floor=-1.0)
    loop = ReflectionLoop(model, model, agents, judge_params=ChatParams(), memory=step)  # type: ignore[arg-type]
    options = LoopOptions(max_rounds=2, threshold=1.0, evaluation=evaluation,
                          checklist_mode=checklist_mode, fuse_reflection=fuse)
    gained = remembered = selected = 0
    for query in QUERIES:
        trace = await loop.run([{"role": "user", "content": query}], ChatParams(), options,
                               namespace="ns")
        assert trace.stop_reason != "degraded" and trace.rounds >= 1
        for cand in trace.candidates:
            assert cand.evaluation is not None and cand.score is not None
            cand.evaluation.validate_against(trace.checklist)  # every score inside its bands
        if trace.recalled is not None and trace.recalled.selected:
            selected += 1
            assert [c.kind for c in trace.candidates][:2] == ["draft", "memory_rewrite"]
        # As the server does: the loop is recorded, then remembered if it gained.
        await store.loops.save(to_record(trace, namespace="ns", request={}, model="random",
                                         backend="scripted"))
        if step.worth_remembering(trace):
            gained += 1
            remembered += await step.after_loop(trace, "ns") is not None
    # The only re-asks: evidence that is not quoted from the judged text (random strings).
    assert agents.degraded == []
    assert all("is not quoted from the response" in r for r in upstream.retries())
    assert gained >= 1 and remembered == gained and selected >= 1
    problems = {p for c in model.calls if c.schema for p in strict_problems(c.schema)}
    assert problems == set()


CHECKLIST = Checklist(dimensions=tuple(
    Dimension(name=n, description=f"{n} of the answer", bands=tuple(
        Band(low=lo, high=hi, description=f"{n} {lo}-{hi}") for lo, hi in bands))
    for n, bands in (("Clarity", ((1, 4), (5, 7), (8, 10))), ("Warmth", ((0, 1), (2, 3))))),
    source="user")


def schemas_sent() -> dict[str, dict]:
    task = _Task("<conversation/>", "en", 4, 8, 2)
    candidates = [Candidate(name=f"c{i}", aspect="genre", reason="r") for i in range(5)]
    axial = [AxialDimension(name=f"d{i}", description="d", rationale="r", merged_from=[])
             for i in range(4)]
    return {"assess": assess_schema(CHECKLIST), "reflect": reflection_schema(CHECKLIST),
            "joint": joint_schema(CHECKLIST.dimensions),
            "dimension": judged_schema(CHECKLIST.dimensions[1]),
            "open": task.open_schema(), "axial": task.axial_schema(candidates),
            "selective": task.selective_schema(axial), "fused": task.fused_schema(),
            "key": KEY_SCHEMA, "select": selection_schema(3, 2), "summary": SUMMARY_SCHEMA}


@pytest.mark.parametrize("name", sorted(schemas_sent()))
def test_every_schema_keeps_strict_rules_and_the_generator_keeps_to_it(name) -> None:
    schema = schemas_sent()[name]
    assert strict_problems(schema) == []
    validator = jsonschema.Draft202012Validator(schema)
    instances = RandomInstance(5)
    for _ in range(40):
        validator.validate(instances.value(schema, schema))


def test_scores_and_counts_are_bounded_by_the_request_at_hand() -> None:
    schemas = schemas_sent()
    warmth = schemas["assess"]["properties"]["scores"]["properties"]["Warmth"]
    assert warmth["properties"]["score"] == {"type": "integer", "minimum": 0, "maximum": 3}
    items = schemas["assess"]["properties"]["items"]
    assert (items["minItems"], items["maxItems"]) == (1, 4)
    assert items["items"]["properties"]["dimension"]["enum"] == ["Clarity", "Warmth"]
    chosen = schemas["select"]["properties"]["selected"]
    assert chosen["maxItems"] == 2 and chosen["items"]["properties"]["number"]["enum"] == [1, 2, 3]
    assert selection_schema(1, 2)["properties"]["selected"]["maxItems"] == 1


def test_strict_problems_names_what_strict_mode_rejects() -> None:
    class Loose(BaseModel):
        name: str
        note: str = ""

    problems = strict_problems(Loose.model_json_schema())
    assert any("not every property is required" in p for p in problems)
    assert any("additionalProperties" in p for p in problems)
    assert strict_problems({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}},
                            "required": ["x"], "additionalProperties": False})


def test_blank_reflection_fields_get_the_rubrics_words() -> None:
    out = ReflectionOut(summary="  ", items=[
        ReflectionItemOut(dimension="warmth ", evidence=" ", objective=" ", actions=["  "]),
        ReflectionItemOut(dimension="Clarity", evidence="q", objective="o", actions=["cut x"])])
    reflection = to_reflection(out, CHECKLIST)
    warmth, clarity = reflection.items
    assert warmth.dimension == "Warmth" and warmth.objective == "Reach the top band: Warmth 2-3"
    assert warmth.actions == ("Revise the text so that it satisfies: Warmth of the answer",)
    assert clarity.actions == ("cut x",)

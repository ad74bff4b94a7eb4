"""The three coding agents (and the fused mode) against the scripted backend."""

from __future__ import annotations

import json

import pytest

from generation.errors import UpstreamError, UpstreamUnavailable
from generation.schemas import strict_problems
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from rubrics.agents import build_checklist
from rubrics.packs import PackLibrary
from rubrics.repair import generic_band
from rubrics.templates import render

PARAMS = ChatParams(model="writer", temperature=0.2, n=3, tools=[{"type": "function"}])
ENGLISH = [
    {"role": "system", "content": "You are a copywriter for a kettle brand."},
    {"role": "user", "content": "Write a tagline."},
    {"role": "assistant", "content": "Boil brilliance."},
    {"role": "user", "content": "Now write a 100-word product description for teenagers."},
]
CHINESE = [{"role": "user", "content": "请为青少年写一段100字左右的电水壶产品描述。"}]
NAMES = ["Audience fit", "Length", "Product facts", "Tone", "Call to action"]


def open_answer(names=NAMES) -> str:
    return json.dumps({"candidates": [
        {"name": n, "aspect": "task_goal", "reason": f"{n} matters"} for n in names]})


def axial_answer(names=NAMES) -> str:
    return json.dumps({"dimensions": [
        {"name": n, "description": f"checks {n}", "rationale": f"why {n}",
         "merged_from": [n]} for n in names]})


def rubric(names=NAMES, bands=4) -> list[dict]:
    return [{"name": n, "description": f"checks {n}", "rationale": f"why {n}",
             "bands": [f"{n} level {k}" for k in range(bands)]} for n in names]


def selective_answer(names=NAMES, bands=4) -> str:
    return json.dumps({"dimensions": rubric(names, bands)})


async def test_three_agents_build_a_banded_checklist():
    backend = ScriptedBackend([open_answer(), axial_answer(), selective_answer()])
    built = await build_checklist(backend, ENGLISH, PARAMS)
    assert not built.degraded and built.calls == 3 and len(backend.calls) == 3
    ck = built.checklist
    assert [d.name for d in ck.dimensions] == NAMES
    assert ck.source == "generated" and ck.language == "en"
    assert [(b.low, b.high) for b in ck.dimensions[0].bands] == [(1, 2), (3, 4), (5, 6), (7, 8)]
    assert ck.dimensions[0].bands[0].description == "Audience fit level 0"
    assert ck.dimensions[0].rationale == "why Audience fit"
    # Each schema says the counts and names the step after it checks.
    opened, axial, selective = (c.schema["properties"] for c in backend.calls)
    assert opened["candidates"]["minItems"] == 4
    assert (axial["dimensions"]["minItems"], axial["dimensions"]["maxItems"]) == (4, 8)
    assert axial["dimensions"]["items"]["properties"]["merged_from"]["items"]["enum"] == NAMES
    rubrics = selective["dimensions"]
    assert rubrics["minItems"] == rubrics["maxItems"] == 5
    assert rubrics["items"]["properties"]["name"]["enum"] == NAMES
    assert rubrics["items"]["properties"]["bands"]["minItems"] == 3
    for call in backend.calls:
        assert strict_problems(call.schema) == []
    assert built.usage.prompt_tokens > 0 and built.usage.completion_tokens > 0
    first = backend.calls[0]
    assert first.params.n == 1 and first.params.tools is None
    assert first.params.temperature == 0.2
    prompt = first.messages[-1]["content"]
    assert 'target="true">\nNow write a 100-word product description' in prompt
    assert "You are a copywriter" in prompt and render("language_zh").strip() not in prompt
    # Each later agent works from the previous one's answer.
    assert '"Call to action"' in backend.calls[1].messages[-1]["content"]
    assert '"merged_from"' in backend.calls[2].messages[-1]["content"]


async def test_chinese_query_gets_the_chinese_instruction():
    backend = ScriptedBackend([open_answer(), axial_answer(), selective_answer()])
    built = await build_checklist(backend, CHINESE, PARAMS)
    assert built.checklist.language == "zh"
    for call in backend.calls:
        assert render("language_zh").strip() in call.messages[-1]["content"]


async def test_invalid_answer_is_retried_with_the_error():
    backend = ScriptedBackend([
        open_answer(), axial_answer(),
        selective_answer(bands=1),                  # no dimension with two bands
        selective_answer(bands=6),                  # too many bands
        selective_answer(),
    ])
    built = await build_checklist(backend, ENGLISH, PARAMS)
    assert not built.degraded and built.calls == 5
    retry = backend.calls[3].messages
    assert retry[-2]["role"] == "assistant" and "only 0 usable dimensions" in retry[-1]["content"]
    assert "6 usable bands" in backend.calls[4].messages[-1]["content"]


async def test_a_short_answer_is_filled_in_without_a_retry():
    # What Qwen2.5-Coder-1.5B writes with no constrained decoding: two dimensions, each with
    # only its lowest and highest band, and one with a single band.
    dims = rubric(NAMES[:2], bands=2) + rubric(["Tone"], bands=1)
    backend = ScriptedBackend([json.dumps({"candidates": [], "dimensions": dims})])
    built = await build_checklist(backend, ENGLISH, PARAMS, mode="fused")
    assert built.calls == 1 and not built.degraded
    ck = built.checklist
    generic = PackLibrary().generic("en")
    assert [d.name for d in ck.dimensions] == [*NAMES[:2], *(
        d.name for d in generic.dimensions[:2])]
    assert [b.description for b in ck.dimensions[0].bands] == [
        "Audience fit level 0", "The response meets about half of it: checks Audience fit.",
        "Audience fit level 1"]
    assert [(b.low, b.high) for b in ck.dimensions[0].bands] == [(1, 2), (3, 4), (5, 6)]
    assert ck.dimensions[2] == generic.dimensions[0]
    assert ck.source == "generated"


async def test_obvious_faults_are_repaired_without_a_retry():
    # Selective coding answers for the axial dimensions: a repeated or unknown name serves
    # the next dimension left without a rubric; extra rubrics are dropped.
    dims = rubric(["Tone", "tone ", "Grammar", "Audience fit", "Length", "Product facts",
                   "Humour"])
    dims[1]["bands"][1] = "   "
    backend = ScriptedBackend([
        "```json\n" + open_answer() + "\n```", axial_answer(),
        "Here you go: " + json.dumps({"dimensions": dims, "extra": 1}),
    ])
    built = await build_checklist(backend, ENGLISH, PARAMS, n_max=8)
    assert built.calls == 3 and not built.degraded
    ck = built.checklist
    assert [d.name for d in ck.dimensions] == NAMES
    tone, call = ck.dimension("Tone"), ck.dimension("Call to action")
    assert tone.bands[0].description == "Tone level 0"
    # The spare rubric's bands and rationale repeat Tone's, and one band is blank: each is
    # rewritten from this dimension's description.
    assert call.rationale == "It decides whether the response checks tone."
    assert [b.description for b in call.bands] == [
        "The response does not meet it at all: checks tone.",
        "The response meets it only in small part: checks tone.",
        "The response meets most of it: checks tone.",
        "The response meets it fully: checks tone."]


async def test_blank_and_repeated_names_are_made_distinct_instead_of_retried():
    answer = json.dumps({"candidates": [], "dimensions": rubric(
        ["Tone", " tone", "", "Length", "Tone"])})
    backend = ScriptedBackend([answer])
    built = await build_checklist(backend, ENGLISH, PARAMS, mode="fused")
    assert built.calls == 1 and not built.degraded
    assert [d.name for d in built.checklist.dimensions] == [
        "Tone", "tone (2)", "Dimension 3", "Length", "Tone (3)"]


@pytest.mark.parametrize("query, language", [(ENGLISH, "en"), (CHINESE, "zh")])
async def test_garbage_degrades_to_the_generic_checklist(query, language):
    backend = ScriptedBackend(default="I cannot help with that.")
    built = await build_checklist(backend, query, PARAMS, retries=2)
    assert built.degraded and built.calls == 3
    generic = PackLibrary().generic(language)
    assert built.checklist.dimensions == generic.dimensions
    # the request's length still holds: the pre-pass needs no model
    assert [c.kind for c in built.checklist.checks] == [
        "word_count" if language == "en" else "char_count"]
    assert "open coding" in built.error


async def test_schema_valid_but_useless_answers_degrade_at_the_failing_step():
    backend = ScriptedBackend([open_answer(), axial_answer(), '{"dimensions": []}',
                               '{"dimensions": "none"}'])
    built = await build_checklist(backend, ENGLISH, PARAMS, retries=1)
    assert built.degraded and built.calls == 4 and "selective coding" in built.error


async def test_garbled_upstream_answer_is_retried_but_outages_raise():
    backend = ScriptedBackend([UpstreamError("bad gateway"), open_answer(), axial_answer(),
                               selective_answer()])
    built = await build_checklist(backend, ENGLISH, PARAMS)
    assert not built.degraded and built.calls == 4
    with pytest.raises(UpstreamUnavailable):
        await build_checklist(ScriptedBackend([UpstreamUnavailable("down")]), ENGLISH, PARAMS)


async def test_fused_mode_is_one_call():
    answer = json.dumps({"candidates": json.loads(open_answer())["candidates"],
                         "dimensions": rubric(bands=5)})
    backend = ScriptedBackend([answer])
    built = await build_checklist(backend, ENGLISH, PARAMS, mode="fused", step=1)
    schema = backend.calls[0].schema
    assert built.calls == 1 and strict_problems(schema) == []
    dims = schema["properties"]["dimensions"]
    assert (dims["minItems"], dims["maxItems"]) == (4, 8)
    d = built.checklist.dimensions[0]
    assert [(b.low, b.high) for b in d.bands] == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]


# Band lists a real model wrote: SmolLM2-135M-Instruct and a 1.5B instruct model copied the
# prompt's example bands; the 1.5B model gave three of four dimensions one rationale.
GENERIC = ["lowest band", "middle band", "highest band"]


async def test_generic_repeated_and_prompt_copied_bands_and_repeated_rationales_are_rewritten():
    dims = rubric(["Length constraint", "Tone", "Product facts", "Audience fit"], bands=3)
    for d in dims[:3]:
        d["bands"] = list(GENERIC)
        d["rationale"] = "This dimension is important for the quality of the response."
    dims[3]["bands"] = ["Severely missing", "Each is described by observable evidence in the "
                        "response", "Names two teen uses of the kettle"]
    backend = ScriptedBackend([open_answer(), axial_answer(
        ["Length constraint", "Tone", "Product facts", "Audience fit"]),
        json.dumps({"dimensions": dims})])
    built = await build_checklist(backend, ENGLISH, PARAMS)
    ck = built.checklist
    bands = [b.description for d in ck.dimensions for b in d.bands]
    assert not any(generic_band(b) for b in bands) and len(set(bands)) == len(bands)
    assert ck.dimensions[0].bands[0].description == (
        "The response does not meet it at all: checks Length constraint.")
    assert ck.dimensions[3].bands[2].description == "Names two teen uses of the kettle"
    assert "observable evidence" not in ck.dimensions[3].bands[1].description
    assert len({d.rationale for d in ck.dimensions}) == 4


@pytest.mark.parametrize("text", ["lowest band", "Middle band.", "band 2 of 4", "...", "good",
                                  "Highest", "top tier"])
def test_a_band_naming_only_its_place_is_generic(text):
    assert generic_band(text)


@pytest.mark.parametrize("text", ["States the opening time and the reason",
                                  "Over 150 words or under 90", "No call to action at all"])
def test_a_band_saying_what_the_response_shows_is_not_generic(text):
    assert not generic_band(text)

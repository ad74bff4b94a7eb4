"""Judging a text against a checklist, joint and per dimension."""

from __future__ import annotations

import asyncio
import json

import pytest

from generation.errors import UpstreamError, UpstreamUnavailable
from generation.scripted import ScriptedBackend
from generation.types import ChatParams, Choice, Completion
from rubrics.checklist import Checklist
from rubrics.evaluate import Judged, evaluate
from rubrics.evidence import FLAG, quoted

PARAMS = ChatParams(model="judge", n=2)
QUERY = [{"role": "user", "content": "Write a haiku about autumn rain."}]
TEXT = "Cold rain on the roof\nmaple leaves drift in puddles\nthe kettle is warm"


def make_checklist() -> Checklist:
    def dim(name, ranges, weight=1.0):
        return {"name": name, "description": f"checks {name}", "weight": weight,
                "bands": [{"low": lo, "high": hi, "description": f"{name} {lo}-{hi}"}
                          for lo, hi in ranges]}
    return Checklist.model_validate({"dimensions": [
        dim("Form", [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10)]),
        dim("Imagery", [(1, 3), (4, 6), (7, 9)], weight=2.0),
        dim("Seasonal word", [(0, 0), (1, 1)]),
    ]})


def joint(**scores) -> str:
    return json.dumps({"scores": {name: {"evidence": ev, "score": s}
                                  for name, (s, ev) in scores.items()}})


async def test_joint_scores_every_dimension_in_one_call():
    ck = make_checklist()
    backend = ScriptedBackend([json.dumps({"scores": {
        "Form": {"evidence": "Cold rain on the roof", "score": 8},
        "imagery": {"evidence": "“maple leaves drift in puddles”", "score": 9},
        "Seasonal word": {"evidence": "no season word, only maple", "score": 1},
    }})])
    result = await evaluate(backend, QUERY, TEXT, ck, PARAMS)
    assert result.calls == 1 and not result.degraded
    scores = {s.name: (s.score, s.band, s.evidence) for s in result.evaluation.scores}
    assert scores == {"Form": (8, 3, "Cold rain on the roof"),
                      "Imagery": (9, 2, "maple leaves drift in puddles"),
                      "Seasonal word": (1, 1, "no season word, only maple")}
    assert result.total == 8 + 2 * 9 + 1
    assert result.normalised == pytest.approx((7 / 9 + 2 * 8 / 8 + 1) / 4)
    call = backend.calls[0]
    assert call.params.n == 1
    props = call.schema["properties"]["scores"]["properties"]
    assert props["Imagery"]["properties"]["score"] == {"type": "integer", "minimum": 1,
                                                       "maximum": 9}
    assert set(props["Form"]["properties"]) == set(Judged.model_json_schema()["properties"])
    prompt = call.messages[-1]["content"]
    assert TEXT in prompt and "- 7-9: Imagery 7-9" in prompt


async def test_out_of_range_and_fractional_scores_are_clamped():
    backend = ScriptedBackend([joint(Form=(42, "x"), Imagery=(-3, "y"),
                                     **{"Seasonal word": (0.6, "z")})])
    result = await evaluate(backend, QUERY, TEXT, make_checklist(), PARAMS)
    assert [s.score for s in result.evaluation.scores] == [10, 1, 1]
    assert not result.degraded and result.calls == 1


async def test_an_answer_cut_short_keeps_its_scores_and_asks_only_for_the_rest():
    full = joint(Form=(8, "Cold rain on the roof"), Imagery=(9, "maple leaves drift in puddles"))
    cut = full[:full.index('"Imagery"') + 20]      # the token budget ran out inside Imagery
    backend = ScriptedBackend([cut, joint(Imagery=(7, "maple leaves drift in puddles"),
                                          **{"Seasonal word": (1, "no season word")})])
    result = await evaluate(backend, QUERY, TEXT, make_checklist(), PARAMS)
    assert not result.degraded and result.calls == 2
    assert [s.score for s in result.evaluation.scores] == [8, 7, 1]
    assert set(backend.calls[1].schema["properties"]["scores"]["properties"]) == {
        "Imagery", "Seasonal word"}


async def test_missing_dimensions_are_retried_alone_then_scored_at_minimum():
    ck = make_checklist()
    backend = ScriptedBackend([
        joint(Form=(6, "a")),
        "not json at all",
        joint(Imagery=("high", "b")),
    ])
    result = await evaluate(backend, QUERY, TEXT, ck, PARAMS, retries=2)
    assert result.degraded and result.calls == 3
    assert [s.score for s in result.evaluation.scores] == [6, 1, 0]
    retry = backend.calls[1]
    assert set(retry.schema["properties"]["scores"]["properties"]) == {"Imagery",
                                                                       "Seasonal word"}
    assert '"Imagery", "Seasonal word"' in retry.messages[-1]["content"]
    result.evaluation.validate_against(ck)
    # the cause names the dimensions the last answer left out
    assert result.error == 'no valid evidence and integer score for: ["Imagery", "Seasonal word"]'


async def test_an_upstream_refusal_of_every_try_is_the_cause_given():
    refusal = UpstreamError("upstream returned HTTP 500: failed to parse grammar")
    backend = ScriptedBackend([refusal, refusal])
    result = await evaluate(backend, QUERY, TEXT, make_checklist(), PARAMS, retries=1)
    assert result.degraded and result.calls == 2
    assert result.error == "upstream error: upstream returned HTTP 500: failed to parse grammar"


async def test_an_answer_cut_inside_its_first_dimension_is_asked_again_for_short_evidence():
    class CutShort(ScriptedBackend):
        async def chat(self, messages, params, schema=None) -> Completion:
            done = await super().chat(messages, params, schema)
            if len(self.calls) > 1:
                return done
            cut = Choice(0, done.text, "length")
            return Completion((cut,), done.usage, done.model)

    rambling = '{"scores": {"Form": {"evidence": "' + "the response meets it, " * 40
    backend = CutShort([rambling, joint(Form=(6, "a"), Imagery=(5, "b"),
                                        **{"Seasonal word": (1, "c")})])
    result = await evaluate(backend, QUERY, TEXT, make_checklist(), PARAMS)
    assert not result.degraded and result.calls == 2
    retry = backend.calls[1].messages[-1]["content"]
    assert "cut short at its token budget" in retry and "keep each evidence" in retry


async def test_a_full_evaluation_gives_no_cause():
    backend = ScriptedBackend([joint(Form=(6, "a"), Imagery=(5, "b"),
                                     **{"Seasonal word": (1, "c")})])
    result = await evaluate(backend, QUERY, TEXT, make_checklist(), PARAMS)
    assert not result.degraded and result.error == ""


async def test_per_dimension_makes_one_concurrent_call_per_dimension():
    ck = make_checklist()
    in_flight, peak = 0, 0

    class Tracking(ScriptedBackend):
        async def chat(self, messages, params, schema=None) -> Completion:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return await super().chat(messages, params, schema)

    def reply(messages, params, schema):
        top = schema["properties"]["score"]["maximum"]
        return json.dumps({"evidence": "Cold rain", "score": top})

    backend = Tracking(default=reply)
    result = await evaluate(backend, QUERY, TEXT, ck, PARAMS, mode="per_dimension")
    assert result.calls == 3 and len(backend.calls) == 3 and peak == 3
    assert result.normalised == 1.0 and not result.degraded
    judged = sorted(judged_dimension(c.messages) for c in backend.calls)
    assert judged == ["Form", "Imagery", "Seasonal word"]
    # The calls for one text differ only after it: the shared part is the prefix.
    prompts = [c.messages[-1]["content"] for c in backend.calls]
    head = prompts[0][:prompts[0].index("Score it on this one dimension only")]
    assert all(p.startswith(head) for p in prompts) and f"{TEXT}\n</response>" in head

    peak = 0
    backend = Tracking(default=reply)
    await evaluate(backend, QUERY, TEXT, ck, PARAMS, mode="per_dimension", concurrency=1)
    assert peak == 1 and len(backend.calls) == 3


def judged_dimension(messages) -> str:
    """The one dimension a per-dimension prompt asks about (and the only one it shows)."""
    [_, task] = messages[1]["content"].split("### ")
    return task.split(" (scale")[0]


async def test_per_dimension_degrades_only_the_dimension_that_fails():
    def reply(messages, params, schema):
        if judged_dimension(messages) == "Imagery":
            return "garbage"
        return json.dumps({"evidence": "e", "score": 1})

    result = await evaluate(ScriptedBackend(default=reply), QUERY, TEXT, make_checklist(),
                            PARAMS, mode="per_dimension", retries=1)
    assert result.degraded and result.calls == 2 + 2
    assert result.evaluation.scores[1].score == 1 and result.evaluation.scores[1].evidence == ""
    assert result.error.startswith("Imagery: ") and "Form" not in result.error


async def test_upstream_outage_raises():
    backend = ScriptedBackend(default=UpstreamUnavailable("down"))
    with pytest.raises(UpstreamUnavailable):
        await evaluate(backend, QUERY, TEXT, make_checklist(), PARAMS, mode="per_dimension")


async def test_evidence_not_quoted_from_the_text_is_re_asked_once_then_flagged():
    ck = make_checklist()
    band_copy = {"evidence": "The response uses vivid sensory imagery throughout", "score": 9}
    first = {"Form": {"evidence": "Cold rain on the roof", "score": 8}, "Imagery": band_copy,
             "Seasonal word": {"evidence": "no season word, only maple", "score": 1}}
    backend = ScriptedBackend([json.dumps({"scores": first}),
                               json.dumps({"scores": {"Imagery": band_copy}})])
    result = await evaluate(backend, QUERY, TEXT, ck, PARAMS)
    assert result.calls == 2 and not result.degraded
    assert "'Imagery' is not quoted from the response" in backend.calls[1].messages[-1]["content"]
    imagery = result.evaluation.scores[1]
    assert imagery.score == 9 and imagery.evidence.startswith(FLAG)
    assert result.evaluation.scores[0].evidence == "Cold rain on the roof"


async def test_a_re_asked_dimension_that_then_quotes_the_text_is_not_flagged():
    ck = make_checklist()
    backend = ScriptedBackend([
        json.dumps({"evidence": "The response uses vivid sensory imagery throughout",
                    "score": 8}),
        json.dumps({"evidence": "maple leaves drift in puddles", "score": 6})])
    one = Checklist(dimensions=(ck.dimensions[1],), source="user")
    result = await evaluate(backend, QUERY, TEXT, one, PARAMS, mode="per_dimension")
    assert result.calls == 2 and result.evaluation.scores[0].score == 6
    assert result.evaluation.scores[0].evidence == "maple leaves drift in puddles"


@pytest.mark.parametrize(("evidence", "ok"), [
    ("maple leaves drift in puddles", True), ("“Cold rain on the roof,”", True),
    ("there is no seasonal word", True), ("vivid", True),
    ("The response uses vivid sensory imagery throughout", False),
    ("Highest band: all evidence is quoted", False)])
def test_quoted_accepts_quotes_and_missing_notes_only(evidence, ok):
    assert quoted(evidence, TEXT) is ok

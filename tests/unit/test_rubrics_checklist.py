"""Checklist rules, repair, ids and the score maths."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generation.errors import InvalidRequest
from rubrics.checklist import (
    ANY,
    GENERATED,
    Checklist,
    ChecklistInvalid,
    Evaluation,
    Limits,
    checklist_id,
    from_json,
    to_json,
)
from rubrics.repair import repair_bands, repair_checklist


def bands(*ranges: tuple[int, int]) -> list[dict]:
    return [{"low": lo, "high": hi, "description": f"level {lo}-{hi}"} for lo, hi in ranges]


def dim(name: str, *ranges: tuple[int, int], weight: float = 1.0) -> dict:
    ranges = ranges or ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10))
    return {"name": name, "description": f"checks {name}", "weight": weight,
            "bands": bands(*ranges)}


def checklist(*dims: dict) -> Checklist:
    return Checklist.model_validate({"dimensions": list(dims)})


def test_valid_checklist_derives_its_scale_and_max_score():
    ck = checklist(dim("clarity"), dim("tone", (0, 1), (2, 3), (4, 4), weight=2.0))
    assert [(d.scale_min, d.scale_max) for d in ck.dimensions] == [(1, 10), (0, 4)]
    assert ck.max_score == 10 + 2 * 4


@pytest.mark.parametrize("ranges, fault", [
    (((1, 3), (3, 6)), "overlap"),
    (((1, 3), (5, 6)), "gap"),
    (((4, 6), (1, 3)), "descending"),
    (((1, 10),), "a single band"),
])
def test_bands_must_be_ascending_contiguous_and_several(ranges, fault):
    with pytest.raises(ValueError, match="bands"):
        checklist(dim("clarity", *ranges))


@pytest.mark.parametrize("change", [
    {"name": "  "}, {"description": ""}, {"weight": 0}, {"weight": float("inf")},
])
def test_dimension_fields_are_checked(change):
    with pytest.raises(ValueError):
        checklist({**dim("clarity"), **change})


def test_dimension_names_are_unique_ignoring_case_and_spacing():
    with pytest.raises(ValueError, match="twice"):
        checklist(dim("Tone of voice"), dim("tone  of VOICE"))


def test_limits_for_generated_rubrics():
    three = checklist(dim("a"), dim("b"), dim("c"))
    with pytest.raises(ChecklistInvalid, match="3 dimensions"):
        GENERATED.check(three)
    assert ANY.check(three) is three


def test_checklist_invalid_is_a_400_naming_the_field():
    with pytest.raises(InvalidRequest) as info:
        from_json('{"dimensions": []}')
    assert info.value.status == 400 and info.value.param == "reflection.checklist"


def test_json_round_trip_and_content_id():
    ck = checklist(dim("clarity"), dim("tone"))
    again = from_json(to_json(ck))
    assert again == ck
    assert checklist_id(again.model_copy(update={"source": "cache"})) == checklist_id(ck)
    changed = checklist(dim("clarity"), dim("tone", (1, 5), (6, 10)))
    assert checklist_id(changed) != checklist_id(ck)
    assert json.loads(to_json(ck))["dimensions"][0]["name"] == "clarity"


def test_from_json_rejects_garbage():
    with pytest.raises(ChecklistInvalid, match="JSON"):
        from_json("{not json")


def test_repair_fixes_order_gaps_overlaps_and_scale():
    raw = {"dimensions": [
        {"name": " clarity ", "description": "", "weight": -3,
         "bands": bands((7, 10), (1, 3), (3, 5), (8, 9))},
    ]}
    ck = repair_checklist(raw, scale=(1, 10))
    d = ck.dimensions[0]
    assert [(b.low, b.high) for b in d.bands] == [(1, 3), (4, 6), (7, 10)]
    assert (d.name, d.description, d.weight) == ("clarity", "clarity", 1.0)


def test_repair_dedupes_drops_empty_and_trims_by_weight():
    raw = {"dimensions": [
        dim("a", weight=1), dim("A"), {"name": "", "bands": bands((1, 2), (3, 4))},
        {"name": "no bands", "bands": []}, dim("b", weight=3), dim("c", weight=2),
        dim("d", weight=1), "not a dimension",
    ]}
    ck = repair_checklist(raw, limits=Limits(1, 3, 2, 5))
    assert [d.name for d in ck.dimensions] == ["a", "b", "c"]


@pytest.mark.parametrize("raw, match", [
    ("nonsense", "JSON"),
    ({"dimensions": "x"}, "list of dimensions"),
    ({"dimensions": [dim("a")]}, "only 1 usable"),
    ({"dimensions": [dim("a", (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6))]}, "6 usable"),
])
def test_repair_raises_for_what_it_cannot_fix(raw, match):
    with pytest.raises(ChecklistInvalid, match=match):
        repair_checklist(raw, limits=Limits(2, 8, 3, 5))


band_lists = st.lists(
    st.fixed_dictionaries({"low": st.integers(-20, 30), "high": st.integers(-20, 30),
                           "description": st.sampled_from(["x", " ", "band"])}),
    max_size=8)


@given(band_lists, st.none() | st.tuples(st.integers(-5, 5), st.integers(6, 15)))
def test_repaired_bands_are_always_contiguous(raw, scale):
    fixed = repair_bands(raw, scale)
    for prev, band in zip(fixed, fixed[1:], strict=False):
        assert band["low"] == prev["high"] + 1
    assert all(b["low"] <= b["high"] for b in fixed)
    if scale and fixed:
        assert (fixed[0]["low"], fixed[-1]["high"]) == scale


@st.composite
def scored_checklists(draw):
    dims, scores = [], []
    for i in range(draw(st.integers(1, 6))):
        widths = draw(st.lists(st.integers(1, 4), min_size=2, max_size=5))
        low = draw(st.integers(-3, 3))
        ranges = []
        for w in widths:
            ranges.append((low, low + w - 1))
            low += w
        weight = draw(st.floats(0.1, 5.0))
        dims.append(dim(f"d{i}", *ranges, weight=weight))
        scores.append(draw(st.integers(ranges[0][0], ranges[-1][1])))
    ck = checklist(*dims)
    ev = Evaluation(scores=tuple(d.scored(s) for d, s in zip(ck.dimensions, scores, strict=True)))
    return ck, ev


@settings(max_examples=200)
@given(scored_checklists(), st.data())
def test_normalised_is_in_unit_interval_and_monotone(pair, data):
    ck, ev = pair
    value = ev.normalised(ck)
    assert 0.0 <= value <= 1.0
    assert ev.total(ck) == pytest.approx(
        sum(d.weight * s.score for d, s in zip(ck.dimensions, ev.scores, strict=True)))
    i = data.draw(st.integers(0, len(ck.dimensions) - 1))
    d = ck.dimensions[i]
    if ev.scores[i].score < d.scale_max:
        up = list(ev.scores)
        up[i] = d.scored(ev.scores[i].score + 1)
        assert Evaluation(scores=tuple(up)).normalised(ck) > value


def test_normalised_extremes_and_clamping():
    ck = checklist(dim("a"), dim("b", (0, 1), (2, 4), weight=3))
    top = Evaluation(scores=(ck.dimensions[0].scored(99), ck.dimensions[1].scored(4)))
    bottom = Evaluation(scores=(ck.dimensions[0].scored(-5), ck.dimensions[1].scored(0)))
    assert top.scores[0].score == 10 and top.scores[0].band == 4
    assert top.normalised(ck) == 1.0 and bottom.normalised(ck) == 0.0
    assert top.total(ck) == 10 + 3 * 4


def test_evaluation_must_score_every_dimension_once_in_band():
    ck = checklist(dim("a"), dim("b"))
    a, b = ck.dimensions
    with pytest.raises(ChecklistInvalid, match="'b' not scored"):
        Evaluation(scores=(a.scored(5),)).validate_against(ck)
    with pytest.raises(ChecklistInvalid, match="twice"):
        Evaluation(scores=(a.scored(5), a.scored(6), b.scored(1))).validate_against(ck)
    wrong_band = a.scored(5).model_copy(update={"band": 0})
    with pytest.raises(ChecklistInvalid, match="not in band"):
        Evaluation(scores=(wrong_band, b.scored(1))).validate_against(ck)
    out = a.scored(5).model_copy(update={"score": 11})
    with pytest.raises(ChecklistInvalid, match="outside"):
        Evaluation(scores=(out, b.scored(1))).validate_against(ck)


def test_rubrics_imports_only_the_llm_leaf():
    import subprocess
    import sys

    code = ("import sys, rubrics, rubrics.build_pack; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    for forbidden in ("app", "loops", "memory", "store", "fastapi", "starlette"):
        assert f"'{forbidden}'" not in loaded

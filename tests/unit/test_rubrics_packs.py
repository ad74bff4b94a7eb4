"""WritingBench import/export and the rubric packs shipped in the package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generation.conversation import detect_language
from generation.errors import NotFound, RedraftError
from rubrics.checklist import ChecklistInvalid, checklist_id
from rubrics.packs import PackLibrary
from rubrics.writingbench import from_writingbench, record_criteria, to_writingbench

CRITERION = {
    "name": "Hierarchical Logic",
    "criteria_description": "Assesses the logical relationship between heading levels",
    "1-2": "Inconsistent heading levels", "3-4": "Some logical breaks",
    "5-6": "Generally logical", "7-8": "Clear hierarchy", "9-10": "Perfect logical flow",
}


@pytest.fixture(scope="module")
def library() -> PackLibrary:
    return PackLibrary()


def test_writingbench_criteria_import_as_five_bands_on_one_to_ten():
    ck = from_writingbench([CRITERION])
    d = ck.dimensions[0]
    assert [(b.low, b.high) for b in d.bands] == [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10)]
    assert d.bands[0].description == "Inconsistent heading levels"
    assert ck.source == "pack"
    assert to_writingbench(ck) == [CRITERION]
    assert list(to_writingbench(ck)[0]) == list(CRITERION)


def test_both_releases_record_keys_are_read():
    assert record_criteria({"criteria": [CRITERION]}) == [CRITERION]
    assert record_criteria({"checklist": [CRITERION]}) == [CRITERION]
    with pytest.raises(ChecklistInvalid):
        record_criteria({"query": "x"})


def test_broken_criteria_are_rejected():
    with pytest.raises(ChecklistInvalid, match="Hierarchical Logic"):
        from_writingbench([{**CRITERION, "5-6": ""}])
    with pytest.raises(ChecklistInvalid):
        from_writingbench([{k: v for k, v in CRITERION.items() if k != "5-6"}])


def test_every_pack_entry_round_trips_through_writingbench_format(library):
    entries = library.entries("writingbench")
    assert len(entries) == 940
    for entry in entries:
        criteria = to_writingbench(entry.checklist)
        again = from_writingbench(criteria, language=entry.language)
        assert again == entry.checklist, entry.ref
        assert all(set(c) == set(CRITERION) for c in criteria)
        for names in entry.focus.values():
            assert set(names) <= {d.name for d in entry.checklist.dimensions}


def test_pack_lookup(library):
    entry = library.entry("writingbench:wb-v1-1")
    assert entry.domain2 == "Paper Outline" and entry.language == "en"
    assert entry.query.startswith("I need to write a literature review")
    assert entry.focus["format"] == ("Hierarchical Logic",)
    assert library.get("writingbench:wb-v1-1") == entry.checklist
    assert library.entry("writingbench:wb-v1-13").language == "zh"
    assert library.entry("writingbench:wb-v2-16").checklist.language == "en"


@pytest.mark.parametrize("ref", ["writingbench:wb-v1-999999", "nopack:x", "generic", "generic:"])
def test_unknown_refs_are_404_naming_the_field(library, ref):
    with pytest.raises(NotFound) as info:
        library.get(ref)
    assert info.value.status == 404 and info.value.param == "reflection.checklist"


def test_generic_checklists_follow_language(library):
    zh, en = library.generic("zh"), library.generic("fr")
    assert zh.language == "zh" and detect_language(zh.dimensions[0].description) == "zh"
    assert en.language == "en"
    for ck in (zh, en):
        assert 4 <= len(ck.dimensions) <= 8 and ck.source == "pack"
        assert all(3 <= len(d.bands) <= 5 and (d.scale_min, d.scale_max) == (1, 10)
                   for d in ck.dimensions)
    assert checklist_id(zh) != checklist_id(en)


async def test_custom_pack_files_and_preload(tmp_path: Path):
    good = tmp_path / "mine.json"
    good.write_text(json.dumps({"entries": [{"id": "one", "checklist": {
        "dimensions": [{"name": "n", "description": "d", "bands": [
            {"low": 0, "high": 0, "description": "no"},
            {"low": 1, "high": 1, "description": "yes"}]}]}}]}))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "checklist": {"dimensions": []}}\n')
    library = PackLibrary({"mine": good, "bad": bad})
    await library.preload("mine")
    assert library.get("mine:one").dimensions[0].scale_max == 1
    with pytest.raises(RedraftError, match="malformed") as info:
        library.get("bad:x")
    assert info.value.status == 500


@pytest.mark.parametrize("text, language", [
    ("Write a product description for a kettle.", "en"),
    ("请为一款电水壶写一段产品描述。", "zh"),
    # A Chinese instruction over pasted English material is a Chinese request.
    ("根据已完成的部分给我论文的摘要，160词左右，并给我三个关键词\n\n"
     + "The introduction of the paper. " * 50, "zh"),
    ("Write a nostalgic essay about 胡同 life. " * 5, "en"),
    ("Напишите эссе о зиме.", None),
])
def test_language_detection(text, language):
    assert detect_language(text) == language

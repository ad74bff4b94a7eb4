"""The pre-pass on requests written for its phrasings' development (tests/data/checks/
phrasings_dev.jsonl): each kind in the ways people state it, in English, Chinese and both at
once, terse, casual, formal and buried in long briefs, with the checks each must give and no
other. A row with no check is content that looks like a requirement ("a story about 100
dogs", "write about the word 'never'"); those keep the pre-pass's precision."""

from __future__ import annotations

import json

import pytest

from bench.checks_extraction import PHRASINGS, key, load, score
from rubrics.checks import Check
from rubrics.checks.prepass import prepass

ROWS = load(PHRASINGS)
# rows whose labels the pre-pass does not meet yet, each with the reading it would need
KNOWN_MISSES: dict[str, str] = {}


def keys(checks: list[Check]) -> list[tuple[str, str]]:
    # as the bench matches them: a label keeps a JSON Schema as the request writes it
    return sorted({key(c) for c in checks})


@pytest.mark.parametrize("row", [
    pytest.param(row, marks=pytest.mark.xfail(reason=KNOWN_MISSES[row["id"]], strict=True))
    if row["id"] in KNOWN_MISSES else row for row in ROWS], ids=[row["id"] for row in ROWS])
def test_each_request_gives_its_checks_and_no_other(row):
    wanted = [Check(kind=c["kind"], params=c["params"], source="user") for c in row["checks"]]
    assert keys(list(prepass(row["query"]))) == keys(wanted), row["query"]


def test_the_set_is_broad_and_keeps_negatives():
    """Every family of kinds has rows in both languages' style, and a fair share of rows ask
    for nothing code can verify."""
    kinds = {c["kind"] for row in ROWS for c in row["checks"]}
    assert len(ROWS) >= 150 and sum(1 for row in ROWS if not row["checks"]) >= 40
    assert {"en", "zh"} <= {row["language"] for row in ROWS} <= {"en", "zh", "mixed"}
    assert kinds >= {"language", "lowercase", "uppercase", "capital_word_count", "ends_with",
                     "starts_with", "quoted", "title", "postscript", "placeholder_count",
                     "highlight_count", "keyword", "forbidden_word", "no_commas",
                     "paragraph_count", "section_count", "word_count", "char_count",
                     "sentence_count", "bullet_count", "numbered_count", "heading_count",
                     "json", "letter_frequency"}


def test_every_quote_is_words_of_the_request():
    for row in ROWS:
        for check in prepass(row["query"]):
            assert check.quote and check.quote in " ".join(row["query"].split()), row["id"]


def test_scored_as_a_whole_it_keeps_its_floor():
    figures = score(ROWS, lambda row: prepass(row["query"]))["all"]
    assert figures["recall"] >= 0.95 and figures["precision"] >= 0.95, json.dumps(figures)

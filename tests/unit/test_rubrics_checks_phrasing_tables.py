"""The phrasing tables (`rubrics.checks.phrasings`): every row reads its example as its kind and
does not read its counter-example (a near miss) as that kind; the pre-pass runs exactly the
tables' rows (those read by name after the others); and every kind the pre-pass reads from
words has a row in some table."""

from __future__ import annotations

import re

import pytest

from rubrics.checks.kinds import KINDS
from rubrics.checks.phrasings import MODULES, NAMED, RULES
from rubrics.checks.phrasings.shared import Phrasing

# the modules read by name run after the others, where these read none of their kinds
NAMED_MODULES = tuple(module for _, module in NAMED)
ROWS = [(module.__name__.rsplit(".", 1)[1], index, table.flags, row)
        for module in (*MODULES, *NAMED_MODULES) for table in module.TABLES
        for index, row in enumerate(table.rows)]
IDS = [f"{name}-{row.kind}-{index}" for name, index, _, row in ROWS]
# read by the pre-pass's own code, not by a row: a JSON Schema spelled out in the request
NOT_FROM_ROWS = {"json_schema"}


@pytest.mark.parametrize(("name", "index", "flags", "row"), ROWS, ids=IDS)
def test_a_row_reads_its_example_as_its_kind(name: str, index: int, flags: int,
                                             row: Phrasing) -> None:
    assert row.kind in row.kinds(row.example, flags), row.example


@pytest.mark.parametrize(("name", "index", "flags", "row"), ROWS, ids=IDS)
def test_a_row_does_not_read_its_counter_example(name: str, index: int, flags: int,
                                                row: Phrasing) -> None:
    assert row.kind not in row.kinds(row.counter, flags), row.counter
    assert row.counter != row.example


def test_the_pre_pass_runs_exactly_the_tables_rows() -> None:
    # a compiled regex's `pattern` is its text; a gated one's is the compiled regex
    patterns = [m.pattern if isinstance(m.pattern, str) else m.pattern.pattern
                for m, _ in (*RULES, *(rule for module in NAMED_MODULES
                                        for rule in module.RULES))]  # type: ignore[attr-defined]
    assert patterns == [row.pattern for _, _, _, row in ROWS]


def test_every_kind_read_from_words_has_a_row() -> None:
    kinds = {row.kind for _, _, _, row in ROWS}
    assert set(KINDS) - NOT_FROM_ROWS <= kinds, sorted(set(KINDS) - NOT_FROM_ROWS - kinds)
    assert kinds <= set(KINDS)


def test_a_row_compiles_with_its_tables_flags() -> None:
    for _, _, flags, row in ROWS:
        assert re.compile(row.pattern, flags)

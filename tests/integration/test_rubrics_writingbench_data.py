"""Round-trip on every record of the upstream WritingBench files, and the pack built from them.

A maintenance check, run when the pack is rebuilt: the upstream files live outside the
repository, so these tests read the folder named by REDRAFT_WRITINGBENCH_DIR and skip without
it (the suite never depends on files outside the repository). The pack in the repository is
checked on its own by tests/unit/test_rubrics_packs.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rubrics.build_pack import RELEASES, main
from rubrics.packs import PackLibrary
from rubrics.writingbench import from_writingbench, record_criteria, to_writingbench

REPO = Path(__file__).resolve().parents[2]
SOURCE = Path(os.environ.get("REDRAFT_WRITINGBENCH_DIR", "/nonexistent"))
PACK = REPO / "rubrics/packs/writingbench/writingbench.jsonl"


def _files() -> list[Path]:
    found = sorted(p for folder in RELEASES for p in (SOURCE / folder).rglob("*.jsonl"))
    if not found:
        pytest.skip("set REDRAFT_WRITINGBENCH_DIR to the WritingBench data folder to run this")
    return found


def test_every_record_of_every_file_round_trips():
    library = PackLibrary()
    records = 0
    for path in _files():
        tag = RELEASES[path.relative_to(SOURCE).parts[0]]
        requirement = path.stem.removesuffix("_C").removesuffix("_subset")
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            criteria = record_criteria(record)
            exported = to_writingbench(from_writingbench(criteria))
            # Equal as text, so key order and every character survive too.
            assert json.dumps(exported, ensure_ascii=False) == json.dumps(
                criteria, ensure_ascii=False), (path, record["index"])
            entry = library.entry(f"writingbench:wb-{tag}-{record['index']}")
            assert entry.query == record["query"]
            if path.stem.endswith("_C"):
                assert entry.focus[requirement] == tuple(c["name"] for c in criteria)
            else:
                assert to_writingbench(entry.checklist) == criteria
            records += 1
    assert records == 2346


def test_build_pack_reproduces_the_committed_pack(tmp_path: Path):
    _files()
    out = tmp_path / "pack.jsonl"
    assert main([str(SOURCE), str(out)]) == 0
    assert out.read_bytes() == PACK.read_bytes()

"""Build the compact WritingBench pack from the benchmark's JSONL files.

    python -m rubrics.build_pack SRC_DIR OUT

SRC_DIR holds the release folders (`v1_2025-03-10/`, `current/`) as copied from upstream;
every `*_subset.jsonl` (all five criteria of a query) and `*_subset_C.jsonl` (the criteria
aimed at one requirement) under them is read. OUT gets one JSON line per distinct query:
`id` ("wb-v1-123"), `release`, `index`, `domain1`, `domain2`, `language` (en/zh by CJK
detection), `query`, `checklist` (our format) and `focus` (requirement -> names of the
criteria its `_C` file keeps, in that file's order).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from generation.conversation import detect_language
from rubrics.checklist import Checklist
from rubrics.writingbench import from_writingbench, record_criteria

# Release folder -> id tag. Index values are per release, so ids must say which one.
RELEASES = {"v1_2025-03-10": "v1", "current": "v2"}


def _records(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def build_entries(src: Path) -> list[dict[str, Any]]:
    entries: dict[tuple[str, int], dict[str, Any]] = {}
    focus: dict[tuple[str, int], dict[str, list[str]]] = {}
    for folder, tag in RELEASES.items():
        root = src / folder
        if not root.is_dir():
            raise SystemExit(f"{root} is missing: expected release folders {list(RELEASES)}")
        for path in sorted(root.rglob("*_subset*.jsonl")):
            requirement = path.stem.removesuffix("_C").removesuffix("_subset")
            for record in _records(path):
                key = (tag, int(record["index"]))
                criteria = record_criteria(record)
                if path.stem.endswith("_C"):
                    names = [c["name"] for c in criteria]
                    focus.setdefault(key, {})[requirement] = names
                    continue
                language = detect_language(record["query"]) or "en"
                checklist = from_writingbench(criteria, language=language)
                entry = {
                    "id": f"wb-{tag}-{key[1]}", "release": tag, "index": key[1],
                    "domain1": record["domain1"], "domain2": record["domain2"],
                    "language": language, "query": record["query"],
                    "checklist": _compact(checklist),
                }
                previous = entries.setdefault(key, entry)
                if previous != entry:
                    raise SystemExit(f"{path}: index {key[1]} differs from an earlier subset")
    for key, entry in entries.items():
        entry["focus"] = dict(sorted(focus.get(key, {}).items()))
    return [entries[k] for k in sorted(entries, key=lambda k: (k[0], k[1]))]


def _compact(checklist: Checklist) -> dict[str, Any]:
    # The entry carries language and the pack implies source; keep only what differs per entry.
    dims = checklist.model_dump(mode="json", include={"dimensions"})["dimensions"]
    for dim in dims:
        if dim["weight"] == 1.0:
            del dim["weight"]
        if not dim["rationale"]:
            del dim["rationale"]
    return {"dimensions": dims}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rubrics.build_pack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src", type=Path, help="folder holding the WritingBench release folders")
    parser.add_argument("out", type=Path, help="the pack file to write (JSONL)")
    args = parser.parse_args(argv)
    entries = build_entries(args.src)
    with args.out.open("w", encoding="utf-8", newline="\n") as f:
        for entry in entries:
            f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(entries)} entries to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

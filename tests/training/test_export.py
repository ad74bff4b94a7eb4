"""`export` on loops the app recorded against the fake writer: counts, splits, pairs, filters."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rubrics.checklist import from_json
from training.data.dataset import content_hash
from training.distill import main


def rows(directory: Path, kind: str, split: str) -> list[dict[str, Any]]:
    path = directory / kind / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_export_counts_splits_and_leaves_out_degraded_errored_passthrough(dataset_dir, recorded):
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    counts = manifest["counts"]
    # team-a: 6 prompts + a repeat + 3 copies (degraded, errored, reflection off)
    assert counts["loops_read"] == 10
    assert counts["left_out"] == {"degraded": 1, "passthrough": 1, "errored": 1, "filtered": 0,
                                  "dropped_task": 0, "cut_off": 0}
    assert counts["kept"] == 7 and counts["duplicates_merged"] == 1 and counts["prompts"] == 6
    assert counts["sft"] == {"train": 5, "holdout": 1}
    assert manifest["version"] == 1 and manifest["format"] == "chat"
    assert manifest["content_hash"] == content_hash(dataset_dir)
    assert manifest["filters"]["namespace"] == "team-a"

    train, holdout = rows(dataset_dir, "sft", "train"), rows(dataset_dir, "sft", "holdout")
    assert not {r["id"] for r in train} & {r["id"] for r in holdout}  # split by prompt
    for kind in ("prompts", "pairs"):  # a prompt's rows stay on the side of its sft row
        assert {r["id"] for r in rows(dataset_dir, kind, "holdout")} <= {r["id"] for r in holdout}
    left_out = set(recorded["variants"].values())
    assert not left_out & {r["loop_id"] for r in train + holdout}

    row = train[0]
    assert row["prompt"][-1]["role"] == "user"
    assert row["completion"][0]["role"] == "assistant"
    assert "(rev. " in row["completion"][0]["content"]  # y* is a rewrite, not the draft
    assert row["score"] >= 0.9  # the fake writer reaches the threshold after two rewrites


def test_prompt_rows_carry_the_stored_checklist_and_candidates(dataset_dir, recorded):
    from store import LoopRepository, make_engine, make_sessionmaker

    prompts = rows(dataset_dir, "prompts", "train") + rows(dataset_dir, "prompts", "holdout")
    assert len(prompts) == 6

    async def stored(loop_id: str) -> Any:
        engine = make_engine(recorded["url"])
        try:
            return await LoopRepository(make_sessionmaker(engine)).get(loop_id)
        finally:
            await engine.dispose()

    for row in prompts:
        record = asyncio.run(stored(row["loop_id"]))
        assert row["checklist"] == record.checklist
        assert from_json(row["checklist"]).dimensions  # what the reward will parse
        assert [c["position"] for c in row["candidates"]] == sorted(
            c.position for c in record.candidates)
        assert row["reference_score"] == max(c.total_score for c in record.candidates)
        assert row["candidates"][0]["kind"] == "draft"


def test_pairs_need_the_min_gain_and_duplicates_keep_the_best(dataset_dir, recorded, tmp_path):
    pairs = rows(dataset_dir, "pairs", "train") + rows(dataset_dir, "pairs", "holdout")
    assert len(pairs) == 6  # every kept loop improved on its draft by at least 0.1
    for pair in pairs:
        assert pair["chosen_score"] - pair["rejected_score"] >= 0.1
        assert pair["chosen"][0]["content"] != pair["rejected"][0]["content"]

    out = tmp_path / "strict"
    assert main(["export", "--database", recorded["url"], "--out", str(out),
                 "--min-gain", "0.9", "--namespace", "team-a"]) == 0
    assert rows(out, "pairs", "train") == [] and rows(out, "pairs", "holdout") == []


def test_filters_namespace_model_time_and_score(recorded, tmp_path, capsys):
    out = tmp_path / "team-b"
    assert main(["export", "--database", recorded["url"], "--out", str(out),
                 "--namespace", "team-b", "--holdout", "0"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["loops_read"] == 1 and manifest["counts"]["sft"] == {
        "train": 1, "holdout": 0}

    capsys.readouterr()
    for args in (["--model", "no-such-model"], ["--since", "2999-01-01"],
                 ["--until", "2000-01-01"], ["--namespace", "nobody"]):
        target = tmp_path / "none"
        code = main(["export", "--database", recorded["url"], "--out", str(target), *args])
        assert code == 2, args
        assert "no loops match the filters" in capsys.readouterr().err
        assert not target.exists() and not Path(str(target) + ".partial").exists()


def test_database_defaults_to_the_servers_setting(recorded, tmp_path, monkeypatch):
    monkeypatch.delenv("REDRAFT_DATABASE_URL", raising=False)
    monkeypatch.setenv("REDRAFT_DATA_DIR", str(recorded["data_dir"]))
    out = tmp_path / "default"
    assert main(["export", "--out", str(out), "--namespace", "team-a"]) == 0
    assert json.loads((out / "manifest.json").read_text())["counts"]["prompts"] == 6
    monkeypatch.setenv("REDRAFT_DATABASE_URL", recorded["url"])
    monkeypatch.setenv("REDRAFT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert main(["export", "--out", str(tmp_path / "env"), "--namespace", "team-b"]) == 0


@pytest.mark.postgres
async def test_export_reads_postgresql(recorded, postgres_schema_url, tmp_path):
    from store import LoopRepository, make_engine, make_sessionmaker
    from store.migrate import upgrade

    source = make_engine(recorded["url"])
    target = make_engine(postgres_schema_url)
    try:
        await upgrade(target)
        page, _ = await LoopRepository(make_sessionmaker(source)).list(limit=100)
        records = await LoopRepository(make_sessionmaker(source)).get_many([s.id for s in page])
        await LoopRepository(make_sessionmaker(target)).save_many(records)
    finally:
        await source.dispose()
        await target.dispose()
    out = tmp_path / "pg"
    code = await asyncio.to_thread(main, ["export", "--database", postgres_schema_url,
                                          "--out", str(out), "--namespace", "team-a",
                                          "--holdout", "0.2"])
    assert code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["left_out"]["degraded"] == 1 and manifest["counts"]["prompts"] == 6
    assert "postgresql" in manifest["source_database"]

"""bench.checks_extraction: one JSON line, pre-pass figures, and the agent path end to end
against the fake upstream."""

from __future__ import annotations

import json

from bench.checks_extraction import main, score
from bench.fakes.upstream import run_subprocess
from rubrics.checks import Check


def test_scoring_matches_kind_and_params_once():
    rows = [{"id": "a", "language": "en", "query": "q", "checks": [
        {"kind": "lowercase", "params": {}},
        {"kind": "word_count", "params": {"relation": "at least", "n": 5}}]}]
    found = [Check(kind="lowercase", params={}), Check(kind="lowercase", params={}),
             Check(kind="word_count", params={"relation": "at least", "n": 6})]
    figures = score(rows, lambda row: found)
    assert figures["all"] == {"recall": 0.5, "precision": 0.5, "matched": 1, "labels": 2,
                              "found": 2, "queries": 1}


def test_prints_one_json_line_with_agent_figures(capsys):
    with run_subprocess() as fake:
        main(["--agent-url", fake.base_url, "--agent-model", "fake", "--limit", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert report["queries"] >= 60 and set(report["prepass"]) == {"all", "en", "zh"}
    assert report["agent"]["all"]["queries"] == 3
    assert set(report["agent"]["added_by_agent"]) >= {"recall", "precision"}


def test_reports_the_short_requests_next_to_the_prepass(capsys):
    main([])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert set(report["short"]) == {"all", "en", "zh"}
    assert report["short"]["all"]["queries"] == 36
    assert report["short"]["all"]["recall"] >= 0.95
    assert report["short"]["all"]["precision"] >= 0.95


def test_reports_the_held_out_queries_next_to_the_development_ones(capsys):
    main([])
    report = json.loads(capsys.readouterr().out)
    assert report["heldout"]["queries"] >= 30
    assert set(report["heldout"]["prepass"]) == {"all", "en", "zh"}
    assert "agent" not in report


def test_reports_the_second_held_out_set_next_to_the_first(capsys):
    main([])
    report = json.loads(capsys.readouterr().out)
    assert report["heldout2"]["data"] == "writingbench_checks_heldout2.jsonl"
    assert report["heldout2"]["queries"] >= 40
    assert set(report["heldout2"]["prepass"]) == {"all", "en", "zh"}

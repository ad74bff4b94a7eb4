"""bench.checks_extraction: one JSON line, pre-pass figures, and the agent path end to end
against the fake upstream."""

from __future__ import annotations

import json

from bench.checks_extraction import kind_score, main, score
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


def test_a_json_schema_matches_its_label_as_parsed_json_not_as_text():
    label = '{"type": "object",\n  "properties": {"name": {"type": "string"}}}'
    rows = [{"id": "a", "language": "en", "query": "q", "checks": [
        {"kind": "json_schema", "params": {"schema": label}}]}]
    same = Check(kind="json_schema", params={
        "schema": '{"properties":{"name":{"type":"string"}},"type":"object"}'})
    other = Check(kind="json_schema", params={
        "schema": '{"properties": {"name": {"type": "integer"}}, "type": "object"}'})
    assert score(rows, lambda row: [same])["all"]["matched"] == 1
    assert kind_score(rows, lambda row: [same])["all"]["param_accuracy"] == 1.0
    assert score(rows, lambda row: [other])["all"]["matched"] == 0
    assert kind_score(rows, lambda row: [other])["all"]["param_accuracy"] == 0.0


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


def test_kind_level_scoring_pairs_one_to_one_and_measures_params():
    from bench.checks_extraction import kind_score

    rows = [
        {"id": "a", "language": "en", "query": "q", "checks": [
            {"kind": "forbidden_word", "params": {"word": "x"}},
            {"kind": "forbidden_word", "params": {"word": "y"}},
            {"kind": "word_count", "params": {"relation": "at least", "n": 5}}]},
        {"id": "b", "language": "en", "query": "q", "checks": []},
        {"id": "c", "language": "zh", "query": "q", "checks": [{"kind": "title", "params": {}}]},
    ]
    found = {
        "a": [Check(kind="forbidden_word", params={"word": "x"}),
              Check(kind="forbidden_word", params={"word": "x"}),   # a repeat counts once
              Check(kind="forbidden_word", params={"word": "z"}),
              Check(kind="forbidden_word", params={"word": "w"}),
              Check(kind="word_count", params={"relation": "at least", "n": 6})],
        "b": [Check(kind="lowercase", params={})],                  # no label of its kind
        "c": [],
    }
    figures = kind_score(rows, lambda row: found[row["id"]])
    # kind-level pairs: 2 forbidden_word (3 found, 2 labels) + 1 word_count; 1 exact
    assert figures["all"] == {"recall": 0.75, "precision": 0.6, "param_accuracy": 0.333,
                              "exact_recall": 0.25, "exact_precision": 0.2,
                              "kind_matched": 3, "exact_matched": 1, "labels": 4, "found": 5}
    per = figures["per_kind"]
    assert (per["forbidden_word"]["recall"], per["forbidden_word"]["precision"],
            per["forbidden_word"]["param_accuracy"]) == (1.0, 0.667, 0.5)
    assert per["word_count"]["param_accuracy"] == 0.0 and per["word_count"]["recall"] == 1.0
    assert per["lowercase"]["precision"] == 0.0 and per["lowercase"]["param_accuracy"] is None
    assert per["title"]["recall"] == 0.0 and per["title"]["found"] == 0


def test_reports_the_out_of_source_set_at_kind_level(capsys, tmp_path):
    data = tmp_path / "oos.jsonl"
    data.write_text(json.dumps({"id": "t", "language": "en", "style": "terse",
                                "query": "Write about tea. Use only lowercase letters.",
                                "checks": [{"kind": "lowercase", "params": {}}]}) + "\n",
                    "utf-8")
    main(["--outofsource", str(data)])
    report = json.loads(capsys.readouterr().out)
    oos = report["outofsource"]
    assert oos["data"] == "oos.jsonl" and oos["queries"] == 1
    assert set(oos["prepass"]) == {"all", "en"}
    assert set(oos["kind_level"]) == {"all", "per_kind", "languages"}
    assert oos["kind_level"]["all"]["labels"] == 1
    assert {"recall", "precision", "param_accuracy", "exact_recall",
            "exact_precision"} <= set(oos["kind_level"]["all"])

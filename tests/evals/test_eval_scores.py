"""Scores, tables, figures and comparisons from hand-built result lines (no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.cli import main as eval_main
from evals.compare import compare, paired_bootstrap
from evals.queries import DOMAINS, load_queries, select
from evals.summary import scores
from evals.table import SCORE_COLUMNS

STYLE = ("Tone", "Voice")
FORMAT = ("Layout",)


def row(qid: str, variant: str, crit: dict[str, int] | None, *, domain: int = 1,
        focus: dict[str, list[str]] | None = None, rounds: int = 1, stop: str = "threshold",
        tokens: int = 100, language: str = "en") -> dict:
    method = variant.split()[0]
    return {"query_id": qid, "variant": variant, "method": method,
            "max_rounds": None if method == "direct" else 3,
            "threshold": None if method == "direct" else 0.9, "language": language,
            "domain1": DOMAINS[domain - 1], "domain2": "x", "focus": focus or {},
            "answer": "text", "loop_id": None if method == "direct" else qid * 2,
            "rounds": rounds, "stop_reason": stop, "hidden_calls": 4, "latency_s": 1.0,
            "usage": {"prompt_tokens": tokens // 2, "completion_tokens": tokens // 2,
                      "total_tokens": tokens},
            "scores": crit, "score": None if crit is None else sum(crit.values()) / len(crit) / 10,
            "judge": {"calls": 5, "prompt_tokens": 10, "completion_tokens": 2, "seconds": 0.1,
                      "attempts": 1, "error": None},
            "status": "ok" if crit else "judge_missing"}


def crit(tone: int, voice: int, layout: int, a: int = 5, b: int = 5) -> dict[str, int]:
    return {"Tone": tone, "Voice": voice, "Layout": layout, "A": a, "B": b}


def test_r_and_c_use_the_tagged_queries_and_criteria() -> None:
    rows = [
        row("1", "mrpo", crit(10, 8, 2), domain=1, focus={"style": list(STYLE)}),
        row("2", "mrpo", crit(4, 4, 10), domain=2, focus={"format": list(FORMAT)}),
        row("3", "mrpo", crit(6, 6, 6, 6, 6), domain=2,
            focus={"style": ["Tone"], "format": list(FORMAT)}, language="zh"),
        row("4", "mrpo", crit(1, 1, 1, 1, 1), domain=3),  # no requirement
        row("5", "mrpo", None, domain=3, focus={"style": list(STYLE)}),  # judge failed
    ]
    s = scores(rows)
    q1, q2, q3, q4 = 0.6, 0.56, 0.6, 0.1
    assert s["overall"] == pytest.approx((q1 + q2 + q3 + q4) / 4)
    assert s["domains"]["D1"] == pytest.approx(q1)
    assert s["domains"]["D2"] == pytest.approx((q2 + q3) / 2)
    assert s["domains"]["D3"] == pytest.approx(q4)  # the missing query counts nowhere
    assert s["domains"]["D4"] is None
    assert s["languages"] == {"en": pytest.approx((q1 + q2 + q4) / 3), "zh": pytest.approx(q3)}
    style, fmt, length = (s["requirements"][f] for f in ("style", "format", "length"))
    assert style["R"] == pytest.approx((q1 + q3) / 2) and style["n"] == 2
    assert style["C"] == pytest.approx(((10 + 8) / 2 / 10 + 6 / 10) / 2)  # Tone+Voice; Tone
    assert fmt["R"] == pytest.approx((q2 + q3) / 2)
    assert fmt["C"] == pytest.approx((1.0 + 0.6) / 2)  # only Layout
    assert length == {"R": None, "C": None, "n": 0}


def test_pack_keeps_domains_focus_and_criterion_names() -> None:
    queries = load_queries()
    assert len(queries) == 940
    assert {q.domain1 for q in queries} == set(DOMAINS)
    tagged = [q for q in queries if q.focus]
    assert len(tagged) == 940
    for q in tagged:  # every C criterion is one of the query's five criteria
        assert set(q.focus) <= {"style", "format", "length"}
        for names in q.focus.values():
            assert names and set(names) <= set(q.criteria)
    zh = select(queries, language="zh", domain="d4", sample=5, seed=1)
    assert len(zh) == 5 and {(q.language, q.domain1) for q in zh} == {("zh", DOMAINS[3])}
    assert zh == select(queries, language="zh", domain="Literature & Arts", sample=5, seed=1)


def write_run(out: Path, rows: list[dict], variants: list[dict], model: str = "m") -> Path:
    out.mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({
        "options": {"model": model, "judge_model": "j"}, "redraft_version": "0.1.0",
        "queries": sorted({r["query_id"] for r in rows}), "variants": variants}))
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def variant(key: str, rounds: int | None = 3, threshold: float | None = 0.9) -> dict:
    return {"key": key, "method": key.split()[0], "max_rounds": rounds, "threshold": threshold}


def sweep_rows() -> tuple[list[dict], list[dict]]:
    vs, rows = [variant("direct", None, None)], []
    for t in (0, 1, 3):
        for tau in (0.8, 0.9):
            key = f"mrpo T={t} tau={tau:g}"
            vs.append({**variant(key), "max_rounds": t, "threshold": tau})
    for i in range(12):
        domain, q = i % 6 + 1, str(i)
        focus = {"style": ["Tone"]} if i % 2 else {"length": ["Layout"]}
        rows.append(row(q, "direct", crit(5, 5, 5), domain=domain, focus=focus, rounds=0,
                        stop="skipped"))
        for v in vs[1:]:
            t = v["max_rounds"]
            rows.append({**row(q, v["key"], crit(5 + t, 5 + t, 6, 5 + t // 2), domain=domain,
                               focus=focus, rounds=min(t, i % 3)), "max_rounds": t,
                         "threshold": v["threshold"]})
    return rows, vs


def test_report_renders_table_and_figures(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows, vs = sweep_rows()
    out = write_run(tmp_path / "run", rows, vs)
    assert eval_main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    table = (out / "table.md").read_text()
    assert printed.startswith(table)
    score_lines = [line for line in table.splitlines() if line.startswith("| ")][:1 + len(vs)]
    assert score_lines[0] == "| " + " | ".join(("Method", *SCORE_COLUMNS)) + " |"
    assert [line.split(" | ")[0] for line in score_lines[1:]] == [
        "| Direct answering", *(f"| MRPO (generated checklist), T={v['max_rounds']}, "
                                f"τ={v['threshold']:g}" for v in vs[1:])]
    assert all(line.count("|") == len(SCORE_COLUMNS) + 2 for line in score_lines)
    assert score_lines[1].startswith("| Direct answering | 5.00 | 5.00 |")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["figures"] == ["radar.png", "rounds.png", "sweep_max_rounds.png",
                                  "sweep_threshold.png"]
    for name in summary["figures"]:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_compare_gives_paired_differences_with_an_interval(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    before_rows = [row(str(i), "mrpo", crit(5, 5, 5), rounds=3, tokens=300) for i in range(20)]
    after_rows = [row(str(i), "mrpo", crit(6 + i % 2, 6, 6), rounds=1, tokens=150)
                  for i in range(20)]
    before = write_run(tmp_path / "before", before_rows, [variant("mrpo")], model="base")
    after = write_run(tmp_path / "after", after_rows, [variant("mrpo")], model="distilled")
    result = compare(before, after)["variants"]["mrpo"]
    assert result["pairs"] == 20
    assert result["diff"] == pytest.approx(0.07)  # 5.0 -> 5.6 or 5.8 on the 1-10 scale
    low, high = result["ci95"]
    assert 0 < low <= result["diff"] <= high
    assert (result["rounds_before"], result["rounds_after"]) == (3, 1)
    assert (result["tokens_before"], result["tokens_after"]) == (300, 150)
    assert eval_main(["--compare", str(before), str(after)]) == 0
    assert "| mrpo | 20 | 5.00 | 5.70 | +0.70 |" in capsys.readouterr().out


def test_bootstrap_interval_covers_zero_for_noise() -> None:
    before = [0.5, 0.6, 0.7, 0.4, 0.5, 0.6]
    after = [0.6, 0.5, 0.7, 0.5, 0.4, 0.6]
    diff, low, high = paired_bootstrap(before, after)
    assert diff == pytest.approx(0.0) and low < 0 < high


@pytest.mark.parametrize("argv, message", [
    (["--server", "http://x/v1", "--model", "m", "--judge-url", "http://j/v1",
      "--judge-model", "j", "--methods", "direct,best"], "unknown method"),
    (["--server", "http://x/v1", "--model", "m", "--judge-url", "http://j/v1",
      "--judge-model", "j", "--max-rounds", "3,eleven"], "--max-rounds takes"),
    (["--server", "http://x/v1", "--model", "m", "--judge-url", "http://j/v1",
      "--judge-model", "j", "--threshold", "1.5"], "within 0..1"),
    (["--server", "http://x/v1", "--model", "m", "--judge-url", "http://j/v1",
      "--judge-model", "j", "--domain", "D9"], "unknown --domain"),
    (["--server", "http://127.0.0.1:9/v1", "--model", "m", "--judge-url", "http://j/v1",
      "--judge-model", "j", "--limit", "1"], "cannot reach the server"),
    (["--model", "m"], "required: --server, --judge-url, --judge-model"),
    (["report", "/nonexistent/run"], "not a directory"),
])
def test_bad_input_exits_2_with_a_clear_message(argv: list[str], message: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    if argv[0] != "report":
        argv = [*argv, "--out", str(tmp_path / "out"), "--quiet"]
    try:
        code = eval_main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out" / "results.jsonl").exists()  # nothing half-written



def test_missing_eval_extra_is_named_with_the_install_command(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert eval_main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "matplotlib not installed" in err and "redraft[eval]" in err


WORDS_5 = {"kind": "word_count", "params": {"relation": "at least", "n": 5, "upper": None},
           "quote": "five words at least", "source": "agent"}
WORDS_9 = {**WORDS_5, "params": {"relation": "at most", "n": 9, "upper": None}}


def checked(qid: str, variant_key: str, answer: str, loop_checks: list | None = None) -> dict:
    return {**row(qid, variant_key, crit(5, 5, 5)), "answer": answer, "loop_checks": loop_checks}


def checks_run(tmp_path: Path) -> Path:
    """Query 1: two checks (from its mrpo loop); query 2: one; query 3: none anywhere."""
    rows = [
        checked("1", "direct", "one two three"),                          # 5+ fails, <=9 ok
        checked("1", "mrpo", "one two three four five", [WORDS_5, WORDS_9]),  # both pass
        checked("2", "direct", "a b c d e f"),
        checked("2", "mrpo", "a b", [WORDS_5, {"kind": "from_the_future", "params": {}}]),
        checked("3", "direct", "x"), checked("3", "mrpo", "x", []),
    ]
    return write_run(tmp_path / "checks", rows, [variant("direct", None, None),
                                                 variant("mrpo")])


def test_check_pass_rates_per_method_beside_the_scores(tmp_path: Path) -> None:
    out = checks_run(tmp_path)
    assert eval_main(["report", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    direct, mrpo = summary["variants"]
    # Every method of a query is held to the checks its loop returned.
    assert direct["checks"] == {"prompt_level": 0.5, "check_level": pytest.approx(2 / 3, abs=1e-4),
                                "queries": 2, "checks": 3, "sources": {"loop": 2}}
    assert mrpo["checks"]["prompt_level"] == 0.5 and mrpo["checks"]["check_level"] == \
        pytest.approx(2 / 3, abs=1e-4)
    table = (out / "table.md").read_text()
    direct_line = next(x for x in table.splitlines() if x.startswith("| Direct answering"))
    assert direct_line.endswith("| 50% | 67% |")


def test_without_checks_the_columns_say_n_a(tmp_path: Path) -> None:
    rows = [checked("1", "mrpo", "text", None), checked("2", "mrpo", "text", [])]
    out = write_run(tmp_path / "none", rows, [variant("mrpo")])
    assert eval_main(["report", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["variants"][0]["checks"]["prompt_level"] is None
    line = next(x for x in (out / "table.md").read_text().splitlines()
                if x.startswith("| MRPO"))
    assert line.endswith("| n/a | n/a |")


def test_the_prepass_gives_a_writingbench_querys_checks(tmp_path: Path, monkeypatch) -> None:
    import evals.summary
    from evals.summary import query_checks
    from rubrics.checks import Check

    seen = []

    def prepass(text: str) -> list[Check]:
        seen.append(text)
        return [Check.model_validate(WORDS_9)]

    monkeypatch.setattr(evals.summary, "prepass", prepass)
    qid = load_queries()[0].id
    found = query_checks([checked(qid, "mrpo", "a", [WORDS_5]), checked("x", "mrpo", "a",
                                                                        [WORDS_5])])
    assert found[qid][0] == "prepass" and found[qid][1][0].params["relation"] == "at most"
    assert seen == [load_queries()[0].query]
    assert found["x"][0] == "loop"  # not a WritingBench query: the loop's checks


def test_compare_reports_the_check_pass_rates(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    before = write_run(tmp_path / "before", [
        checked("1", "mrpo", "one two", [WORDS_5]), checked("2", "mrpo", "a b c d e f g")],
        [variant("mrpo")])
    after = write_run(tmp_path / "after", [
        checked("1", "mrpo", "one two three four five"),
        checked("2", "mrpo", "a b c d e f g", [WORDS_5])], [variant("mrpo")])
    result = compare(before, after)["variants"]["mrpo"]
    assert result["checks_before"] == {"prompt_level": 0.5, "check_level": 0.5}
    assert result["checks_after"] == {"prompt_level": 1.0, "check_level": 1.0}
    assert eval_main(["--compare", str(before), str(after)]) == 0
    assert "| 50% → 100% | 50% → 100% |" in capsys.readouterr().out


def test_server_url_with_or_without_v1() -> None:
    from evals.runner import api_base

    for given in ("http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/"):
        assert api_base(given) == "http://h:8000/v1"


def test_radar_omits_axes_without_data() -> None:
    from evals.figures import AXES, radar_axes

    rows, vs = sweep_rows()
    summary = json.loads(json.dumps({"variants": [
        {**v, "scores": scores([r for r in rows if r["variant"] == v["key"]])}
        for v in vs[:2]]}))
    summary["variants"][1]["scores"]["domains"]["D3"] = None  # one method lacks D3
    for v in summary["variants"]:
        v["scores"]["requirements"]["format"]["R"] = None      # no method has format data
    axes, values = radar_axes(summary["variants"])
    assert "R2 format" not in axes and len(axes) == len(AXES) - 1
    assert values[1][axes.index("D3")] is None and values[0][axes.index("D3")] is not None
    assert all(v is not None for v in values[0])

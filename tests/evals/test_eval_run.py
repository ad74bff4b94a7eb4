"""`redraft eval` end to end: the server in a subprocess, the writer fake as upstream and judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main as redraft
from bench.fakes.upstream import FakeUpstream, run_in_thread
from evals.results import read_results
from evals.table import COST_COLUMNS, SCORE_COLUMNS
from tests.e2e.conftest import Fake, Server
from tests.evals.conftest import eval_args

METHODS = ("direct", "holistic", "mrpo", "mrpo-human")


def lines(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def full_run(eval_server: Server, eval_writer: Fake,
             tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    code = redraft(["eval", *eval_args(eval_server, eval_writer.base_url, out,
                                       "--limit", "3", "--max-rounds", "3")])
    assert code == 0
    return out


def test_every_method_answers_and_is_scored(full_run: Path) -> None:
    rows = lines(full_run)
    assert sorted((r["query_id"], r["method"]) for r in rows) == sorted(
        (q, m) for q in ("wb-v1-1", "wb-v1-2", "wb-v1-3") for m in METHODS)
    for row in rows:
        assert row["status"] == "ok", row
        assert row["answer"] and row["latency_s"] > 0 and row["usage"]["total_tokens"] > 0
        assert len(row["scores"]) == 5 and all(1 <= s <= 10 for s in row["scores"].values())
        assert row["score"] == pytest.approx(sum(row["scores"].values()) / 50)
        assert row["judge"]["calls"] == 5 and row["judge"]["error"] is None
    for row in rows:
        if row["method"] == "direct":
            assert row["loop_id"] is None and row["hidden_calls"] == 1
            assert row["stop_reason"] == "skipped" and row["rounds"] == 0
        else:
            assert len(row["loop_id"]) == 32 and row["hidden_calls"] > 1
            assert row["max_rounds"] == 3 and row["threshold"] == 0.9
    # The holistic loop: the fake judge's 6/10 -> 8/10 -> 10/10, so two rounds to tau, and
    # the rewritten answer scores higher with the WritingBench judge than the direct one.
    holistic = [r for r in rows if r["method"] == "holistic"]
    direct = {r["query_id"]: r["score"] for r in rows if r["method"] == "direct"}
    assert {(r["stop_reason"], r["rounds"]) for r in holistic} == {("threshold", 2)}
    assert all(r["score"] > direct[r["query_id"]] for r in holistic)
    assert all(r["stage_usage"]["checklist"]["calls"] == 0 for r in holistic)


def test_summary_table_and_figures(full_run: Path) -> None:
    summary = json.loads((full_run / "summary.json").read_text())
    assert summary["options"]["model"] == "fake-model"
    assert summary["options"]["methods"] == list(METHODS)
    assert "api_key" not in summary["options"] and summary["redraft_version"]
    assert [v["method"] for v in summary["variants"]] == list(METHODS)
    table = (full_run / "table.md").read_text()
    header = next(line for line in table.splitlines() if line.startswith("| Method | Overall"))
    assert header == "| " + " | ".join(("Method", *SCORE_COLUMNS)) + " |"
    assert any(line.startswith("| Method | " + " | ".join(COST_COLUMNS))
               for line in table.splitlines())
    for label in ("Direct answering", "LLM-as-a-Judge (holistic), T=3, τ=0.9",
                  "MRPO (generated checklist), T=3, τ=0.9",
                  "MRPO (human-curated criteria), T=3, τ=0.9"):
        assert sum(line.startswith(f"| {label} |") for line in table.splitlines()) == 2
    assert {p for p in summary["figures"]} == {"radar.png", "rounds.png"}
    assert (full_run / "radar.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resume_skips_finished_work(eval_server: Server, eval_writer: Fake,
                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = eval_args(eval_server, eval_writer.base_url, out, "--limit", "2",
                     "--methods", "direct,holistic", "--max-rounds", "2")
    assert redraft(["eval", *args]) == 0
    first = lines(out)
    eval_writer.reset()
    assert redraft(["eval", *args, "--resume"]) == 0
    assert eval_writer.chat_requests() == 0  # nothing asked of the server nor the judge
    # A run killed mid-way: the last line is lost (and one is torn); resume redoes just that.
    text = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(text[:-1]) + "\n" + text[-1][:20])
    assert redraft(["eval", *args, "--resume"]) == 0
    rows = read_results(out)
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows.values())
    redone = first[-1]["query_id"], first[-1]["variant"]
    assert rows[redone]["loop_id"] != first[-1]["loop_id"] or first[-1]["loop_id"] is None
    # Without --resume an existing run is never appended to.
    assert redraft(["eval", *args]) == 2


def test_failing_judge_is_recorded_missing_then_rejudged(
        eval_server: Server, eval_writer: Fake, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with run_in_thread(FakeUpstream(responder="writer")) as (judge_url, judge):
        args = eval_args(eval_server, judge_url, out, "--limit", "2", "--methods", "direct",
                         "--judge-attempts", "2")
        judge.fail(500, times=10_000)
        assert redraft(["eval", *args]) == 0
        rows = lines(out)
        assert [r["status"] for r in rows] == ["judge_missing"] * 2
        assert all(r["score"] is None and r["scores"] is None and r["answer"] for r in rows)
        assert all(r["judge"]["attempts"] == 2 and r["judge"]["error"] for r in rows)
        summary = json.loads((out / "summary.json").read_text())
        direct = summary["variants"][0]
        assert (direct["scored"], direct["judge_missing"]) == (0, 2)
        assert direct["scores"]["overall"] is None  # missing, never a score
        assert "| Direct answering | – |" in (out / "table.md").read_text()
        # The judge is back: --resume judges the stored answers without asking the server.
        judge.reset()
        eval_writer.reset()
        assert redraft(["eval", *args, "--resume"]) == 0
        assert judge.chat_requests == 10  # five criteria for each of the two answers
    assert eval_writer.chat_requests() == 0
    again = read_results(out)
    assert all(r["status"] == "ok" and r["score"] is not None for r in again.values())
    assert {r["answer"] for r in again.values()} == {r["answer"] for r in rows}


def test_holistic_with_a_checklist_is_a_400(eval_server: Server) -> None:
    import openai

    with eval_server.client() as client, pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "A haiku on rain."}],
            extra_body={"reflection": {"evaluation": "holistic",
                                       "checklist": "writingbench:wb-v1-1"}})
    assert err.value.body["param"] == "reflection.checklist"


def test_server_url_without_v1_and_loop_checks_from_the_trace(
        eval_server: Server, eval_writer: Fake, tmp_path: Path) -> None:
    out = tmp_path / "no-v1"
    args = eval_args(eval_server, eval_writer.base_url, out, "--limit", "1", "--methods",
                     "direct,mrpo", "--max-rounds", "1")
    assert eval_server.base_url.endswith("/v1")
    args[args.index("--server") + 1] = eval_server.base_url.removesuffix("/v1") + "/"
    assert redraft(["eval", *args]) == 0
    rows = {r["method"]: r for r in lines(out)}
    assert {r["status"] for r in rows.values()} == {"ok"}
    # The loop returned its checklist (this fake's has no checks); direct ran no loop.
    assert rows["mrpo"]["loop_checks"] == [] and rows["direct"]["loop_checks"] is None
    assert "trace" not in rows["mrpo"]
    summary = json.loads((out / "summary.json").read_text())
    assert [v["checks"]["prompt_level"] for v in summary["variants"]] == [None, None]

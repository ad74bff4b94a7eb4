"""The overhead benchmark's load generator: it counts answers, errors and latencies right."""

from __future__ import annotations

import orjson
import pytest

from bench.fakes.upstream import run_in_thread
from bench.harness.loadgen import api_url, percentile, request_body, run_load
from bench.overhead import TARGETS, _summary


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile([7.0], 99) == 7.0


async def test_load_against_a_healthy_upstream_counts_answers_and_no_errors() -> None:
    with run_in_thread() as (url, fake):
        figures = await run_load(url, concurrency=4, duration=0.4, warmup=0.1)
    assert figures["errors"] == 0
    assert figures["requests"] > 0
    assert figures["rps"] == pytest.approx(figures["requests"] / 0.4, rel=0.01)
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    # Warm-up answers are real requests the upstream saw, but they are not measured.
    assert fake.chat_requests >= figures["answered"] > figures["requests"]
    assert fake.bodies[-1]["messages"][-1]["role"] == "user"


async def test_streamed_load_reads_every_stream_to_done() -> None:
    with run_in_thread() as (url, fake):
        figures = await run_load(url, concurrency=2, duration=0.3, warmup=0.05, stream=True)
    assert figures["errors"] == 0 and figures["requests"] > 0
    assert 0 < figures["ttfb_p50_ms"] <= figures["p99_ms"]
    assert fake.bodies[-1]["stream"] is True


async def test_failed_answers_are_errors_not_latencies() -> None:
    with run_in_thread() as (url, fake):
        fake.fail(503, times=1_000_000)
        figures = await run_load(url, concurrency=2, duration=0.2, warmup=0.0)
    assert figures["errors"] > 0
    assert figures["requests"] == 0 and figures["rps"] == 0
    assert figures["first_error"] == "HTTP 503"


def _phase(rps: float, p50: float, errors: int = 0) -> dict:
    return {"rps": rps, "p50_ms": p50, "p99_ms": p50 * 2, "errors": errors}


def test_summary_compares_through_with_direct_against_the_targets() -> None:
    results = {"direct": {"c1": _phase(3000, 0.3), "c32": _phase(9000, 3.0)},
               "through": {"c1": _phase(900, 1.1), "c32": _phase(1200, 25.0)}}
    out = _summary(results, [1, 32])
    assert out["ratio_rps_c32"] == pytest.approx(1200 / 9000, abs=1e-3)
    assert out["added_p50_ms_c1"] == pytest.approx(0.8)
    assert out["targets"] == TARGETS
    assert out["met"] == {"rps_c32": True, "added_p50_ms_c1": True}

    results["through"]["c32"] = _phase(1200, 25.0, errors=3)  # fast but failing is not met
    results["through"]["c1"] = _phase(200, 4.0)
    assert _summary(results, [1, 32])["met"] == {"rps_c32": False, "added_p50_ms_c1": False}


def test_summary_sets_the_responses_route_beside_chat() -> None:
    results = {"direct": {"c32": _phase(9000, 3.0)}, "through": {"c32": _phase(1200, 25.0)},
               "through_responses": {"c32": _phase(1000, 30.0)}}
    out = _summary(results, [32])
    assert out["responses_vs_chat_rps_c32"] == pytest.approx(1000 / 1200, abs=1e-3)
    assert out["responses_added_p50_ms_c32"] == pytest.approx(27.0)
    assert out["met"]["responses_vs_chat_rps_c32"] is True
    results["through_responses"]["c32"] = _phase(900, 30.0)  # 75 % of chat's
    assert _summary(results, [32])["met"]["responses_vs_chat_rps_c32"] is False
    assert "responses_vs_chat_rps_c32" not in _summary(
        {k: v for k, v in results.items() if k != "through_responses"}, [32])


def test_the_responses_request_is_the_chat_request() -> None:
    chat = orjson.loads(request_body("m", True))
    responses = orjson.loads(request_body("m", True, "responses"))
    assert responses["instructions"] == chat["messages"][0]["content"]
    assert responses["input"] == chat["messages"][1]["content"]
    assert (responses["max_output_tokens"], responses["temperature"], responses["stream"]) == (
        chat["max_tokens"], chat["temperature"], True)
    assert api_url("http://h/v1/", "responses") == "http://h/v1/responses"
    assert api_url("http://h/v1/chat/completions", "chat") == "http://h/v1/chat/completions"

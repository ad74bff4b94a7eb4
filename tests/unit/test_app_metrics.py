from __future__ import annotations

import asyncio

import httpx
from fastapi import APIRouter, FastAPI
from fastapi.responses import StreamingResponse
from prometheus_client.parser import text_string_to_metric_families

from app.http.metrics import Metrics, MetricsMiddleware


def sample(metrics: Metrics, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(metrics.render()[0].decode()):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


def test_two_instances_do_not_share_a_registry():
    first, second = Metrics(), Metrics()  # would raise "Duplicated timeseries" if global
    first.count_error("rate_limit_error")
    assert sample(first, "redraft_errors_total", type="rate_limit_error") == 1
    assert sample(second, "redraft_errors_total", type="rate_limit_error") is None


def test_counters_and_histograms_render_in_prometheus_text():
    metrics = Metrics()
    metrics.observe_request("/v1/chat/completions", "POST", 200, 0.3)
    metrics.observe_request("/v1/chat/completions", "POST", 200, 0.7)
    metrics.observe_upstream("openai", "ok", 1.5)
    metrics.observe_upstream("openai", "timeout", 30.0)
    metrics.add_tokens(prompt=12, completion=30)
    metrics.add_tokens(prompt=3, completion=0)
    metrics.cache("hit")
    metrics.cache("miss")
    metrics.cache("hit")
    body, content_type = metrics.render()
    assert content_type.startswith("text/plain")
    assert b"# TYPE redraft_requests_total counter" in body

    route = {"route": "/v1/chat/completions"}
    assert sample(metrics, "redraft_requests_total", method="POST", status="200", **route) == 2
    assert sample(metrics, "redraft_request_duration_seconds_count", **route) == 2
    assert sample(metrics, "redraft_request_duration_seconds_sum", **route) == 1.0
    assert sample(metrics, "redraft_request_duration_seconds_bucket", le="0.5", **route) == 1
    assert sample(metrics, "redraft_upstream_calls_total", backend="openai", outcome="ok") == 1
    assert sample(metrics, "redraft_upstream_calls_total", backend="openai", outcome="timeout") == 1
    assert sample(metrics, "redraft_upstream_duration_seconds_count", backend="openai") == 2
    assert sample(metrics, "redraft_tokens_total", kind="prompt") == 15
    assert sample(metrics, "redraft_tokens_total", kind="completion") == 30
    assert sample(metrics, "redraft_checklist_cache_total", result="hit") == 2
    assert sample(metrics, "redraft_checklist_cache_total", result="miss") == 1
    assert sample(metrics, "redraft_in_flight_requests") == 0


def _app(metrics: Metrics, release: asyncio.Event) -> FastAPI:
    app = FastAPI()

    @app.get("/admin/loops/{loop_id}")
    async def loop(loop_id: str) -> dict:
        return {"id": loop_id}

    @app.get("/boom")
    async def boom() -> dict:
        raise RuntimeError("bug")

    @app.get("/stream")
    async def stream() -> StreamingResponse:
        async def chunks():
            yield b"data: 1\n\n"
            await release.wait()  # the response stays open until the test lets it end
            yield b"data: [DONE]\n\n"

        return StreamingResponse(chunks(), media_type="text/event-stream")

    sub = APIRouter()

    @sub.get("/items/{item_id}")
    async def item(item_id: int) -> dict:
        return {"id": item_id}

    inner = FastAPI()
    inner.include_router(sub)
    app.mount("/sub", inner)

    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return app


async def test_middleware_labels_by_route_template_and_bounds_cardinality():
    metrics = Metrics()
    app = _app(metrics, asyncio.Event())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for loop_id in ("a1", "b2", "c3"):
            assert (await client.get(f"/admin/loops/{loop_id}")).status_code == 200
        for n in range(5):
            assert (await client.get(f"/scan/{n}")).status_code == 404
        assert (await client.request("BREW", "/admin/loops/x")).status_code == 405
        assert (await client.get("/sub/items/7")).status_code == 200
        assert (await client.get("/boom")).status_code == 500

    loops = {"route": "/admin/loops/{loop_id}"}
    assert sample(metrics, "redraft_requests_total", method="GET", status="200", **loops) == 3
    assert sample(metrics, "redraft_requests_total", route="other", status="404") == 5
    assert sample(metrics, "redraft_requests_total", method="OTHER", status="405", **loops) == 1
    assert sample(metrics, "redraft_requests_total", route="/sub/items/{item_id}") == 1
    assert sample(metrics, "redraft_requests_total", route="/boom", status="500") == 1
    text = metrics.render()[0].decode()
    assert "a1" not in text and "/scan/" not in text and "BREW" not in text


async def test_streaming_response_is_timed_to_its_end_and_counted_in_flight():
    metrics = Metrics()
    release = asyncio.Event()
    app = _app(metrics, release)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:

        async def consume() -> str:
            return (await c.get("/stream")).text

        task = asyncio.create_task(consume())
        for _ in range(100):
            if sample(metrics, "redraft_in_flight_requests") == 1:
                break
            await asyncio.sleep(0.005)
        assert sample(metrics, "redraft_in_flight_requests") == 1
        assert sample(metrics, "redraft_requests_total", route="/stream") is None
        await asyncio.sleep(0.2)
        release.set()
        assert (await task).endswith("[DONE]\n\n")

    assert sample(metrics, "redraft_in_flight_requests") == 0
    assert sample(metrics, "redraft_requests_total", route="/stream", status="200") == 1
    assert sample(metrics, "redraft_request_duration_seconds_sum", route="/stream") >= 0.2

from __future__ import annotations

import httpx
from fastapi import FastAPI, Request
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.http.bodylimit import BodySizeLimit

LIMIT = 1000


class Body(BaseModel):
    text: str


def _echo_app() -> tuple[Starlette, list[int]]:
    seen: list[int] = []

    async def echo(request: Request) -> PlainTextResponse:
        body = await request.body()
        seen.append(len(body))
        return PlainTextResponse(f"got {len(body)}")

    return Starlette(routes=[Route("/echo", echo, methods=["POST"])]), seen


def _client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


async def _chunks(total: int, size: int = 100):
    for _ in range(total // size):
        yield b"x" * size


def _assert_openai_413(response: httpx.Response) -> None:
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "request_too_large"
    assert error["param"] is None
    assert str(LIMIT) in error["message"]


async def test_declared_length_over_limit_is_refused_before_the_app_runs():
    app, seen = _echo_app()
    async with _client(BodySizeLimit(app, LIMIT)) as client:
        response = await client.post("/echo", content=b"x" * (LIMIT + 1))
    _assert_openai_413(response)
    assert seen == []


async def test_bodies_within_the_limit_reach_the_app():
    app, seen = _echo_app()
    async with _client(BodySizeLimit(app, LIMIT)) as client:
        exact = await client.post("/echo", content=b"x" * LIMIT)
        chunked = await client.post("/echo", content=_chunks(LIMIT))
    assert exact.text == f"got {LIMIT}"
    assert chunked.text == f"got {LIMIT}"
    assert seen == [LIMIT, LIMIT]


async def test_chunked_body_growing_past_the_limit_is_refused():
    app, seen = _echo_app()
    async with _client(BodySizeLimit(app, LIMIT)) as client:
        response = await client.post("/echo", content=_chunks(5 * LIMIT))
    _assert_openai_413(response)
    assert seen == []


async def test_overflow_while_fastapi_parses_a_json_body_is_still_a_413():
    # FastAPI turns any error raised while reading a body into its own 400; the middleware
    # must answer before that can happen.
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(body: Body) -> dict:
        return {"n": len(body.text)}

    async def big_json():
        yield b'{"text": "'
        for _ in range(50):
            yield b"x" * 100
        yield b'"}'

    async with _client(BodySizeLimit(app, LIMIT)) as client:
        response = await client.post(
            "/v1/chat/completions", content=big_json(), headers={"content-type": "application/json"}
        )
        ok = await client.post("/v1/chat/completions", json={"text": "hi"})
    _assert_openai_413(response)
    assert ok.json() == {"n": 2}


async def test_app_errors_after_the_refusal_are_not_raised():
    async def app(scope, receive, send):
        while (await receive())["type"] == "http.request":
            pass
        raise RuntimeError("client went away")  # what a naive app does on disconnect

    async with _client(BodySizeLimit(app, LIMIT)) as client:
        response = await client.post("/echo", content=_chunks(5 * LIMIT))
    _assert_openai_413(response)


async def test_non_http_scopes_pass_through():
    calls = []

    async def app(scope, receive, send):
        calls.append(scope["type"])

    await BodySizeLimit(app, LIMIT)({"type": "lifespan"}, None, None)
    assert calls == ["lifespan"]

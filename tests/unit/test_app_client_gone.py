"""A client that disconnects cancels the work it started, and its request ends as a 499 (the
client left), never as a server error; a cancellation from elsewhere (a shutdown) still
cancels."""

from __future__ import annotations

import asyncio
import logging

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from app.openai.routing import serve
from app.openai.streaming import CLIENT_GONE, ClientGone, cancel_on_disconnect


def leaving_after(seconds: float):
    async def receive():
        await asyncio.sleep(seconds)
        return {"type": "http.disconnect"}
    return receive


def staying():
    async def receive():
        await asyncio.Event().wait()
    return receive


async def forever(started: list[str]) -> dict:
    started.append("work")
    try:
        await asyncio.Event().wait()
    finally:
        started.append("cancelled")
    return {}


def test_a_disconnect_cancels_the_work_and_says_the_client_left():
    started: list[str] = []

    async def main() -> None:
        with pytest.raises(ClientGone):
            await cancel_on_disconnect(leaving_after(0.01), forever(started))
        # the task itself is not left cancelling: it goes on to answer 499
        assert asyncio.current_task().cancelling() == 0
        await asyncio.sleep(0)

    asyncio.run(main())
    assert started == ["work", "cancelled"]


def test_a_shutdown_still_cancels_while_the_client_stays():
    started: list[str] = []

    async def request() -> None:
        await cancel_on_disconnect(staying(), forever(started))

    async def main() -> None:
        task = asyncio.ensure_future(request())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert started == ["work", "cancelled"]


def test_work_that_ends_first_is_answered():
    async def quick() -> dict:
        return {"ok": True}

    assert asyncio.run(cancel_on_disconnect(staying(), quick())) == {"ok": True}


class _Permits:
    def __init__(self) -> None:
        self.held = 0

    async def acquire(self, key_id):
        self.held += 1
        return self

    async def release(self) -> None:
        self.held -= 1


def test_the_route_answers_499_releases_its_permit_and_logs_no_error(caplog):
    permits = _Permits()
    app = FastAPI()
    app.state.services = type("Services", (), {"limiter": permits})()
    started: list[str] = []

    @app.post("/work")
    async def work(request: Request):
        async def gone():   # the ASGI channel says the client left
            return {"type": "http.disconnect"}
        request._receive = gone
        return await serve(request, type("P", (), {"key_id": "k"})(), stream=False,
                           complete=lambda: forever(started), open_stream=None)

    with caplog.at_level(logging.ERROR), TestClient(app) as client:
        reply = client.post("/work")
    assert reply.status_code == CLIENT_GONE
    assert permits.held == 0 and started == ["work", "cancelled"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

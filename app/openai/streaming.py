"""Server-sent events and client-disconnect handling.

A client that goes away must cancel the work it started (the loop, the upstream calls). Both
helpers below race the work against `http.disconnect` on the ASGI receive channel, so a
disconnect is noticed even while the work is waiting on an upstream and sending nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

T = TypeVar("T")

DONE = b"data: [DONE]\n\n"
CLIENT_GONE = 499   # the status an access log gives a request whose client left (nginx's)


def sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def sse_comment(payload: dict[str, Any]) -> bytes:
    """A comment line: OpenAI clients skip it; our progress events ride on it."""
    return b": " + orjson.dumps(payload) + b"\n\n"


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class ClientGone(Exception):
    """The client disconnected before its answer was ready; the work it started is cancelled.
    Nobody reads the reply, so it is no server error: the access log says 499."""


async def cancel_on_disconnect(receive: Receive, work: Coroutine[Any, Any, T]) -> T:
    """Run `work` in this task; if the client disconnects first, cancel it and raise
    ClientGone. A cancellation from elsewhere (a shutdown) stays a CancelledError."""
    current = asyncio.current_task()
    assert current is not None
    left = False

    async def watch() -> None:
        nonlocal left
        await _wait_disconnect(receive)
        left = True
        current.cancel("client disconnected")

    watcher = asyncio.ensure_future(watch())
    try:
        return await work
    except asyncio.CancelledError:
        # ours alone: the client left and no other cancel request is pending
        if left and current.uncancel() == 0:
            raise ClientGone from None
        raise
    finally:
        watcher.cancel()


class EventStream(Response):
    """An ASGI response streaming `events` as text/event-stream, cancelled on disconnect."""

    media_type = "text/event-stream"

    def __init__(self, events: AsyncIterator[bytes],
                 on_close: Callable[[], Awaitable[None]] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.status_code = 200
        self.background = None
        self.events = events
        self.on_close = on_close
        self.extra_headers = headers or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"),
                   (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
        headers += [(k.lower().encode(), v.encode()) for k, v in self.extra_headers.items()]
        pump = asyncio.ensure_future(self._pump(send, headers))
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            await asyncio.wait((pump, watcher), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, watcher):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, OSError):
                        await task
            aclose = getattr(self.events, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
            if self.on_close is not None:
                await self.on_close()
        if pump.done() and not pump.cancelled() and pump.exception() is not None:
            exc = pump.exception()
            if not isinstance(exc, OSError):
                raise exc  # type: ignore[misc]

    async def _pump(self, send: Send, headers: list[tuple[bytes, bytes]]) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async for data in self.events:
            await send({"type": "http.response.body", "body": data, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

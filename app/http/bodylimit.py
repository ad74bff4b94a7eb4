"""Refuse request bodies over a size limit before they are buffered (pure ASGI middleware).

A declared Content-Length over the limit is refused before the app runs. Without one
(chunked uploads) the body is counted as it streams in; the read that crosses the limit sends
the 413 from here and tells the app the client disconnected. Raising from `receive` instead
would not work: FastAPI turns any error while reading a body into its own 400. Whatever the
app then answers or raises is dropped, as it would be for a client that went away. A
Content-Length within the limit needs no counting: the server delivers exactly that many bytes.
"""

from __future__ import annotations

from typing import Any

import orjson

from generation.errors import PayloadTooLarge

Scope = dict[str, Any]
Message = dict[str, Any]

_DISCONNECT: Message = {"type": "http.disconnect"}


class BodySizeLimit:
    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _message(self) -> str:
        return (
            f"request body is larger than the server's limit of {self.max_bytes} bytes "
            "(REDRAFT_SERVER_MAX_BODY_BYTES)"
        )

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None:
            if declared > self.max_bytes:
                await _send_413(send, self._message())
                return
            await self.app(scope, receive, send)
            return

        seen = 0
        started = False
        rejected = False

        async def limited_receive() -> Message:
            nonlocal seen, rejected
            if rejected:
                return _DISCONNECT
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    rejected = True
                    if not started:
                        await _send_413(send, self._message())
                    return _DISCONNECT
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if rejected:
                return  # the 413 has gone out; the app's answer to the "disconnect" has not
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not rejected:
                raise


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _send_413(send: Any, message: str) -> None:
    body = orjson.dumps(
        {
            "error": {
                "message": message,
                "type": PayloadTooLarge.type,
                "param": None,
                "code": PayloadTooLarge.code,
            }
        }
    )
    await send(
        {
            "type": "http.response.start",
            "status": PayloadTooLarge.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                # The rest of the body is never read; the connection cannot be reused.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

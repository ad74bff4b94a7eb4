"""Logging set-up (one JSON object per line) and request ids.

The request id lives in a ContextVar: each request runs in its own asyncio task with its own
copy of the context, and `asyncio.to_thread` carries it into worker threads, so every log line
emitted while answering a request carries that request's id.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any

import orjson

_request_id: ContextVar[str | None] = ContextVar("redraft_request_id", default=None)
_SANE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_HEADER = b"x-request-id"

access_log = logging.getLogger("redraft.access")

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_RESERVED = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "request_id"}


def current_request_id() -> str | None:
    return _request_id.get()


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or _request_id.get()
        if request_id is not None:
            entry["request_id"] = request_id
        for name, value in record.__dict__.items():
            if name not in _RESERVED and name not in entry:
                entry[name] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """Human-readable lines for a terminal, with the request id when there is one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = getattr(record, "request_id", None) or _request_id.get()
        return f"{line} [{request_id}]" if request_id else line


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Marks the handler this module installed, so configuring again replaces it."""


def configure_logging(level: str, json: bool) -> None:
    """Send every log record to stderr, as JSON lines or plain text. Safe to call again."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, _Handler):
            root.removeHandler(handler)
    handler = _Handler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json else TextFormatter())
    root.addHandler(handler)
    root.setLevel(level.upper())
    # uvicorn's own handlers would print a second, differently shaped copy of each line;
    # RequestIdMiddleware writes the access log instead of uvicorn.access.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
        logger.setLevel(logging.NOTSET)  # follow the root's level, whatever set it before
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    # Libraries that narrate routine work at INFO (migration plugins, HTTP requests).
    for name in ("alembic", "httpx", "huggingface_hub", "urllib3"):
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))


def _incoming_id(scope: dict[str, Any]) -> str | None:
    for name, value in scope["headers"]:
        if name == _HEADER:
            try:
                candidate = value.decode("ascii")
            except UnicodeDecodeError:
                return None
            return candidate if _SANE_ID.fullmatch(candidate) else None
    return None


class RequestIdMiddleware:
    """Gives each HTTP request an id (the client's X-Request-ID when sane), echoes it in the
    response headers, and writes one access line per request."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_id(scope) or os.urandom(8).hex()
        header = (_HEADER, request_id.encode())
        status = 500
        start = time.perf_counter()

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        token: Token[str | None] | None = _request_id.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        except BaseException:
            # Left set: the handler outside this middleware (Starlette's ServerErrorMiddleware)
            # logs the crash under this id, and the request's own task ends with it.
            token = None
            raise
        finally:
            if access_log.isEnabledFor(logging.INFO):
                self._log_access(scope, request_id, status, time.perf_counter() - start)
            if token is not None:
                _request_id.reset(token)

    @staticmethod
    def _log_access(scope: dict[str, Any], request_id: str, status: int, seconds: float) -> None:
        duration_ms = round(seconds * 1000, 2)
        method, path = scope["method"], scope["path"]
        access_log.info(
            "%s %s %d %.1fms",
            method,
            path,
            status,
            duration_ms,
            extra={
                "request_id": request_id,
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": duration_ms,
                "client": (scope.get("client") or ("",))[0],
            },
        )

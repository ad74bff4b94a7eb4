"""When to try an upstream call again, how long to wait, and what error a failure becomes."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import orjson

from generation.errors import (
    ContextOverflow,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RedraftError,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)


def is_retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential delay for retry number `attempt` (0-based), capped, with equal jitter.

    Half fixed, half random: callers that failed together spread out, yet never retry at once.
    """
    delay = min(cap, base * (2**attempt))
    return delay / 2 + random.uniform(0, delay / 2)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The upstream's Retry-After, in seconds (delta or HTTP date); None when absent or bad."""
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def error_fields(body: bytes) -> tuple[str | None, str | None, str | None, Any]:
    """(message, param, code, numeric code) from an OpenAI, vLLM or llama.cpp error body.

    vLLM answers `{"object": "error", "message": ..., "code": 400}` in older releases and the
    OpenAI `{"error": {...}}` shape in newer ones; both are read. `code` is kept only when it
    is a string: a numeric code merely repeats the status.
    """
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode("utf-8", "replace").strip()
        return (text[:300] or None), None, None, None
    return error_fields_from(obj)


def error_fields_from(obj: Any) -> tuple[str | None, str | None, str | None, Any]:
    if isinstance(obj, dict) and isinstance(obj.get("error"), dict):
        obj = obj["error"]
    elif isinstance(obj, dict) and isinstance(obj.get("error"), str):
        obj = {"message": obj["error"]}
    if not isinstance(obj, dict):
        return None, None, None, None
    message = obj.get("message")
    param = obj.get("param")
    code = obj.get("code")
    return (
        str(message) if message is not None else None,
        param if isinstance(param, str) else None,
        code if isinstance(code, str) else None,
        code,
    )


# How engines say a prompt is longer than the context: OpenAI's and vLLM's "maximum context
# length", llama-server's "exceeds the available context size", llama-cpp-python's "exceed
# context window", and the `context_length_exceeded` code.
_OVERFLOW = re.compile(r"context[ _](?:length|window|size)|maximum context|exceeds? (?:the )?"
                       r"(?:available )?context|too many tokens|prompt is too long", re.I)


def is_context_overflow(status: int, message: str | None, code: str | None) -> bool:
    return status == 400 and (code == ContextOverflow.code
                              or bool(message and _OVERFLOW.search(message)))


def error_for_status(status: int, body: bytes, retry_after: float | None) -> RedraftError:
    """The error a final (not retried, or out of retries) upstream status becomes."""
    message, param, code, _ = error_fields(body)
    detail = message or f"upstream answered HTTP {status}"
    if status == 429:
        return RateLimited(detail, retry_after=retry_after or 1.0, param=param, code=code)
    if status in (401, 403):
        # Our key to the upstream was refused: a server misconfiguration, not the client's fault.
        return UpstreamError(f"the upstream refused redraft's credentials: {detail}")
    if status == 404:
        return NotFound(detail, param=param, code=code)
    if status == 413:
        return PayloadTooLarge(detail, param=param, code=code)
    if status == 408:
        return UpstreamTimeout(f"the upstream timed out: {detail}")
    if is_context_overflow(status, message, code):
        return ContextOverflow(detail, param=param or "messages")
    if 400 <= status < 500:
        return InvalidRequest(detail, param=param, code=code, status=status)
    if status == 503:
        return UpstreamUnavailable(f"the upstream is unavailable: {detail}")
    if status == 504:
        return UpstreamTimeout(f"the upstream timed out: {detail}")
    return UpstreamError(f"the upstream failed with HTTP {status}: {detail}")


def error_from_event(obj: Any) -> RedraftError:
    """The error an `{"error": ...}` event inside a stream becomes."""
    message, param, code, numeric = error_fields_from(obj)
    status = numeric if isinstance(numeric, int) and 400 <= numeric < 600 else 502
    body = orjson.dumps({"error": {"message": message or "the upstream failed mid-stream",
                                   "param": param, "code": code}})
    return error_for_status(status, body, None)

"""The `openai` backend: any OpenAI-compatible upstream (vLLM, SGLang, llama.cpp, OpenAI).

Structured calls go in the upstream's own dialect (`generation.openai.dialects`): named by
configuration, or under `auto` found by a probe at start-up (at first use when the upstream
is down then). What the dialect leaves out of the schema is enforced on the answer.

aiohttp with one pooled session and orjson rather than the openai SDK: this sits on the
passthrough path, where per-request overhead decides the throughput of the whole server.
Requests go to the least busy of several base URLs (`generation.balancer`) and are retried
on connect errors, 429 and 5xx (`generation.retry`); a stream is retried only until its body
starts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from generation.balancer import Balancer, Upstream
from generation.base import JsonSchema
from generation.errors import (
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RedraftError,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from generation.openai.dialects import FORMS, SETTINGS, Dialect, dialect, engine_of
from generation.openai.probe import probe
from generation.openai.request import DEFAULT_DIALECT, request_body
from generation.openai.wire import (
    SSEParser,
    chunk_choice,
    completion_of,
    conformed,
    loads_event,
    usage_of,
)
from generation.retry import (
    backoff_delay,
    error_for_status,
    error_from_event,
    is_retryable_status,
    retry_after_seconds,
)
from generation.types import ChatParams, Chunk, Completion, Message, Usage

log = logging.getLogger("generation.openai")

OnCall = Callable[[float, bool, "str | None", "Usage | None"], None]
"""on_call(duration_s, ok, error_kind, usage): once per chat() or stream(), for metrics."""

_CONNECT_ERRORS = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)
_LOST_ERRORS = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
_KINDS: dict[type, str] = {
    UpstreamUnavailable: "unavailable", UpstreamTimeout: "timeout", UpstreamError: "bad_gateway",
    RateLimited: "rate_limited", NotFound: "not_found", InvalidRequest: "invalid_request",
    PayloadTooLarge: "invalid_request",
}
_REDECIDE_SECONDS = 5.0  # an undecided dialect is probed again at most this often


@dataclass
class OpenAIStats:
    """Running totals since start, read by the metrics endpoint."""

    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: Counter[str] = field(default_factory=Counter)


class OpenAIBackend:
    name = "openai"

    def __init__(
        self,
        base_urls: Sequence[str],
        *,
        model: str,
        api_key: str | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.25,
        max_connections: int = 1000,
        max_backoff: float = 10.0,
        avoid_seconds: float = 2.0,
        probe_timeout: float = 2.0,
        models_ttl: float = 10.0,
        on_call: OnCall | None = None,
        structured: str = "json_schema",
        structured_probe_timeout: float = 30.0,
    ) -> None:
        """`max_backoff` caps every wait between attempts, Retry-After included: an upstream
        that asks for a longer pause gets its 429 relayed to the client at once instead.

        `structured` is a form of `generation.openai.dialects` or "auto" (probe at `start`, within
        `structured_probe_timeout` seconds in all)."""
        if structured not in SETTINGS:
            raise ValueError(f"unknown structured-output dialect {structured!r}; "
                             f"expected one of {', '.join(SETTINGS)}")
        self.model = model
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.probe_timeout = probe_timeout
        self.models_ttl = models_ttl
        self.on_call = on_call
        self.stats = OpenAIStats()
        self.balancer = Balancer(list(base_urls), avoid_seconds=avoid_seconds)
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout)
        self._max_connections = max_connections
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        self._models: tuple[float, list[str]] | None = None
        self.structured = structured
        self.structured_probe_timeout = structured_probe_timeout
        self._dialect: Dialect | None = None
        self._decided_by = "pending"
        self._probed: dict[str, str] = {}  # form -> what the probe saw
        self._decide_lock = asyncio.Lock()
        self._last_decision = float("-inf")
        if structured in FORMS and structured not in ("json_schema", "none"):
            # Only json_schema's keyword rules depend on the engine (llama-server or not).
            self._set_dialect(dialect(structured), "setting")  # type: ignore[arg-type]
        elif structured == "none":
            self._set_dialect(dialect("none"), "setting")

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        self._open_session()
        if self.structured == "auto":
            await self._decide()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections, limit_per_host=0, ttl_dns_cache=300,
                keepalive_timeout=30,
            )
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeout, headers=self._headers,
                read_bufsize=2**18,
            )
        return self._session

    # -- the protocol -------------------------------------------------------------------------
    async def chat(self, messages: Sequence[Message], params: ChatParams,
                   schema: JsonSchema | None = None) -> Completion:
        spoken = await self._dialect_for_call() if schema is not None else None
        payload, loosened = request_body(messages, params, schema, model=self.model,
                                         stream=False, dialect=spoken)
        started = time.perf_counter()
        try:
            _, _, raw = await self._post(payload, read_body=True)
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise UpstreamError("the upstream sent malformed JSON") from None
            completion = completion_of(obj, params.model or self.model)
        except BaseException as exc:
            self._record(started, exc, None)
            raise
        self._record(started, None, completion.usage)
        if loosened and schema is not None:
            completion = conformed(completion, schema)
        return completion

    async def stream(self, messages: Sequence[Message], params: ChatParams,
                     schema: JsonSchema | None = None) -> AsyncIterator[Chunk]:
        spoken = await self._dialect_for_call() if schema is not None else None
        payload, _ = request_body(messages, params, schema, model=self.model, stream=True,
                                  dialect=spoken)
        started = time.perf_counter()
        usage: Usage | None = None
        failure: BaseException | None = None
        delivered = False  # the usage chunk went out: closing after it is not a failure
        try:
            upstream, resp, _ = await self._post(payload, read_body=False)
            try:
                parser = SSEParser()
                model, chunk_id, deltas, done = None, None, 0, False
                try:
                    async for data in resp.content.iter_any():
                        for event in parser.feed(data):
                            if event == b"[DONE]":
                                done = True
                                break
                            obj = loads_event(event)
                            if "error" in obj:
                                raise error_from_event(obj)
                            if obj.get("usage"):
                                usage = usage_of(obj["usage"])
                            choices = obj.get("choices")
                            if choices:
                                model, chunk_id = obj.get("model"), obj.get("id")
                                deltas += 1
                                yield Chunk(tuple(map(chunk_choice, choices)), None, model,
                                            chunk_id)
                        if done:
                            break
                    if done:
                        await resp.read()  # drain the chunked terminator: the connection is reused
                except TimeoutError as exc:
                    raise UpstreamTimeout("the upstream stream stopped for longer than "
                                          f"{self._timeout.sock_read or self._timeout.total:g} s"
                                          ) from exc
                except _LOST_ERRORS as exc:
                    raise UpstreamError(f"the upstream stream broke off: {exc!r}") from exc
                if usage is None:  # the upstream ignored stream_options: count deltas instead
                    usage = Usage(0, deltas)
                delivered = True
                yield Chunk((), usage, model, chunk_id)
            finally:
                resp.close()
                self.balancer.release(upstream)
        except BaseException as exc:
            if not delivered:
                failure = exc
            raise
        finally:
            self._record(started, failure, usage if failure is None else None)

    def structured_status(self) -> dict[str, Any]:
        """How structured calls are asked, for /health: the setting, the dialect (None while
        undecided), how it was decided and what the probe saw per form."""
        status: dict[str, Any] = {"setting": self.structured, "decided_by": self._decided_by,
                                  "dialect": None if self._dialect is None
                                  else self._dialect.describe()}
        if self._probed:
            status["probe"] = dict(self._probed)
        if self._dialect is None:
            status["note"] = ("the upstream did not answer the probe; decided at the next "
                              "structured call")
        return status

    async def models(self) -> list[str]:
        if self._models is not None and time.monotonic() - self._models[0] < self.models_ttl:
            return self._models[1]
        for upstream in self.balancer.healthy_first():
            try:
                raw = await self._get(upstream, "/models", min(self._timeout.total or 30, 30))
                ids = [m["id"] for m in orjson.loads(raw)["data"]]
            except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError, KeyError,
                    TypeError):
                continue
            self._models = (time.monotonic(), ids)
            return ids
        raise UpstreamUnavailable("no upstream answered GET /models")

    async def ready(self) -> bool:
        for upstream in self.balancer.healthy_first():
            try:
                await self._get(upstream, "/models", self.probe_timeout)
            except (aiohttp.ClientError, TimeoutError):
                continue
            return True
        return False

    # -- the structured-output dialect ---------------------------------------------------------
    async def _dialect_for_call(self) -> Dialect:
        if self._dialect is None:
            await self._decide()
        # Undecided (the upstream is down): the standard form, which the call's own errors
        # then report; the next call probes again.
        return self._dialect or DEFAULT_DIALECT

    def _set_dialect(self, chosen: Dialect, how: str) -> None:
        self._dialect, self._decided_by = chosen, how
        log.info("structured outputs: %s (engine %s) chosen by %s%s", chosen.form,
                 chosen.engine, how, f"; probe saw {self._probed}" if self._probed else "")

    async def _decide(self) -> None:
        """Settle the dialect: probe under `auto`, the engine's rules under `json_schema`.
        Leaves it undecided when the upstream does not answer; never raises for that."""
        async with self._decide_lock:
            now = time.monotonic()
            if self._dialect is not None or now - self._last_decision < _REDECIDE_SECONDS:
                return
            self._last_decision = now
            session = self._session or self._open_session()
            upstream = self.balancer.healthy_first()[0]
            try:
                engine = await self._engine(upstream)
                if self.structured == "json_schema":
                    self._set_dialect(dialect("json_schema", engine), "setting")
                    return
                chosen = await probe(session, upstream.url, self.model, engine,
                                     now + self.structured_probe_timeout, self._probed)
            except (aiohttp.ClientError, TimeoutError) as exc:
                log.warning("structured outputs: the upstream %s did not answer the probe "
                            "(%r); deciding at the next structured call", upstream.url, exc)
                return
            if chosen is not None:
                self._set_dialect(chosen, "probe")

    async def _engine(self, upstream: Upstream) -> str | None:
        """The engine its GET /models names; None when it names none (or has no such route).
        Raises when the upstream does not answer at all."""
        try:
            raw = await self._get(upstream, "/models", self.probe_timeout)
        except aiohttp.ClientResponseError:
            return None
        try:
            return engine_of(orjson.loads(raw).get("data") or [])
        except (orjson.JSONDecodeError, AttributeError):
            return None

    async def _post(self, payload: bytes, *, read_body: bool,
                    ) -> tuple[Upstream, aiohttp.ClientResponse, bytes]:
        """POST /chat/completions with retries; return the upstream, the 200 response and,
        when `read_body`, its body. Without `read_body` the response is still open and the
        upstream still counted: the caller closes and releases them."""
        session = self._session or self._open_session()
        attempt = 0
        while True:
            upstream = self.balancer.acquire()
            resp: aiohttp.ClientResponse | None = None
            keep_open = False
            try:
                resp = await session.post(upstream.url + "/chat/completions", data=payload)
                if resp.status == 200:
                    raw = await resp.read() if read_body else b""
                    keep_open = not read_body
                    return upstream, resp, raw
                raw = await resp.read()
                retry_after = retry_after_seconds(resp.headers)
                error = error_for_status(resp.status, raw, retry_after)
                if not is_retryable_status(resp.status) or attempt >= self.retries:
                    raise error
                if retry_after is not None and retry_after > self.max_backoff:
                    raise error
                delay = retry_after if retry_after is not None else self._delay(attempt)
            except RedraftError:
                raise
            except _CONNECT_ERRORS as exc:
                self.balancer.avoid(upstream)
                error = UpstreamUnavailable(f"cannot connect to the upstream: {exc}")
                if attempt >= self.retries:
                    raise error from exc
                alternative = self.balancer.has_alternative(upstream)
                delay = 0.0 if alternative else self._delay(attempt)
            except TimeoutError as exc:
                # A generation that ran out of time is not retried: it would only double the load.
                raise UpstreamTimeout("the upstream did not answer within "
                                      f"{self._timeout.total:g} s") from exc
            except _LOST_ERRORS as exc:
                error = UpstreamError(f"the upstream dropped the connection: {exc!r}")
                if attempt >= self.retries:
                    raise error from exc
                delay = self._delay(attempt)
            except aiohttp.ClientError as exc:
                raise UpstreamError(f"the upstream request failed: {exc!r}") from exc
            finally:
                if not keep_open:
                    if resp is not None:
                        resp.close()  # on cancellation this drops the upstream connection
                    self.balancer.release(upstream)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError
            if delay:
                await asyncio.sleep(delay)
            attempt += 1
            self.stats.retries += 1

    def _delay(self, attempt: int) -> float:
        return backoff_delay(attempt, self.backoff, self.max_backoff)

    async def _get(self, upstream: Upstream, path: str, seconds: float) -> bytes:
        session = self._session or self._open_session()
        limit = aiohttp.ClientTimeout(total=seconds)
        async with session.get(upstream.url + path, timeout=limit) as resp:
            raw = await resp.read()
            if resp.status != 200:
                raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
            self.balancer.recovered(upstream)
            return raw

    def _record(self, started: float, exc: BaseException | None, usage: Usage | None) -> None:
        stats = self.stats
        stats.calls += 1
        kind = None
        if exc is not None:
            kind = "cancelled" if isinstance(exc, asyncio.CancelledError | GeneratorExit) else (
                _KINDS.get(type(exc), "error"))
            stats.errors[kind] += 1
        if usage is not None:
            stats.prompt_tokens += usage.prompt_tokens
            stats.completion_tokens += usage.completion_tokens
        if self.on_call is not None:
            self.on_call(time.perf_counter() - started, exc is None, kind, usage)


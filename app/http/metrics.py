"""Prometheus metrics in a registry owned by one app, and the middleware that times requests.

Each `Metrics` has its own CollectorRegistry, so two apps in one process (tests, embedding)
never collide in prometheus_client's global registry. Label values are bounded: routes are
the matched templates ("other" when nothing matched) and unusual HTTP methods fold into
"OTHER", so a client cannot grow the series without limit.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

# Chat requests run from milliseconds (cache, errors) to minutes (reflection loops).
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
UNMATCHED = "other"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "redraft_requests", "HTTP requests answered", ["route", "method", "status"], registry=r
        )
        self.request_duration = Histogram(
            "redraft_request_duration_seconds",
            "HTTP request duration, until the last byte of the response",
            ["route"],
            buckets=REQUEST_BUCKETS,
            registry=r,
        )
        self.upstream_calls = Counter(
            "redraft_upstream_calls",
            "Calls to generation backends",
            ["backend", "outcome"],
            registry=r,
        )
        self.upstream_duration = Histogram(
            "redraft_upstream_duration_seconds",
            "Duration of calls to generation backends",
            ["backend"],
            buckets=REQUEST_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "redraft_tokens", "Tokens used, hidden calls included", ["kind"], registry=r
        )
        self.errors = Counter(
            "redraft_errors", "Errors answered, by error type", ["type"], registry=r
        )
        self.in_flight = Gauge(
            "redraft_in_flight_requests", "HTTP requests being answered", registry=r
        )
        self.checklist_cache = Counter(
            "redraft_checklist_cache", "Checklist cache lookups", ["result"], registry=r
        )
        self.loops = Counter(
            "redraft_loops", "Reflection loops finished, by stop reason", ["stop_reason"],
            registry=r,
        )
        self.degradations = Counter(
            "redraft_loop_degradations",
            "Loop stages that did less than asked, by stage and cause",
            ["stage", "cause"],
            registry=r,
        )
        # labels() takes a lock and validates on every call; the request path reuses children.
        self._request_children: dict[tuple[str, str, int], Any] = {}
        self._duration_children: dict[str, Any] = {}
        self._prompt_tokens = self.tokens.labels(kind="prompt")
        self._completion_tokens = self.tokens.labels(kind="completion")

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, status)
        counter = self._request_children.get(key)
        if counter is None:
            counter = self._request_children[key] = self.requests.labels(route, method, str(status))
        counter.inc()
        histogram = self._duration_children.get(route)
        if histogram is None:
            histogram = self._duration_children[route] = self.request_duration.labels(route)
        histogram.observe(seconds)

    def observe_upstream(self, backend: str, outcome: str, seconds: float) -> None:
        self.upstream_calls.labels(backend, outcome).inc()
        self.upstream_duration.labels(backend).observe(seconds)

    def add_tokens(self, prompt: int, completion: int) -> None:
        if prompt:
            self._prompt_tokens.inc(prompt)
        if completion:
            self._completion_tokens.inc(completion)

    def count_error(self, type: str) -> None:
        self.errors.labels(type).inc()

    def observe_loop(self, stop_reason: str, degradations: Iterable[tuple[str, str]]) -> None:
        """One finished loop: its stop reason, and (stage, cause) of each degradation."""
        self.loops.labels(stop_reason).inc()
        for stage, cause in degradations:
            self.degradations.labels(stage, cause).inc()

    def cache(self, result: str) -> None:
        """Count a checklist cache lookup: `result` is "hit" or "miss"."""
        self.checklist_cache.labels(result).inc()

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type, for `GET /metrics`."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def route_label(scope: dict[str, Any], root_path: str) -> str:
    """The template of the route that answered, e.g. "/admin/loops/{loop_id}"."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return UNMATCHED
    # Inside a Mount the route's path is relative; the mount prefix went into root_path.
    mounted = scope.get("root_path", "")[len(root_path) :]
    return mounted + path if mounted else path


class MetricsMiddleware:
    """Counts and times every HTTP request; a streamed response counts until its last chunk."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        metrics = self.metrics
        root_path = scope.get("root_path", "")
        status = 500  # what the client sees when the app raises before answering
        start = time.perf_counter()

        async def send_with_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_with_status)
        finally:
            metrics.in_flight.dec()
            method = scope["method"]
            metrics.observe_request(
                route_label(scope, root_path),
                method if method in _METHODS else "OTHER",
                status,
                time.perf_counter() - start,
            )

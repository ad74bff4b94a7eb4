"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, Response

from store.db import ping

router = APIRouter()


@router.get("/health")
async def health(request: Request) -> dict:
    """Liveness, and how structured calls are asked of each upstream (the dialect the probe
    chose, or "pending" while the upstream has not answered it)."""
    body: dict[str, Any] = {"status": "ok"}
    services = getattr(request.app.state, "services", None)
    if services is not None:
        structured = {}
        for role, backend in (("writer", services.backend), ("judge", services.judge)):
            status = getattr(backend, "structured_status", None)
            report = status() if status is not None else None
            if report is not None and (role == "writer" or backend is not services.backend):
                structured[role] = report
        if structured:
            body["structured"] = structured
    return body


@router.get("/ready")
async def ready(request: Request) -> Response:
    services = request.app.state.services
    db_ok, upstream_ok = await asyncio.gather(
        _bounded(ping(services.engine)), _bounded(services.backend.ready()))
    ok = db_ok and upstream_ok
    body: dict[str, Any] = {"status": "ready" if ok else "not ready",
                            "checks": {"database": db_ok, "upstream": upstream_ok}}
    if services.judge_status is not None:  # whether `auto` calls the judge, and why
        body["judge"] = services.judge_status.as_dict()
    if services.reviser_status is not None:  # whether `auto` asks for revisions, and why
        body["reviser"] = services.reviser_status.as_dict()
    return JSONResponse(body, status_code=200 if ok else 503)


async def _bounded(check, seconds: float = 3.0) -> bool:  # type: ignore[no-untyped-def]
    try:
        return bool(await asyncio.wait_for(check, seconds))
    except Exception:
        return False


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    payload, content_type = request.app.state.services.metrics.render()
    return Response(payload, media_type=content_type)

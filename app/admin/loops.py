"""Admin API over recorded loops and stored checklists (admin key always required)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from app.http.auth import Principal, require_admin
from generation.errors import InvalidRequest, NotFound
from loops.options import STOP_REASONS
from store.errors import InvalidCursor

router = APIRouter(prefix="/admin")


def _page(page: Any) -> dict[str, Any]:
    items, cursor = page
    return {"object": "list", "data": [_plain(asdict(i)) for i in items], "next_cursor": cursor}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


async def _listing(call: Any) -> dict[str, Any]:
    try:
        return _page(await call)
    except InvalidCursor as exc:
        raise InvalidRequest(str(exc), param="cursor") from None


@router.get("/loops")
async def list_loops(
    request: Request,
    _: Principal = Depends(require_admin),
    namespace: str | None = None,
    since: datetime | None = Query(None, description="ISO 8601, inclusive"),
    until: datetime | None = Query(None, description="ISO 8601, exclusive"),
    model: str | None = None,
    stop_reason: str | None = Query(None, pattern=f"^({'|'.join(STOP_REASONS)})$"),
    min_gain: float | None = Query(None, ge=-1, le=1),
    limit: int = Query(50, ge=1, le=200),
    cursor: str | None = None,
) -> dict[str, Any]:
    for name, stamp in (("since", since), ("until", until)):
        if stamp is not None and stamp.tzinfo is None:
            raise InvalidRequest(f"{name} needs a timezone (e.g. 2026-01-01T00:00:00Z)",
                                 param=name)
    loops = request.app.state.services.loops
    return await _listing(loops.list(namespace=namespace, since=since, until=until, model=model,
                                     stop_reason=stop_reason, min_gain=min_gain, limit=limit,
                                     cursor=cursor))


@router.get("/loops/{loop_id}")
async def get_loop(loop_id: str, request: Request,
                   _: Principal = Depends(require_admin)) -> dict[str, Any]:
    record = await request.app.state.services.loops.get(loop_id)
    if record is None:
        raise NotFound(f"no loop with id {loop_id!r}", param="loop_id")
    body = _plain(asdict(record))
    body["score_gain"] = record.score_gain
    return body


@router.get("/checklists")
async def list_checklists(request: Request, _: Principal = Depends(require_admin),
                          namespace: str | None = None,
                          limit: int = Query(50, ge=1, le=200),
                          cursor: str | None = None) -> dict[str, Any]:
    checklists = request.app.state.services.checklists
    return await _listing(checklists.list(namespace=namespace, limit=limit, cursor=cursor))


@router.get("/checklists/{checklist_id}")
async def get_checklist(checklist_id: str, request: Request,
                        _: Principal = Depends(require_admin)) -> dict[str, Any]:
    record = await request.app.state.services.checklists.get(checklist_id)
    if record is None:
        raise NotFound(f"no checklist with id {checklist_id!r}", param="checklist_id")
    return _plain(asdict(record))

"""GET /v1/models."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, Request

from app.http.auth import Principal, require_user

router = APIRouter()


@router.get("/v1/models")
async def list_models(request: Request, _: Principal = Depends(require_user)) -> dict:
    names = await request.app.state.services.backend.models()
    created = int(time.time())
    return {"object": "list",
            "data": [{"id": n, "object": "model", "created": created, "owned_by": "redraft"}
                     for n in names]}

"""Admin API over the memory bank (admin key always required; every namespace visible)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from app.admin.memory_service import MemoryAdmin, Name, Prose, Trajectory, experience_json
from app.http.auth import Principal, require_admin
from generation.errors import InvalidRequest

router = APIRouter(prefix="/admin/memories")

JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines",
               "text/plain", "text/jsonl")


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: Prose
    namespace: Name | None = None  # None: every namespace
    k: int = Field(5, ge=1, le=50)


class CreateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    namespace: Name
    key: Prose
    text: Prose
    score_trajectory: Trajectory = []


class EditBody(BaseModel):
    model_config = ConfigDict(extra="forbid")  # moving an experience between namespaces: no
    key: Prose | None = None
    text: Prose | None = None
    score_trajectory: Trajectory | None = None


async def memory_admin(request: Request,
                       _: Principal = Depends(require_admin)) -> MemoryAdmin:
    s = request.app.state.services
    return MemoryAdmin(s.experiences, s.memory, s.loops, s.sessions)


@router.get("")
async def list_memories(
    admin: MemoryAdmin = Depends(memory_admin),
    namespace: str | None = None,
    q: str | None = Query(None, description="substring of the key or the text, any case"),
    embedding_model: str | None = None,
    source_loop_id: str | None = None,
    since: datetime | None = Query(None, description="ISO 8601, inclusive"),
    until: datetime | None = Query(None, description="ISO 8601, exclusive"),
    limit: int = Query(50, ge=1, le=200),
    cursor: str | None = None,
) -> dict[str, Any]:
    items, next_cursor = await admin.listing(
        namespace=namespace, contains=q, embedding_model=embedding_model,
        source_loop_id=source_loop_id, since=since, until=until, limit=limit, cursor=cursor)
    return {"object": "list", "data": [experience_json(r) for r in items],
            "next_cursor": next_cursor}


@router.get("/export")
async def export_memories(admin: MemoryAdmin = Depends(memory_admin),
                          namespace: str | None = None) -> StreamingResponse:
    name = f"memories-{namespace}.jsonl" if namespace else "memories.jsonl"
    return StreamingResponse(admin.export(namespace), media_type="application/x-ndjson",
                             headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/stats")
async def memory_stats(admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    return await admin.stats()


@router.get("/{experience_id}")
async def get_memory(experience_id: str,
                     admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    record, loop = await admin.get(experience_id)
    return {**experience_json(record), "source_loop": loop}


@router.post("/search")
async def search_memories(body: SearchBody,
                          admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    hits = await admin.search(body.text, body.namespace, body.k)
    return {"object": "list",
            "data": [{**experience_json(h.experience), "score": h.score} for h in hits]}


@router.post("")
async def create_memory(body: CreateBody, response: Response,
                        admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    result = await admin.create(body.namespace, body.key, body.text, body.score_trajectory)
    response.status_code = 200 if result.duplicate else 201
    return {**experience_json(result.experience), "duplicate": result.duplicate}


@router.patch("/{experience_id}")
async def edit_memory(experience_id: str, body: EditBody,
                      admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    record = await admin.edit(experience_id, key=body.key, text=body.text,
                              score_trajectory=body.score_trajectory)
    return experience_json(record)


@router.delete("/{experience_id}")
async def delete_memory(experience_id: str,
                        admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    await admin.delete(experience_id)
    return {"id": experience_id, "deleted": True}


@router.post("/import")
async def import_memories(request: Request,
                          admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and kind not in JSONL_TYPES:
        raise InvalidRequest(f"send JSONL (Content-Type application/x-ndjson), not {kind}",
                             status=415, code="unsupported_media_type")
    return asdict(await admin.import_jsonl(await request.body()))


@router.post("/reindex")
async def reindex_memories(admin: MemoryAdmin = Depends(memory_admin)) -> dict[str, Any]:
    body = asdict(await admin.reindex())
    body["relabelled"] = len(body.pop("relabel"))  # a count: the ids can run to thousands
    return body

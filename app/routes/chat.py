"""POST /v1/chat/completions: validate, take a permit, call the chat service, answer."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from app.auth import Principal, require_user
from app.streaming import EventStream, cancel_on_disconnect
from app.wire import ChatCompletionRequest

router = APIRouter()


@router.post("/v1/chat/completions")
async def chat_completions(body: ChatCompletionRequest, request: Request,
                           principal: Principal = Depends(require_user)) -> Response:
    services = request.app.state.services
    permit = await services.limiter.acquire(principal.key_id)
    if body.stream:
        try:
            opening = services.chat.open_stream(body, principal)
            events = await cancel_on_disconnect(request.receive, opening)
        except BaseException:
            await permit.release()
            raise
        return EventStream(events, on_close=permit.release)
    try:
        work = services.chat.complete(body, principal)
        result = await cancel_on_disconnect(request.receive, work)
    finally:
        await permit.release()
    return Response(orjson.dumps(result), media_type="application/json")

"""POST /v1/chat/completions: validate, take a permit, call the chat service, answer."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.http.auth import require_user
from app.openai.routing import openapi_body, read_body, serve
from app.openai.wire import ChatCompletionRequest

router = APIRouter()


@router.post("/v1/chat/completions", openapi_extra=openapi_body(ChatCompletionRequest))
async def chat_completions(request: Request) -> Response:
    principal = await require_user(request)
    body = await read_body(request, ChatCompletionRequest)
    chat = request.app.state.services.chat
    return await serve(request, principal, stream=body.stream,
                       complete=lambda: chat.complete(body, principal),
                       open_stream=lambda: chat.open_stream(body, principal))

"""/v1/responses: create, retrieve, list input items, delete, cancel. Thin: validate, call the
responses service, answer JSON or SSE."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from starlette.responses import Response

from app.http.auth import Principal, require_user
from app.openai.responses.checks import request_error
from app.openai.responses.wire import ResponseCreateRequest
from app.openai.routing import openapi_body, read_body, serve
from generation.errors import InvalidRequest

router = APIRouter()


@router.post("/v1/responses", openapi_extra=openapi_body(ResponseCreateRequest))
async def create_response(request: Request) -> Response:
    principal = await require_user(request)
    try:
        body = await read_body(request, ResponseCreateRequest)
    except RequestValidationError as exc:
        raise request_error(exc) from None
    responses = request.app.state.services.responses
    return await serve(request, principal, stream=bool(body.stream),
                       complete=lambda: responses.create(body, principal),
                       open_stream=lambda: responses.open_stream(body, principal))


def _no_include(request: Request) -> None:
    """`include` (sent as `include[]` by the SDKs) asks for data redraft never returns."""
    query = request.query_params
    if query.getlist("include") or query.getlist("include[]"):
        raise InvalidRequest("no extra output data can be included", param="include",
                             code="unsupported_parameter")


@router.get("/v1/responses/{response_id}")
async def get_response(response_id: str, request: Request, stream: bool = False,
                       principal: Principal = Depends(require_user)) -> dict[str, Any]:
    _no_include(request)
    if stream:
        raise InvalidRequest("a stored response cannot be streamed again: background mode, "
                             "which it is for, is not supported", param="stream",
                             code="unsupported_parameter")
    return await request.app.state.services.responses.stored.get(response_id,
                                                                principal.namespace)


@router.get("/v1/responses/{response_id}/input_items")
async def list_input_items(response_id: str, request: Request,
                           limit: int = Query(20, ge=1, le=100),
                           order: Literal["asc", "desc"] = "desc",
                           after: str | None = None,
                           principal: Principal = Depends(require_user)) -> dict[str, Any]:
    _no_include(request)
    return await request.app.state.services.responses.stored.input_items(
        response_id, principal.namespace, limit=limit, order=order, after=after)


@router.delete("/v1/responses/{response_id}")
async def delete_response(response_id: str, request: Request,
                          principal: Principal = Depends(require_user)) -> dict[str, Any]:
    return await request.app.state.services.responses.stored.delete(response_id,
                                                                    principal.namespace)


@router.post("/v1/responses/{response_id}/cancel")
async def cancel_response(response_id: str, request: Request,
                          principal: Principal = Depends(require_user)) -> dict[str, Any]:
    return await request.app.state.services.responses.stored.cancel(response_id,
                                                                    principal.namespace)

"""What every OpenAI route does around its service: parse the body, hold a permit, answer.

The body is parsed with pydantic's JSON parser rather than through FastAPI's body dependency:
on the passthrough path FastAPI's generic solving is a quarter of the CPU a request costs.
Validation errors still go through the same handler (400 naming the field), and the key is
checked before the body is read. A client that disconnects cancels the work it started; its
request is logged with status 499, not as a server error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

import orjson
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from app.http.auth import Principal
from app.openai.streaming import CLIENT_GONE, ClientGone, EventStream, cancel_on_disconnect

M = TypeVar("M", bound=BaseModel)


def openapi_body(model: type[BaseModel]) -> dict[str, Any]:
    """The `openapi_extra` that documents a body the route parses itself."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": schema}}}}


async def read_body(request: Request, model: type[M]) -> M:
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None


async def serve(request: Request, principal: Principal, *, stream: bool,
                complete: Callable[[], Coroutine[Any, Any, dict[str, Any]]],
                open_stream: Callable[[], Coroutine[Any, Any, AsyncIterator[bytes]]],
                ) -> Response:
    """Answer JSON from `complete()` or SSE from `open_stream()`, under the caller's permit."""
    permit = await request.app.state.services.limiter.acquire(principal.key_id)
    try:
        if stream:
            try:
                events = await cancel_on_disconnect(request.receive, open_stream())
            except BaseException:
                await permit.release()
                raise
            return EventStream(events, on_close=permit.release)
        try:
            result = await cancel_on_disconnect(request.receive, complete())
        finally:
            await permit.release()
    except ClientGone:
        return Response(status_code=CLIENT_GONE)
    return Response(orjson.dumps(result), media_type="application/json")

"""Every failure becomes an OpenAI error object with the right status and `param`."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.http.logs import current_request_id
from generation.errors import RedraftError
from store.errors import Conflict

log = logging.getLogger("redraft.errors")

_HTTP_TYPES = {
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("not_found_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    413: ("invalid_request_error", "request_too_large"),
}


def error_body(message: str, type_: str, param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def error_of(exc: BaseException) -> tuple[int, dict[str, Any], dict[str, str]]:
    """Status, OpenAI error body and headers for any exception."""
    if isinstance(exc, RedraftError):
        return exc.status, error_body(exc.message, exc.type, exc.param, exc.code), exc.headers
    if isinstance(exc, Conflict):
        return 409, error_body(str(exc), "invalid_request_error", None, "conflict"), {}
    rid = current_request_id()
    log.error("unhandled error", exc_info=exc, extra={"request_id": rid})
    message = "internal server error" + (f" (request id {rid})" if rid else "")
    return 500, error_body(message, "server_error", None, "internal_error"), {}


def json_error(status: int, body: dict[str, Any],
               headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, headers=headers,
                    media_type="application/json")


def param_of(loc: tuple[Any, ...]) -> str | None:
    """("body", "messages", 0, "content") -> "messages[0].content"."""
    parts = list(loc[1:]) if loc and loc[0] in ("body", "query", "path", "header") else list(loc)
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part.startswith(("function-", "tagged-union", "literal[")) and "[" not in part:
            out += ("." if out else "") + part
    return out or None


def validation_message(err: dict[str, Any], param: str | None) -> str:
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    if err.get("type") == "json_invalid":
        return "the request body is not valid JSON: " + str(err.get("ctx", {}).get("error", msg))
    if err.get("type") == "missing":
        return f"'{param}' is required" if param else "a required field is missing"
    return f"{param}: {msg}" if param else msg


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RedraftError)
    async def _redraft(_: Request, exc: RedraftError) -> Response:
        status, body, headers = error_of(exc)
        return json_error(status, body, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        first = errors[0] if errors else {}
        param = param_of(tuple(first.get("loc", ())))
        if first.get("type") == "json_invalid":
            param = None
        body = error_body(validation_message(first, param), "invalid_request_error", param,
                          "invalid_value" if param else "invalid_request")
        return json_error(400, body)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> Response:
        type_, code = _HTTP_TYPES.get(exc.status_code, ("invalid_request_error", None))
        detail = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404 and detail == "Not Found":
            detail = ("no such route: see GET /v1/models, POST /v1/chat/completions and "
                      "POST /v1/responses")
        return json_error(exc.status_code, error_body(detail, type_, None, code),
                          dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _unknown(_: Request, exc: Exception) -> Response:
        status, body, headers = error_of(exc)
        return json_error(status, body, headers)

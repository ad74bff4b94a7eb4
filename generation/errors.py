"""The error family every layer raises; `app` maps each to an OpenAI error object.

It lives in the leaf package so that every floor above can raise it without importing upward.
"""

from __future__ import annotations


class RedraftError(Exception):
    status: int = 500
    type: str = "server_error"
    code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.headers = headers or {}


class InvalidRequest(RedraftError):
    status = 400
    type = "invalid_request_error"


class ContextOverflow(InvalidRequest):
    """The prompt does not fit the model's context. For the user's own messages this is the
    user's 400; for a hidden call of the loop it is the loop's to handle (carry less, or skip
    the stage and say so), never a 400 about a prompt the user did not write."""

    code = "context_length_exceeded"


class AuthenticationFailed(RedraftError):
    status = 401
    type = "authentication_error"
    code = "invalid_api_key"


class PermissionDenied(RedraftError):
    status = 403
    type = "permission_error"
    code = "forbidden"


class NotFound(RedraftError):
    status = 404
    type = "not_found_error"
    code = "not_found"


class PayloadTooLarge(RedraftError):
    status = 413
    type = "invalid_request_error"
    code = "request_too_large"


class RateLimited(RedraftError):
    status = 429
    type = "rate_limit_error"
    code = "rate_limit_exceeded"

    def __init__(self, message: str, *, retry_after: float, **kw: object) -> None:
        seconds = max(1, int(retry_after + 0.999))
        super().__init__(message, headers={"Retry-After": str(seconds)}, **kw)  # type: ignore[arg-type]
        self.retry_after = seconds


class UpstreamError(RedraftError):
    """The upstream answered with something unusable (bad gateway)."""

    status = 502
    type = "upstream_error"
    code = "bad_gateway"


class UpstreamUnavailable(RedraftError):
    status = 503
    type = "upstream_error"
    code = "upstream_unavailable"


class UpstreamTimeout(RedraftError):
    status = 504
    type = "upstream_error"
    code = "upstream_timeout"

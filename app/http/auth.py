"""API-key authentication: who is calling, in which namespace, and may they use the admin API.

Keys are never kept in memory as given: each is stored under its SHA-256 digest. Looking a
presented key up by its digest leaks nothing useful through timing (an attacker cannot steer
digest bytes towards a real key's), and the admin key is checked with `hmac.compare_digest`.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from fastapi import Request

from generation.errors import AuthenticationFailed, PermissionDenied

ANONYMOUS = "anonymous"
DEFAULT_NAMESPACE = "default"

_HOW_TO = "send it as 'Authorization: Bearer <key>'"


@dataclass(frozen=True, slots=True)
class Principal:
    key_id: str  # short, non-secret: safe for logs, metrics and rate-limit keys
    namespace: str
    admin: bool


def key_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


class Authenticator:
    """Checks bearer tokens against the configured user keys and the admin key."""

    def __init__(self, api_keys: dict[str, str], admin_key: str | None) -> None:
        self._users: dict[bytes, Principal] = {
            _digest(key): Principal(key_id(key), namespace, admin=False)
            for key, namespace in api_keys.items()
            if key
        }
        self._admin_digest: bytes | None = None
        self._admin: Principal | None = None
        if admin_key:
            self._admin_digest = _digest(admin_key)
            # An admin key that is also a user key keeps that key's namespace.
            user = self._users.get(self._admin_digest)
            namespace = user.namespace if user else DEFAULT_NAMESPACE
            self._admin = Principal(key_id(admin_key), namespace, admin=True)
        self._anonymous = Principal(ANONYMOUS, DEFAULT_NAMESPACE, admin=False)

    @property
    def open(self) -> bool:
        """True when no user keys are configured: every caller is anonymous."""
        return not self._users

    def _is_admin(self, digest: bytes) -> bool:
        return self._admin_digest is not None and hmac.compare_digest(digest, self._admin_digest)

    def authenticate(self, authorization: str | None) -> Principal:
        token = bearer_token(authorization)
        if self.open:
            # Clients such as the openai SDK always send some key; with none configured it is
            # ignored unless it is the admin key.
            if token is not None and self._admin is not None and self._is_admin(_digest(token)):
                return self._admin
            return self._anonymous
        if token is None:
            raise AuthenticationFailed(f"missing API key: {_HOW_TO}")
        digest = _digest(token)
        if self._admin is not None and self._is_admin(digest):
            return self._admin
        principal = self._users.get(digest)
        if principal is None:
            raise AuthenticationFailed(f"invalid API key: {_HOW_TO}")
        return principal

    def authenticate_admin(self, authorization: str | None) -> Principal:
        if self._admin is None:
            raise PermissionDenied("admin API disabled: set REDRAFT_ADMIN_KEY")
        token = bearer_token(authorization)
        if token is None:
            raise AuthenticationFailed(f"missing admin key: {_HOW_TO}")
        digest = _digest(token)
        if self._is_admin(digest):
            return self._admin
        if digest in self._users:
            raise PermissionDenied("this API key may not use the admin API; use the admin key")
        raise AuthenticationFailed(f"invalid admin key: {_HOW_TO}")


async def require_user(request: Request) -> Principal:
    """FastAPI dependency: the calling principal, also left on `request.state.principal`."""
    principal = request.app.state.authenticator.authenticate(request.headers.get("authorization"))
    request.state.principal = principal
    return principal


async def require_admin(request: Request) -> Principal:
    """FastAPI dependency for `/admin`: the admin principal, or 401/403."""
    authenticator: Authenticator = request.app.state.authenticator
    principal = authenticator.authenticate_admin(request.headers.get("authorization"))
    request.state.principal = principal
    return principal

"""Admin UI sessions: a signed, expiring token in a cookie, and a CSRF token bound to it.

The cookie never holds the admin key. Its value is `v1.<issued>.<nonce>.<mac>` where the MAC
is HMAC-SHA256 under a key derived from the admin key, so every replica that shares the admin
key accepts the same sessions without shared state, and changing the admin key ends all of
them. Being stateless, a session cannot be revoked before it expires; logging out deletes the
cookie, which is HttpOnly and so out of reach of page scripts.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

COOKIE = "redraft_admin_ui"
COOKIE_PATH = "/admin/ui"
DEFAULT_MAX_AGE = 12 * 3600  # seconds
_VERSION = "v1"
_CLOCK_SKEW = 60  # seconds a token may appear to come from the future (replicas' clocks)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class Session:
    nonce: str
    issued_at: int


class SessionSigner:
    """Issues and checks session tokens and their CSRF tokens for one admin key."""

    def __init__(self, admin_key: str, *, max_age: int = DEFAULT_MAX_AGE,
                 clock: Callable[[], float] = time.time) -> None:
        if not admin_key:
            raise ValueError("the admin UI needs an admin key")
        # A derived key: a MAC leaked from a cookie says nothing usable about the admin key.
        self._key = hmac.new(admin_key.encode(), b"redraft admin ui session", "sha256").digest()
        self.max_age = max_age
        self._clock = clock

    def _mac(self, purpose: str, message: str) -> str:
        return _b64(hmac.new(self._key, f"{purpose}|{message}".encode(), hashlib.sha256).digest())

    def issue(self) -> str:
        payload = f"{_VERSION}.{int(self._clock())}.{_b64(secrets.token_bytes(18))}"
        return f"{payload}.{self._mac('session', payload)}"

    def verify(self, token: str | None) -> Session | None:
        """The session a token stands for, or None if it is malformed, forged or expired."""
        if not token or len(token) > 200:
            return None
        payload, _, mac = token.rpartition(".")
        if not hmac.compare_digest(mac.encode(), self._mac("session", payload).encode()):
            return None
        version, issued, nonce = (payload.split(".") + ["", "", ""])[:3]
        if version != _VERSION or not issued.isdigit():
            return None
        age = self._clock() - int(issued)
        if age > self.max_age or age < -_CLOCK_SKEW:
            return None
        return Session(nonce=nonce, issued_at=int(issued))

    def csrf_token(self, session: Session) -> str:
        return self._mac("csrf", session.nonce)

    def check_csrf(self, session: Session, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(
            str(token).encode(), self.csrf_token(session).encode())

"""Who may see the admin UI: the session cookie, the login redirect, and CSRF checks.

Forms defend in depth: the session cookie is SameSite=Strict (a cross-site form post carries
no session), state-changing forms carry a token bound to the session, and a POST whose
Origin or Sec-Fetch-Site names another site is refused outright.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import Request
from starlette.exceptions import HTTPException
from starlette.responses import Response

from app.admin.ui.session import COOKIE, COOKIE_PATH, Session, SessionSigner

HOME = "/admin/ui"
LOGIN = "/admin/ui/login"


@dataclass(frozen=True, slots=True)
class UiSession:
    session: Session
    signer: SessionSigner

    @property
    def csrf(self) -> str:
        return self.signer.csrf_token(self.session)


def signer(request: Request) -> SessionSigner | None:
    """The signer for the configured admin key; None when the admin API is disabled."""
    key = request.app.state.services.settings.admin.key
    return SessionSigner(key.get_secret_value()) if key else None


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a UI path on this site, never another site."""
    if (not target or not target.startswith(HOME) or "//" in target or "\\" in target
            or any(ord(ch) < 32 for ch in target)):
        return HOME
    return target


def login_url(target: str) -> str:
    return f"{LOGIN}?{urlencode({'next': safe_next(target)})}"


def current_path(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


async def require_ui_session(request: Request) -> UiSession:
    """FastAPI dependency: the admin's UI session, or a 303 redirect to the login page."""
    sign = signer(request)
    session = sign.verify(request.cookies.get(COOKIE)) if sign else None
    if sign is None or session is None:
        raise HTTPException(303, "log in to the admin UI first",
                            headers={"Location": login_url(current_path(request))})
    return UiSession(session, sign)


def same_origin(request: Request) -> bool:
    """False for a POST that a browser says came from another site."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True  # not a browser, or an old one: SameSite and the CSRF token still apply
    return urlsplit(origin).netloc == request.headers.get("host")


async def read_form(request: Request) -> dict[str, str]:
    """A urlencoded form body (the body size limit middleware has already bounded it)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return dict(parse_qsl(body, keep_blank_values=True))


def set_session_cookie(response: Response, request: Request, sign: SessionSigner) -> None:
    response.set_cookie(COOKIE, sign.issue(), max_age=sign.max_age, path=COOKIE_PATH,
                        httponly=True, samesite="strict", secure=request.url.scheme == "https")


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict",
                           secure=request.url.scheme == "https")

"""Rendering pages: one Jinja2 environment with autoescaping, and strict response headers.

The pages carry no script at all, and the Content-Security-Policy says so: even a markup
escape that went wrong could not run code in the admin's browser.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse

TEMPLATES = Path(__file__).parent / "templates"
STYLESHEET = Path(__file__).parent / "ui.css"

SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'self'; img-src 'self'; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def when(value: datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Built once, on first use; read-only afterwards (Jinja's own template cache aside)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES),
                      autoescape=select_autoescape(["html"], default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(score=score, signed=signed, when=when)
    return env


def page(name: str, context: dict[str, Any], status: int = 200,
         headers: dict[str, str] | None = None) -> HTMLResponse:
    # Every page extends base.html, which reads these; pages without a session leave them empty.
    html = environment().get_template(name).render(**{"csrf": "", "nav": "", **context})
    return HTMLResponse(html, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})

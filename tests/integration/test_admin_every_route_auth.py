"""Every /admin route, enumerated from the admin routers: 401 without a key, 403 with a user key."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from app.admin import loops as admin_loops
from app.admin import memory as admin_memory
from app.admin.ui import routes as admin_ui
from app.factory import create_app
from app.settings import load_settings
from generation.scripted import ScriptedBackend


@pytest.fixture
def client(tmp_path, monkeypatch):
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL"):
        monkeypatch.delenv(key, raising=False)
    settings = load_settings(data={"dir": tmp_path}, model="tiny",
                             api={"keys": "team-a:sk-a"}, admin={"key": "sk-admin"},
                             memory={"enabled": False})
    app = create_app(settings, backend=ScriptedBackend(default=lambda *_: "ok", model="tiny"))
    with TestClient(app, follow_redirects=False) as c:
        yield c


# The UI's stylesheet and sign-in form hold no data; the UI's pages need a signed session.
PUBLIC = {("GET", "/admin/ui/ui.css"), ("GET", "/admin/ui/login"), ("POST", "/admin/ui/login")}


def admin_routes(*modules) -> list[tuple[str, str]]:
    out = []
    routes = [r for m in modules for r in m.router.routes]
    for route in routes:
        if isinstance(route, APIRoute) and route.path.startswith("/admin"):
            path = re.sub(r"\{[^}]+\}", "0" * 32, route.path)
            out += [(method, path) for method in sorted(route.methods - {"HEAD"})]
    return out


def test_every_admin_route_needs_the_admin_key(client) -> None:
    routes = admin_routes(admin_loops, admin_memory)
    assert len(routes) >= 14  # loops, checklists, memories (CRUD, search, import, stats...)
    for method, path in routes:
        nobody = client.request(method, path, json={})
        user = client.request(method, path, json={}, headers={"Authorization": "Bearer sk-a"})
        assert nobody.status_code == 401, (method, path, nobody.status_code, nobody.text[:200])
        assert user.status_code == 403, (method, path, user.status_code, user.text[:200])
        for resp, kind in ((nobody, "authentication_error"), (user, "permission_error")):
            assert resp.json()["error"]["type"] == kind, (method, path, resp.text[:200])


def test_no_admin_ui_page_opens_without_a_signed_session(client) -> None:
    pages = [r for r in admin_routes(admin_ui) if r not in PUBLIC]
    assert len(pages) >= 4
    for method, path in pages:
        for headers in ({}, {"Authorization": "Bearer sk-a"}, {"Authorization": "Bearer sk-admin"}):
            resp = client.request(method, path, headers=headers)
            assert resp.status_code in (303, 401, 403), (method, path, resp.status_code)

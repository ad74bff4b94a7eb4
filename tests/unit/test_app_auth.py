from __future__ import annotations

import httpx
import pytest
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from app.http.auth import Authenticator, Principal, require_admin, require_user
from generation.errors import AuthenticationFailed, PermissionDenied, RedraftError

KEYS = {"sk-alpha": "team-a", "sk-beta": "default"}


def bearer(key: str) -> str:
    return f"Bearer {key}"


def test_no_keys_makes_everyone_anonymous_in_default_namespace():
    auth = Authenticator({}, admin_key=None)
    for header in (None, "", "Bearer sk-whatever", "Basic abc"):
        principal = auth.authenticate(header)
        assert principal == Principal("anonymous", "default", admin=False)


def test_user_key_maps_to_its_namespace():
    auth = Authenticator(KEYS, admin_key=None)
    alpha = auth.authenticate(bearer("sk-alpha"))
    beta = auth.authenticate("bearer   sk-beta ")
    assert (alpha.namespace, alpha.admin) == ("team-a", False)
    assert beta.namespace == "default"
    assert alpha.key_id != beta.key_id
    assert "sk-alpha" not in alpha.key_id and len(alpha.key_id) <= 16


@pytest.mark.parametrize(
    "header", [None, "", "Bearer", "Bearer sk-wrong", "sk-alpha", "Basic sk-alpha"]
)
def test_missing_or_wrong_key_is_401_with_instructions(header):
    auth = Authenticator(KEYS, admin_key="adm")
    with pytest.raises(AuthenticationFailed) as info:
        auth.authenticate(header)
    assert info.value.status == 401
    assert "Authorization: Bearer" in info.value.message


def test_admin_key_also_works_on_user_routes():
    auth = Authenticator(KEYS, admin_key="adm")
    principal = auth.authenticate(bearer("adm"))
    assert principal.admin and principal.namespace == "default"
    # Without user keys, the admin key is still recognised as admin.
    assert Authenticator({}, admin_key="adm").authenticate(bearer("adm")).admin


def test_admin_key_that_is_also_a_user_key_keeps_its_namespace():
    auth = Authenticator({"shared": "ops"}, admin_key="shared")
    principal = auth.authenticate_admin(bearer("shared"))
    assert principal.admin and principal.namespace == "ops"


def test_admin_api_disabled_without_admin_key():
    auth = Authenticator(KEYS, admin_key=None)
    with pytest.raises(PermissionDenied) as info:
        auth.authenticate_admin(bearer("sk-alpha"))
    assert info.value.status == 403
    assert "REDRAFT_ADMIN_KEY" in info.value.message


def test_admin_api_refuses_user_key_with_403_and_strangers_with_401():
    auth = Authenticator(KEYS, admin_key="adm")
    with pytest.raises(PermissionDenied):
        auth.authenticate_admin(bearer("sk-alpha"))
    for header in (None, bearer("nope")):
        with pytest.raises(AuthenticationFailed):
            auth.authenticate_admin(header)
    assert auth.authenticate_admin(bearer("adm")).admin


def test_admin_api_needs_the_admin_key_even_when_user_keys_are_off():
    auth = Authenticator({}, admin_key="adm")
    with pytest.raises(AuthenticationFailed):
        auth.authenticate_admin(None)
    with pytest.raises(AuthenticationFailed):
        auth.authenticate_admin(bearer("anything"))


def _app(auth: Authenticator) -> FastAPI:
    app = FastAPI()
    app.state.authenticator = auth

    @app.exception_handler(RedraftError)
    async def _error(request: Request, exc: RedraftError) -> JSONResponse:
        return JSONResponse({"error": {"message": exc.message, "code": exc.code}}, exc.status)

    @app.get("/v1/models")
    async def models(principal: Principal = Depends(require_user)) -> dict:
        return {"namespace": principal.namespace, "admin": principal.admin}

    @app.get("/admin/stats")
    async def stats(principal: Principal = Depends(require_admin)) -> dict:
        return {"key_id": principal.key_id}

    return app


async def test_dependencies_guard_routes():
    app = _app(Authenticator(KEYS, admin_key="adm"))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        ok = await client.get("/v1/models", headers={"Authorization": "Bearer sk-alpha"})
        assert ok.json() == {"namespace": "team-a", "admin": False}
        assert (await client.get("/v1/models")).status_code == 401
        forbidden = await client.get("/admin/stats", headers={"Authorization": "Bearer sk-alpha"})
        assert forbidden.status_code == 403
        admin = await client.get("/admin/stats", headers={"Authorization": "Bearer adm"})
        assert admin.status_code == 200 and admin.json()["key_id"] != "adm"

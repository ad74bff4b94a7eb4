"""The admin UI: server-rendered pages under /admin/ui, behind a login with the admin key."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import FileResponse, RedirectResponse, Response

from app.admin.ui import guard, queries, views
from app.admin.ui.guard import UiSession, require_ui_session
from app.admin.ui.render import SECURITY_HEADERS, STYLESHEET, page
from generation.errors import PermissionDenied, RedraftError
from store.errors import InvalidCursor

router = APIRouter(prefix="/admin/ui", include_in_schema=False)


def _error(status: int, heading: str, message: str, back: str, csrf: str = "") -> Response:
    return page("error.html", {"heading": heading, "message": message, "back": back,
                               "csrf": csrf}, status)


@router.get("/ui.css")
async def stylesheet() -> FileResponse:
    return FileResponse(STYLESHEET, media_type="text/css",
                        headers={"Cache-Control": "max-age=300"})


@router.get("/login")
async def login_form(request: Request, next: str | None = None) -> Response:
    target = guard.safe_next(next)
    sign = guard.signer(request)
    if sign is not None and sign.verify(request.cookies.get(guard.COOKIE)):
        return RedirectResponse(target, 303)
    error = "" if sign else "The admin UI is disabled: set REDRAFT_ADMIN_KEY."
    return page("login.html", {"next": target, "error": error, "enabled": sign is not None,
                               "csrf": ""}, 200 if sign else 403)


@router.post("/login")
async def login(request: Request) -> Response:
    if not guard.same_origin(request):
        return _error(403, "Forbidden", "Cross-site form posts are refused.", guard.LOGIN)
    form = await guard.read_form(request)
    target = guard.safe_next(form.get("next"))
    sign = guard.signer(request)
    try:
        if sign is None:
            raise PermissionDenied("The admin UI is disabled: set REDRAFT_ADMIN_KEY.")
        request.app.state.authenticator.authenticate_admin(f"Bearer {form.get('key', '')}")
    except RedraftError as exc:
        return page("login.html", {"next": target, "error": exc.message,
                                   "enabled": sign is not None, "csrf": ""}, exc.status)
    response = RedirectResponse(target, 303)
    guard.set_session_cookie(response, request, sign)
    return response


@router.post("/logout")
async def logout(request: Request, ui: UiSession = Depends(require_ui_session)) -> Response:
    form = await guard.read_form(request)
    if not guard.same_origin(request) or not ui.signer.check_csrf(ui.session, form.get("csrf")):
        return _error(403, "Forbidden", "The form has expired; reload the page and try again.",
                      guard.HOME, ui.csrf)
    response = RedirectResponse(guard.LOGIN, 303, headers=SECURITY_HEADERS)
    guard.clear_session_cookie(response, request)
    return response


@router.get("")
async def memory(request: Request, ui: UiSession = Depends(require_ui_session),
                 q: str = Query("", max_length=2000), mode: str | None = None,
                 namespace: str = "", cursor: str | None = None,
                 limit: int = Query(50, ge=1, le=200)) -> Response:
    services = request.app.state.services
    mode = queries.search_mode(services, mode)
    q, namespace = q.strip(), namespace.strip()
    try:
        found = await queries.memory_page(services, q=q, mode=mode, namespace=namespace or None,
                                          limit=limit, cursor=cursor)
    except InvalidCursor:
        return _error(400, "Bad page link", "That page link is not valid.", guard.HOME, ui.csrf)
    next_url = found.next_cursor and queries.page_url(
        guard.HOME, q=q, mode=mode, namespace=namespace, cursor=found.next_cursor)
    return page("memory.html", {
        "csrf": ui.csrf, "nav": "memory", "rows": found.rows, "q": q, "mode": found.mode,
        "namespace": namespace, "semantic_available": queries.semantic_available(services),
        "cursor": cursor, "next_url": next_url})


@router.get("/experiences/{experience_id}")
async def experience(experience_id: str, request: Request,
                     ui: UiSession = Depends(require_ui_session)) -> Response:
    record, source = await queries.experience_with_loop(request.app.state.services,
                                                        experience_id)
    if record is None:
        return _error(404, "Not found", f"No experience with id {experience_id}.", guard.HOME,
                      ui.csrf)
    threshold = views.request_threshold(source.request) if source else None
    return page("experience.html", {"csrf": ui.csrf, "nav": "memory", "e": record,
                                    "source_loop": source,
                                    "chart": views.experience_chart(record, threshold)})


@router.get("/loops")
async def loops(request: Request, ui: UiSession = Depends(require_ui_session),
                namespace: str = "", cursor: str | None = None,
                limit: int = Query(50, ge=1, le=200)) -> Response:
    namespace = namespace.strip()
    try:
        items, next_cursor = await queries.loop_page(
            request.app.state.services, namespace=namespace or None, limit=limit, cursor=cursor)
    except InvalidCursor:
        return _error(400, "Bad page link", "That page link is not valid.", "/admin/ui/loops",
                      ui.csrf)
    next_url = next_cursor and queries.page_url("/admin/ui/loops", namespace=namespace,
                                                cursor=next_cursor)
    return page("loops.html", {"csrf": ui.csrf, "nav": "loops", "loops": items,
                               "namespace": namespace, "cursor": cursor, "next_url": next_url})


@router.get("/loops/{loop_id}")
async def loop(loop_id: str, request: Request,
               ui: UiSession = Depends(require_ui_session)) -> Response:
    record = await request.app.state.services.loops.get(loop_id)
    if record is None:
        return _error(404, "Not found", f"No loop with id {loop_id}.", "/admin/ui/loops",
                      ui.csrf)
    return page("loop.html", {"csrf": ui.csrf, "nav": "loops", "view": views.loop_view(record)})

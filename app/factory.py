"""The FastAPI app factory: routes, middleware, error mapping, lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.admin import loops as admin_loops
from app.admin import memory as admin_memory
from app.admin.ui import routes as admin_ui
from app.http import ops
from app.http.auth import Authenticator
from app.http.bodylimit import BodySizeLimit
from app.http.errors import install_error_handlers
from app.http.logs import RequestIdMiddleware
from app.http.metrics import Metrics, MetricsMiddleware
from app.openai import chat, models
from app.openai.responses import routes as responses
from app.services import Services, close_services, open_services
from app.settings import Settings
from generation.base import Backend


def create_app(settings: Settings, *, services: Services | None = None,
               backend: Backend | None = None) -> FastAPI:
    """Build the app. `services` given: already open (the CLI opens them before serving, so
    start-up failures end with a message instead of a traceback); otherwise the lifespan
    opens them, with `backend` replacing the configured one (tests)."""
    metrics = services.metrics if services else Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = services is None
        opened = services or await open_services(settings, backend=backend, metrics=metrics)
        app.state.services = opened
        app.state.authenticator = opened.authenticator
        try:
            yield
        finally:
            if own:
                await close_services(opened)

    # FastAPI's built-in telemetry probes the environment on every request; we export our own.
    app = FastAPI(title="redraft", version="0.1.0", lifespan=lifespan, docs_url="/docs",
                  redoc_url=None, telemetry={"tracing": False, "metrics": False, "logs": False})
    if services is not None:
        app.state.services = services
        app.state.authenticator = services.authenticator
    else:
        admin = settings.admin.key.get_secret_value() if settings.admin.key else None
        app.state.authenticator = Authenticator(settings.api.namespaces(), admin)
    install_error_handlers(app)
    for module in (chat, responses, models, ops, admin_loops, admin_memory, admin_ui):
        app.include_router(module.router)
    # Outermost first: request ids wrap metrics, which wrap the body limit.
    app.add_middleware(BodySizeLimit, max_bytes=settings.server.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(RequestIdMiddleware)
    return app

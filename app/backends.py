"""The backend registry: an explicit dict from a configured name to a builder."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from app.http.metrics import Metrics
from app.settings import Settings
from generation.base import Backend


def _observer(metrics: Metrics, backend_name: str) -> Callable[..., None]:
    def on_call(seconds: float, ok: bool, error_kind: str | None, usage: object) -> None:
        metrics.observe_upstream(backend_name, "ok" if ok else error_kind or "error", seconds)

    return on_call


def _openai_kwargs(settings: Settings, metrics: Metrics, backend_name: str) -> dict:
    up = settings.upstream
    return dict(
        api_key=up.api_key.get_secret_value() if up.api_key else None,
        model=settings.model,
        timeout=up.timeout,
        connect_timeout=up.connect_timeout,
        retries=up.retries,
        backoff=up.backoff,
        max_connections=up.max_connections,
        on_call=_observer(metrics, backend_name),
        structured=up.structured,
        structured_probe_timeout=up.structured_probe_timeout,
    )


def build_openai(settings: Settings, metrics: Metrics) -> Backend:
    from generation.openai import OpenAIBackend

    return OpenAIBackend(base_urls=settings.upstream.url,
                         **_openai_kwargs(settings, metrics, "openai"))


def build_vllm(settings: Settings, metrics: Metrics) -> Backend:
    from generation.openai import OpenAIBackend
    from generation.supervisor import SupervisorSettings
    from generation.vllm import VllmBackend

    v = settings.vllm
    kwargs = _openai_kwargs(settings, metrics, "vllm")

    def client(base_url: str) -> OpenAIBackend:
        return OpenAIBackend(base_urls=[base_url], **kwargs)

    supervision = SupervisorSettings(startup_timeout=v.startup_timeout,
                                     restart_delay=v.restart_delay)
    return VllmBackend(command=v.command, model=settings.model, args=v.args, port=v.port,
                       supervision=supervision, client_factory=client)


def build_local(settings: Settings, metrics: Metrics) -> Backend:
    from generation.local import LocalBackend
    from generation.local.source import locate

    locate(settings.model)  # a REDRAFT_MODEL naming nothing usable stops start-up here, in one line
    loc = settings.local
    return LocalBackend(model_path=settings.model, device=loc.device, dtype=loc.dtype,
                        max_new_tokens=loc.max_new_tokens, concurrency=loc.concurrency,
                        allow_download=True, cache_dir=settings.data.dir / "models",
                        threads=loc.threads, weights=loc.weights)


BACKENDS: dict[str, Callable[[Settings, Metrics], Backend]] = {
    "openai": build_openai,
    "vllm": build_vllm,
    "local": build_local,
}


def build_judge(settings: Settings, metrics: Metrics) -> Backend | None:
    """A separate judge upstream when REDRAFT_JUDGE_URL is set; else None (the writer judges)."""
    if not settings.judge.url:
        return None
    from generation.openai import OpenAIBackend

    kwargs = _openai_kwargs(settings, metrics, "judge")
    kwargs["model"] = settings.judge.model or settings.model
    if settings.judge.api_key is not None:
        kwargs["api_key"] = settings.judge.api_key.get_secret_value()
    if settings.judge.structured is not None:
        kwargs["structured"] = settings.judge.structured
    return OpenAIBackend(base_urls=settings.judge.url, **kwargs)


def build_backend(settings: Settings, metrics: Metrics) -> Backend:
    return BACKENDS[settings.resolved_backend](settings, metrics)


def describe(settings: Settings) -> str:
    name = settings.resolved_backend
    if name == "openai":
        return f"openai upstream(s) {', '.join(settings.upstream.url)} model {settings.model}"
    if name == "vllm":
        return f"vllm `{' '.join(shlex.split(settings.vllm.command))}` model {settings.model}"
    return f"local model {settings.model}"

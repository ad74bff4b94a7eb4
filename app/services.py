"""Everything a request needs, built once at start-up and closed on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.backends import build_backend, build_judge, describe
from app.http.auth import Authenticator
from app.http.limits import Limiter, build_limiter
from app.http.metrics import Metrics
from app.memory_setup import memory_step, open_memory
from app.openai.chat_service import ChatService
from app.openai.loop_service import LoopService
from app.openai.responses.service import ResponsesService
from app.openai.responses.stored import WINDOW, StoredResponses
from app.settings import Settings
from generation.base import Backend
from generation.types import ChatParams
from loops.checklists import ChecklistProvider
from loops.controller import ReflectionLoop
from loops.judges.calibration import JudgeStatus
from loops.probes.reviser import ReviserStatus
from loops.probes.status import ProbeStatus
from memory.bank import MemoryBank
from rubrics.cache import ChecklistCache, MemoryChecklistCache, RedisChecklistCache
from rubrics.packs import PackLibrary
from store.checklists import ChecklistRepository
from store.db import make_engine, make_sessionmaker
from store.experiences import ExperienceRepository
from store.group_commit import LoopWriter, ResponseWriter
from store.loops import LoopRepository
from store.migrate import upgrade
from store.responses import ResponseRepository

log = logging.getLogger("redraft")


@dataclass
class Services:
    settings: Settings
    backend: Backend
    judge: Backend
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    redis: Any | None
    limiter: Limiter
    authenticator: Authenticator
    metrics: Metrics
    packs: PackLibrary
    loops: LoopRepository
    recorder: LoopWriter
    checklists: ChecklistRepository
    experiences: ExperienceRepository
    memory: MemoryBank | None
    loop_service: LoopService
    chat: ChatService
    response_writer: ResponseWriter
    responses: ResponsesService
    judge_status: JudgeStatus | None = None
    reviser_status: ReviserStatus | None = None
    probing: asyncio.Task[Any] | None = None


async def open_services(settings: Settings, *, backend: Backend | None = None,
                        metrics: Metrics | None = None) -> Services:
    """Migrate the database, connect Redis, start the backend. Raises on what cannot start."""
    metrics = metrics or Metrics()
    settings.data.dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.database_url, echo=settings.database.echo)
    try:
        await upgrade(engine)
    except BaseException:
        await engine.dispose()
        raise
    redis = None
    started: list[Backend] = []
    sessions = make_sessionmaker(engine)
    experiences = ExperienceRepository(sessions)
    memory: MemoryBank | None = None
    try:
        if settings.redis.url:
            from redis.asyncio import Redis

            redis = Redis.from_url(settings.redis.url, socket_connect_timeout=2,
                                   socket_timeout=5, health_check_interval=30)
            await redis.ping()
        backend = backend or build_backend(settings, metrics)
        log.info("starting backend: %s", describe(settings))
        await backend.start()
        started.append(backend)
        judge = build_judge(settings, metrics) or backend
        if judge is not backend:
            await judge.start()
            started.append(judge)
        memory = await open_memory(settings, experiences, redis)
    except BaseException:
        for b in started:
            with contextlib.suppress(Exception):
                await b.aclose()
        if redis is not None:
            await redis.aclose()
        await engine.dispose()
        raise
    packs = PackLibrary()
    loops, checklists = LoopRepository(sessions), ChecklistRepository(sessions)
    recorder = LoopWriter(loops)
    reflection = settings.reflection
    judge_params = ChatParams(model=settings.judge.model or settings.model,
                              temperature=settings.judge.temperature,
                              max_tokens=settings.judge.max_tokens)
    provider = ChecklistProvider(judge, judge_params, packs, _cache(settings, redis, metrics),
                                 checklists, n_min=reflection.min_dimensions,
                                 n_max=reflection.max_dimensions, retries=reflection.retries)
    step = None if memory is None else memory_step(settings, memory, judge, backend,
                                                   judge_params)
    judge_status = None
    if reflection.judge_probe:
        judge_status = JudgeStatus(judge, judge_params, judge_params.model or "",
                                   settings.data.dir / "judge_probe.json")
    reviser_status = None
    if reflection.reviser_probe:
        reviser_status = ReviserStatus(backend, ChatParams(model=settings.model), settings.model,
                                       settings.data.dir / "reviser_probe.json")
    loop = ReflectionLoop(backend, judge, provider, judge_params=judge_params, memory=step,
                          retries=reflection.retries, judge_status=judge_status,
                          reviser_status=reviser_status)
    admin = settings.admin.key.get_secret_value() if settings.admin.key else None
    loop_service = LoopService(backend, metrics, settings.model, loop=loop, recorder=recorder,
                               defaults=reflection, backend_name=settings.resolved_backend,
                               memory=step,
                               max_remembering=settings.memory.remember_concurrency)
    stored_responses = ResponseRepository(sessions)
    response_writer = ResponseWriter(stored_responses, window=WINDOW)
    return Services(
        settings=settings,
        backend=backend,
        judge=judge,
        engine=engine,
        sessions=sessions,
        redis=redis,
        limiter=build_limiter(settings.api.rate_limit, settings.api.concurrency, redis),
        authenticator=Authenticator(settings.api.namespaces(), admin),
        metrics=metrics,
        packs=packs,
        loops=loops,
        recorder=recorder,
        checklists=checklists,
        experiences=experiences,
        memory=memory,
        loop_service=loop_service,
        chat=ChatService(loop_service),
        response_writer=response_writer,
        responses=ResponsesService(loop_service, StoredResponses(stored_responses,
                                                                 response_writer, metrics)),
        judge_status=judge_status,
        reviser_status=reviser_status,
        probing=_probe(judge_status, reviser_status),
    )


def _probe(*statuses: ProbeStatus[Any] | None) -> asyncio.Task[Any] | None:
    """The probes, one after another, in the background (requests are served meanwhile;
    until the judge's ends `auto` gives the judge no calls, until the reviser's it asks the
    writer for no revision); a result kept from an earlier start needs none. One at a time:
    on the local engine, two probes decoding side by side slowed each other several-fold."""
    pending = []
    for status in statuses:
        if status is None:
            continue
        if status.result is not None:
            log.info("%s (kept from an earlier probe)", status.line())
        else:
            log.info("probing the %s %s in the background", status.role, status.model)
            pending.append(status)
    if not pending:
        return None

    async def run() -> None:
        for status in pending:
            await status.run()
    return asyncio.ensure_future(run())


def _cache(settings: Settings, redis: Any, metrics: Metrics) -> ChecklistCache:
    def count(hit: bool) -> None:
        metrics.cache("hit" if hit else "miss")

    if redis is not None:
        return RedisChecklistCache(redis, ttl=settings.reflection.cache_ttl, on_result=count)
    return MemoryChecklistCache(settings.reflection.cache_size, on_result=count)


async def close_services(services: Services) -> None:
    if services.probing is not None and not services.probing.done():
        services.probing.cancel()
        with contextlib.suppress(BaseException):
            await services.probing
    await services.loop_service.aclose()
    await services.recorder.aclose()
    await services.response_writer.aclose()
    if services.memory is not None:
        with contextlib.suppress(Exception):
            await services.memory.aclose()
    for backend in {id(b): b for b in (services.backend, services.judge)}.values():
        with contextlib.suppress(Exception):
            await backend.aclose()
    with contextlib.suppress(Exception):
        await services.limiter.aclose()
    if services.redis is not None:
        with contextlib.suppress(Exception):
            await services.redis.aclose()
    await services.engine.dispose()

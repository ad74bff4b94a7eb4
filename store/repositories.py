"""The store as one object: an engine, its sessions, and the repositories over them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from store.checklists import ChecklistRepository
from store.db import make_engine, make_sessionmaker, ping
from store.experiences import ExperienceRepository
from store.loops import LoopRepository
from store.migrate import upgrade
from store.records import utcnow
from store.responses import ResponseRepository


class Store:
    """Built once in the app's lifespan (or the trainer), closed on shutdown."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self.engine = engine
        self.sessions = make_sessionmaker(engine)
        self.loops = LoopRepository(self.sessions)
        self.experiences = ExperienceRepository(self.sessions, clock=clock)
        self.checklists = ChecklistRepository(self.sessions)
        self.responses = ResponseRepository(self.sessions)

    @classmethod
    async def open(cls, url: str | URL, *, echo: bool = False, migrate: bool = True) -> Store:
        """Connect to `url`, bringing the schema up to date first unless `migrate` is False."""
        engine = make_engine(url, echo=echo)
        try:
            if migrate:
                await upgrade(engine)
        except BaseException:
            await engine.dispose()
            raise
        return cls(engine)

    async def ping(self) -> bool:
        return await ping(self.engine)

    async def close(self) -> None:
        await self.engine.dispose()

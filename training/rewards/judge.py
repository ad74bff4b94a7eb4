"""The judge as training's reward functions use it: redraft's `openai` backend on a private
event loop in a worker thread.

TRL calls reward functions synchronously from the training loop; the judge's pooled aiohttp
session lives on its own loop, and a reward function hands it a batch of coroutines and waits
for all of them. Calls in flight are bounded by `concurrency`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from generation.openai import OpenAIBackend
from generation.types import ChatParams
from training.errors import UsageError

T = TypeVar("T")


class Judge:
    def __init__(self, url: str, model: str, *, api_key: str | None = None,
                 timeout: float = 120.0, retries: int = 2, concurrency: int = 16) -> None:
        self.url, self.model, self.retries = url, model, retries
        self.params = ChatParams(model=model, temperature=0.0)
        self.calls = 0  # scoring requests made (one evaluate() each, before its own re-asks)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="judge", daemon=True)
        self._thread.start()
        self.backend = OpenAIBackend([url], model=model, api_key=api_key, timeout=timeout,
                                     connect_timeout=min(10.0, timeout), retries=retries,
                                     backoff=0.5)
        self._semaphore: asyncio.Semaphore | None = None
        self._concurrency = concurrency
        self.run(self._start())

    async def _start(self) -> None:
        self._semaphore = asyncio.Semaphore(self._concurrency)
        await self.backend.start()

    def run(self, coroutine: Awaitable[T]) -> T:
        """Run a coroutine on the judge's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()  # type: ignore[arg-type]

    def map(self, work: Callable[[Any], Awaitable[T]], items: Sequence[Any]) -> list[T]:
        """`work(item)` for every item, at most `concurrency` at once, results in order."""

        async def bounded(item: Any) -> T:
            assert self._semaphore is not None
            async with self._semaphore:
                return await work(item)

        async def everything() -> list[T]:
            return list(await asyncio.gather(*(bounded(i) for i in items)))

        return self.run(everything())

    def require_ready(self) -> None:
        """Exit-2 error unless the judge answers GET /models now."""
        if not self.run(self.backend.ready()):
            raise UsageError(f"the judge at {self.url} is unreachable (GET /models failed): "
                             "start it or fix --judge-url")

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self.run(self.backend.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

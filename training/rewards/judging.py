"""What the judge-backed rewards share: the judge they are handed, the completion's text, the
bounded fan-out of their judge calls, and the count of rewards had and not had.

The judge is `training.rewards.judge.Judge` in training (redraft's `openai` backend on a
private event loop: TRL calls reward functions synchronously); anything with the same four
members will do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from generation.base import Backend
from generation.types import ChatParams

T = TypeVar("T")


class JudgeLike(Protocol):
    backend: Backend
    params: ChatParams
    calls: int

    def run(self, coroutine: Awaitable[T]) -> T: ...


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a conversational list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


def report_unavailable(name: str, missing: int, columns: dict[str, Any]) -> None:
    """Hand the count of rewards not had to TRL's metric log (averaged per logging step)."""
    log_metric = columns.get("log_metric")
    if callable(log_metric):
        log_metric(f"{name}/unavailable", float(missing))


class JudgedReward:
    """Base of the rewards that ask the judge once (or a few times) per completion: at most
    `concurrency` completions in flight, `retries` re-asks on a malformed answer, and the
    counts for the report (`scored`, `unavailable`)."""

    __name__ = "judged"

    def __init__(self, judge: JudgeLike, *, concurrency: int, retries: int,
                 max_tokens: int) -> None:
        self.judge = judge
        self.params = judge.params.with_(max_tokens=max_tokens)
        self.concurrency = concurrency
        self.retries = retries
        self.scored = 0
        self.unavailable = 0

    async def bounded(self, work: Callable[..., Awaitable[T]],
                      *columns: Sequence[Any]) -> list[T]:
        """`work(*row)` for each row of `columns`, at most `concurrency` at once, in order."""
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(*row: Any) -> T:
            async with semaphore:
                return await work(*row)

        return list(await asyncio.gather(*map(one, *columns)))

    def tally(self, rewards: Sequence[float | None], columns: dict[str, Any]) -> None:
        """Count the rewards had and not had; the latter also goes to TRL's metric log."""
        missing = sum(r is None for r in rewards)
        self.scored += len(rewards) - missing
        self.unavailable += missing
        report_unavailable(self.__name__, missing, columns)

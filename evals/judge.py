"""WritingBench's scoring: the judge scores each of the query's criteria 1-10, one call each.

Goes through `rubrics.evaluate` in per-dimension mode (the product's own evaluator). A
judgement with any criterion unscored is retried whole; after the last attempt the query is
recorded as missing, never given a score.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from evals.queries import EvalQuery
from generation.base import Backend
from generation.errors import RedraftError
from generation.types import ChatParams, Usage
from rubrics.evaluate import evaluate


@dataclass(frozen=True, slots=True)
class Judged:
    scores: dict[str, int] | None  # criterion -> 1..10; None when the judge failed
    usage: Usage
    calls: int
    seconds: float
    attempts: int
    error: str | None = None
    evidence: dict[str, str] = field(default_factory=dict)

    @property
    def score(self) -> float | None:
        """The query's score: the mean criterion score / 10."""
        if not self.scores:
            return None
        return sum(self.scores.values()) / len(self.scores) / 10

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "seconds": round(self.seconds, 3), "attempts": self.attempts,
                "error": self.error}


class Judge:
    def __init__(self, backend: Backend, params: ChatParams, *, attempts: int = 3,
                 retries: int = 1, concurrency: int = 5) -> None:
        self.backend = backend
        self.params = params
        self.attempts = attempts
        self.retries = retries          # bad-answer retries inside one criterion's call
        self.concurrency = concurrency  # criteria judged at once for one answer

    async def judge(self, query: EvalQuery, answer: str) -> Judged:
        messages = [{"role": "user", "content": query.query}]
        usage, calls, error = Usage(), 0, None
        started = time.monotonic()
        for attempt in range(1, self.attempts + 1):
            try:
                result = await evaluate(self.backend, messages, answer, query.checklist,
                                        self.params, mode="per_dimension",
                                        retries=self.retries, concurrency=self.concurrency)
            except RedraftError as exc:
                error = f"{type(exc).__name__}: {exc.message}"
                calls += 1
                continue
            usage, calls = usage + result.usage, calls + result.calls
            if not result.degraded:
                scores = result.evaluation.scores
                return Judged({s.name: s.score for s in scores}, usage, calls,
                              time.monotonic() - started, attempt,
                              evidence={s.name: s.evidence for s in scores})
            error = "the judge left criteria unscored"
        return Judged(None, usage, calls, time.monotonic() - started, self.attempts, error)

"""Why a loop did less than it was asked: the stage that failed, the cause in words, and what
the loop did instead. Kept in the trace, the stored record, the admin loop view, the log line
and a metric label, so that neither the user nor the operator mistakes a loop that did not
run for one that found nothing to improve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generation.errors import (
    ContextOverflow,
    InvalidRequest,
    RateLimited,
    RedraftError,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)

# cause labels (the metric's values): a small fixed set
TIMEOUT = "timeout"
INVALID_OUTPUT = "invalid_output"
CONTEXT_OVERFLOW = "context_overflow"
UPSTREAM_STATUS = "upstream_status"
UNAVAILABLE = "unavailable"
RATE_LIMITED = "rate_limited"
BAD_GATEWAY = "bad_gateway"
ERROR = "error"
OVER_BUDGET = "over_budget"  # no judged round fits the budget the draft left


@dataclass(frozen=True, slots=True)
class Degradation:
    stage: str     # checklist | memory | evaluate | reflect | rewrite
    cause: str     # one of the labels above
    detail: str    # the error in words: "the upstream did not answer within 600 s"
    outcome: str   # what the loop did instead: "answered the draft", "used the generic ..."

    def as_dict(self) -> dict[str, str]:
        return {"stage": self.stage, "cause": self.cause, "detail": self.detail,
                "outcome": self.outcome}

    def line(self) -> str:
        return f"{self.stage}: {self.cause} ({self.detail}); {self.outcome}"

    @classmethod
    def from_dict(cls, value: Any) -> Degradation | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(*(str(value[k]) for k in ("stage", "cause", "detail", "outcome")))
        except KeyError:
            return None


def cause_of(exc: RedraftError) -> str:
    """The cause label of an upstream failure."""
    if isinstance(exc, ContextOverflow):
        return CONTEXT_OVERFLOW
    if isinstance(exc, UpstreamTimeout):
        return TIMEOUT
    if isinstance(exc, UpstreamUnavailable):
        return UNAVAILABLE
    if isinstance(exc, RateLimited):
        return RATE_LIMITED
    if isinstance(exc, UpstreamError):
        return BAD_GATEWAY
    if isinstance(exc, InvalidRequest):
        return UPSTREAM_STATUS
    return ERROR


def failed(stage: str, exc: RedraftError, outcome: str = "") -> Degradation:
    """A stage that raised: its cause from the error, its detail the error's message (with
    the status where the upstream refused the call)."""
    detail = exc.message
    if isinstance(exc, InvalidRequest) and not isinstance(exc, ContextOverflow):
        detail = f"HTTP {exc.status}: {detail}"
    return Degradation(stage, cause_of(exc), detail, outcome)


def invalid(stage: str, calls: int, error: str | None, outcome: str = "") -> Degradation:
    """A structured call whose answers could not be used, however often it was asked."""
    tries = f"{calls} {'try' if calls == 1 else 'tries'}"
    said = f": {error}" if error else ""
    return Degradation(stage, INVALID_OUTPUT, f"no usable answer after {tries}{said}", outcome)


def with_outcome(found: list[Degradation], outcome: str) -> tuple[Degradation, ...]:
    """The loop's degradations, those still saying nothing of what was done given `outcome`."""
    return tuple(d if d.outcome else Degradation(d.stage, d.cause, d.detail, outcome)
                 for d in found)

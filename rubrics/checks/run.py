"""Running checks on a text: pure, microseconds, no call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rubrics.checks.kinds import KINDS
from rubrics.checks.model import Check, CheckOutcome


def run_checks(text: str, checks: Iterable[Check]) -> tuple[CheckOutcome, ...]:
    """Each check's outcome on `text`, in the checks' order. An unknown kind is a bug upstream
    (checks are validated against the registry when they are built) and raises KeyError."""
    out = []
    for check in checks:
        outcome = KINDS[check.kind].run(text, check.params)
        out.append(outcome.model_copy(update={"quote": check.quote}))
    return tuple(out)


def pass_rate(outcomes: Sequence[CheckOutcome]) -> float:
    """Share of checks passed; 1.0 when there are none."""
    return sum(o.passed for o in outcomes) / len(outcomes) if outcomes else 1.0

"""Running checks on a text, and meeting the ones an exact change meets: pure, microseconds,
no call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rubrics.checks.base import CheckOutcome
from rubrics.checks.kinds import KINDS
from rubrics.checks.model import Check


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


def conform(text: str, checks: Sequence[Check]) -> tuple[str, tuple[str, ...]]:
    """`text` with the exact changes (the kinds' `conform`) that meet checks it fails, and the
    kinds of the checks so met, in the checks' order. A change is kept only when it meets its
    check and every check the text met still passes; the words stay the model's own."""
    outcomes = run_checks(text, checks)
    met: list[str] = []
    for i, check in enumerate(checks):
        change = KINDS[check.kind].conform
        if outcomes[i].passed or change is None:
            continue
        changed = change(text, check.params)
        if changed is None or changed == text:
            continue
        after = run_checks(changed, checks)
        # a change may undo an earlier one (a closing phrase with capitals in a lowercase
        # text): that one is made again, once
        for j, (now, before) in enumerate(zip(after, outcomes, strict=True)):
            again = KINDS[checks[j].kind].conform
            if before.passed and not now.passed and j != i and again is not None:
                changed = again(changed, checks[j].params) or changed
        after = run_checks(changed, checks)
        if after[i].passed and all(a.passed for a, b in zip(after, outcomes, strict=True)
                                   if b.passed):
            text, outcomes = changed, after
            met.append(check.kind)
    return text, tuple(met)

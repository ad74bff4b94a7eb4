"""The loop scored by the request's own requirements: evaluation `checks`.

When a request states requirements code can verify (a length, a case, a closing line, a
keyword...), those decide whether an answer meets it, and asking an LLM judge about them
only costs tokens. Under `checks` the checklist is the request's checks, the score of a
text is the share of them it passes (measured in code, no judge call), and the reflection is
the failed checks as measured facts with their targets ("It has 67 words; it must have at
most 49 words"), also without a call. A loop then costs the draft and its rewrites: what a
small CPU model can afford on every request. A candidate that fails a check its draft
passed is never the answer (`loops.answer.best` with `strict`), so the loop can only add
requirements met. A request that states no requirement falls back to the judge (`joint`).
"""

from __future__ import annotations

from collections.abc import Sequence

from generation.conversation import message_text, target_text
from generation.types import Message, Usage
from loops.checklists import Resolved
from loops.judges.assess import Assessment
from loops.prompting import Attempt
from loops.reflection import Reflected
from loops.trace import Reflection
from rubrics.checklist import Checklist, Evaluation, requirements_scale
from rubrics.checks import Check, CheckOutcome, run_checks
from rubrics.checks.prepass import prepass

SOURCE = "checks"


def stated_checks(query: Sequence[Message]) -> tuple[Check, ...]:
    """The checks the standing instructions and the last user turn state (earlier user turns
    asked for earlier answers), read by the pre-pass, as the checklist agents read them."""
    standing = [message_text(m) for m in query if m.get("role") in ("system", "developer")]
    return prepass("\n".join([*standing, target_text(query)]))


def resolved_for(checks: Sequence[Check], spec: Resolved | None = None) -> Resolved:
    """What the controller uses in place of a built checklist: the requirements scale (kept
    under the request's own checklist id when it chose one), nothing to build."""
    if spec is not None:
        return Resolved(requirements_scale(checks), spec.source, spec.id)
    return Resolved(requirements_scale(checks), SOURCE, "")


def summary_of(outcomes: Sequence[CheckOutcome]) -> str:
    failed = sum(not o.passed for o in outcomes)
    if not failed:
        return "The answer meets every requirement the request states."
    return (f"The answer misses {failed} of the {len(outcomes)} requirements the request "
            "states: change the text itself so that it meets each one, keeping its topic.")


class ChecksAssessor:
    """`loops.judges.assess.Assessor`'s interface with no judge: a text's score is the share of the
    request's checks it passes; its critique is the list of the failed ones."""

    def __init__(self, checks: Sequence[Check]) -> None:
        self.checks = tuple(checks)

    async def assess(self, query: Sequence[Message], text: str, checklist: Checklist,
                     want_reflection: bool, contrast: str = "") -> Assessment:
        outcomes = run_checks(text, self.checks)
        met = sum(o.passed for o in outcomes)
        dim = checklist.dimensions[0]
        evidence = "; ".join(o.line() for o in outcomes)[:600]
        evaluation = Evaluation(scores=(dim.scored(met, evidence),))
        critique = Reflection(items=(), summary=summary_of(outcomes)) if want_reflection \
            else None
        return Assessment(evaluation, critique, Usage(), 0)

    async def reflect(self, query: Sequence[Message], text: str, checklist: Checklist,
                      evaluation: Evaluation, history: list[Attempt],
                      checks: Sequence[CheckOutcome] = ()) -> Reflected:
        """The failed checks are added by the controller (`with_checks`); nothing to ask."""
        return Reflected(Reflection(items=(), summary=summary_of(checks)), Usage(), 0, False)

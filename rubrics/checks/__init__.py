"""Requirements checked in code: the registry of check kinds, running them on a text, and
finding them in a request (a deterministic pre-pass for common English and Chinese phrasings,
and the checklist agents asked under a schema built from the registry)."""

from rubrics.checks.base import CheckKind, CheckOutcome, ParamsInvalid
from rubrics.checks.kinds import KINDS, checked_params
from rubrics.checks.model import Check, CheckSource
from rubrics.checks.run import conform, pass_rate, run_checks

__all__ = ["KINDS", "Check", "CheckKind", "CheckOutcome", "CheckSource", "ParamsInvalid",
           "checked_params", "conform", "pass_rate", "run_checks"]

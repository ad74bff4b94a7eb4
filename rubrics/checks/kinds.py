"""The registry of check kinds: an explicit dict from kind name to its parameter schema and
its pure function of (text, params) -> CheckOutcome. Counts live in `counts`, keyword and
form kinds in `forms`; nothing is discovered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubrics.checks.base import (
    COUNT_PARAMS,
    RELATIONS,
    CheckKind,
    ParamsInvalid,
    Relation,
    relation_holds,
    target_words,
    validate_params,
)
from rubrics.checks.counts import COUNT_KINDS, count_cjk, count_words
from rubrics.checks.forms import FORM_KINDS

KINDS: dict[str, CheckKind] = {**COUNT_KINDS, **FORM_KINDS}


def checked_params(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` validated for `kind` (nullable ones filled); ParamsInvalid if they break it."""
    if kind not in KINDS:
        raise ParamsInvalid(f"unknown check kind {kind!r}")
    return validate_params(KINDS[kind].params_schema, params)


__all__ = ["COUNT_PARAMS", "KINDS", "RELATIONS", "CheckKind", "ParamsInvalid", "Relation",
           "checked_params", "count_cjk", "count_words", "relation_holds", "target_words"]

"""WritingBench criteria <-> Checklist, losslessly.

A WritingBench criterion is `{"name", "criteria_description", "1-2", "3-4", "5-6", "7-8",
"9-10"}`: band keys are score ranges, their values the band descriptions. Records carry a
list of them under `criteria` (first release) or `checklist` (current release).
Weight and rationale have no place in the format; they ride along as extra keys only when
they differ from the defaults, so plain WritingBench criteria round-trip unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from rubrics.checklist import Checklist, ChecklistInvalid, Dimension, Source, describe_error

_BAND_KEY = re.compile(r"^(\d+)-(\d+)$")
def record_criteria(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The criteria list of a benchmark record, whichever release it comes from."""
    criteria = record.get("checklist", record.get("criteria"))
    if not isinstance(criteria, list):
        raise ChecklistInvalid("record has no 'checklist' or 'criteria' list")
    return criteria


def dimension_from_criterion(criterion: Mapping[str, Any]) -> Dimension:
    bands = []
    for key, value in criterion.items():
        match = _BAND_KEY.match(key)
        if match:
            bands.append({"low": int(match[1]), "high": int(match[2]), "description": value})
    bands.sort(key=lambda b: b["low"])
    data: dict[str, Any] = {
        "name": criterion.get("name"),
        "description": criterion.get("criteria_description"),
        "bands": bands,
    }
    for extra in ("weight", "rationale"):
        if extra in criterion:
            data[extra] = criterion[extra]
    try:
        return Dimension.model_validate(data)
    except ValidationError as exc:
        name = criterion.get("name")
        raise ChecklistInvalid(f"criterion {name!r}: {describe_error(exc)}") from None


def criterion_from_dimension(dim: Dimension) -> dict[str, Any]:
    criterion: dict[str, Any] = {"name": dim.name, "criteria_description": dim.description}
    criterion.update({band.label: band.description for band in dim.bands})
    if dim.weight != 1.0:
        criterion["weight"] = dim.weight
    if dim.rationale:
        criterion["rationale"] = dim.rationale
    return criterion


def from_writingbench(criteria: Sequence[Mapping[str, Any]], *, language: str | None = None,
                      source: Source = "pack") -> Checklist:
    dims = tuple(dimension_from_criterion(c) for c in criteria)
    try:
        return Checklist(dimensions=dims, source=source, language=language)
    except ValidationError as exc:
        raise ChecklistInvalid(f"invalid criteria: {describe_error(exc)}") from None


def to_writingbench(checklist: Checklist) -> list[dict[str, Any]]:
    return [criterion_from_dimension(d) for d in checklist.dimensions]

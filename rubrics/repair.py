"""Fix the faults a model (or a hurried user) makes in a checklist, when the fix is obvious.

Obvious: bands out of order, small gaps or overlaps between them, bands that stop short of
the scale, duplicate or empty dimensions, too many dimensions. Not obvious, so raised for a
retry: no usable dimensions, too few of them, too few or too many bands.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from rubrics.checklist import (
    ANY,
    Checklist,
    ChecklistInvalid,
    Limits,
    Source,
    describe_error,
    name_key,
)

Scale = tuple[int, int]


def repair_checklist(raw: Any, *, limits: Limits = ANY, scale: Scale | None = None,
                     source: Source | None = None, language: str | None = None) -> Checklist:
    """A valid checklist from `raw` (a checklist, a dict or JSON text), or ChecklistInvalid.

    `scale`, when given, stretches or clamps every dimension's bands onto [low, high].
    """
    if isinstance(raw, Checklist):
        raw = raw.model_dump(mode="json")
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ChecklistInvalid(f"checklist is not valid JSON: {exc}") from None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("dimensions"), list | tuple):
        raise ChecklistInvalid("checklist must be an object with a list of dimensions")
    dims: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in raw["dimensions"]:
        dim = _repair_dimension(item, limits, scale)
        if dim is not None and name_key(dim["name"]) not in seen:
            seen.add(name_key(dim["name"]))
            dims.append(dim)
    if len(dims) > limits.max_dimensions:
        # Keep the heaviest; among equals the earlier, since models list what matters first.
        ranked = sorted(range(len(dims)), key=lambda i: -dims[i]["weight"])
        keep = sorted(ranked[:limits.max_dimensions])
        dims = [dims[i] for i in keep]
    if len(dims) < limits.min_dimensions:
        raise ChecklistInvalid(f"only {len(dims)} usable dimensions; "
                               f"at least {limits.min_dimensions} are needed")
    data = {
        "dimensions": dims,
        "source": source or raw.get("source") or "generated",
        "language": language if language is not None else raw.get("language"),
    }
    try:
        return limits.check(Checklist.model_validate(data))
    except ValidationError as exc:
        raise ChecklistInvalid(f"invalid checklist: {describe_error(exc)}") from None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _weight(value: Any) -> float:
    try:
        weight = float(value)
    except (TypeError, ValueError):
        return 1.0
    return weight if math.isfinite(weight) and weight > 0 else 1.0


def _repair_dimension(item: Any, limits: Limits, scale: Scale | None) -> dict[str, Any] | None:
    """The dimension with its faults fixed, or None when there is nothing worth keeping."""
    if not isinstance(item, Mapping):
        return None
    name = " ".join(_text(item.get("name")).split())
    bands = repair_bands(item.get("bands"), scale)
    if not name or not bands:
        return None
    if not limits.min_bands <= len(bands) <= limits.max_bands:
        raise ChecklistInvalid(f"dimension {name!r} has {len(bands)} usable bands; expected "
                               f"{limits.min_bands}..{limits.max_bands}")
    return {
        "name": name,
        "description": _text(item.get("description")) or name,
        "weight": _weight(item.get("weight", 1.0)),
        "bands": bands,
        "rationale": _text(item.get("rationale")),
    }


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return round(number) if math.isfinite(number) else None


def repair_bands(raw: Any, scale: Scale | None = None) -> list[dict[str, Any]]:
    """Bands sorted, made contiguous and (with `scale`) fitted to it; unusable ones dropped.

    A gap is closed by raising the lower band's top; an overlap by lifting the upper band's
    bottom, and a band swallowed whole by its neighbour is dropped.
    """
    bands: list[list[Any]] = []
    for item in raw if isinstance(raw, list | tuple) else ():
        if not isinstance(item, Mapping):
            continue
        low, high, text = _int(item.get("low")), _int(item.get("high")), _text(
            item.get("description"))
        if low is None or high is None or not text:
            continue
        bands.append([min(low, high), max(low, high), text])
    bands.sort(key=lambda b: (b[0], b[1]))
    if scale is not None:
        lo, hi = scale
        bands = [[max(b[0], lo), min(b[1], hi), b[2]] for b in bands if b[1] >= lo and b[0] <= hi]
    fixed: list[list[Any]] = []
    for band in bands:
        if fixed:
            prev = fixed[-1]
            if band[0] > prev[1] + 1:
                prev[1] = band[0] - 1
            elif band[0] <= prev[1]:
                band[0] = prev[1] + 1
                if band[0] > band[1]:
                    continue
        fixed.append(band)
    if scale is not None and fixed:
        fixed[0][0], fixed[-1][1] = scale
    return [{"low": lo, "high": hi, "description": text} for lo, hi, text in fixed]

"""Fix the faults a model (or a hurried user) makes in a checklist, when the fix is obvious.

Obvious: bands out of order, small gaps or overlaps between them, bands that stop short of
the scale, duplicate or empty dimensions, too many dimensions. Not obvious, so raised for a
retry: no usable dimensions, too few of them, too few or too many bands. Generated bands that
say nothing about their dimension (a place on the scale, a repeat, a piece of the prompt) are
rewritten from the dimension's own description (`specific_bands`).
"""

from __future__ import annotations

import json
import math
import re
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
SHINGLE_WORDS = 6  # a run this long copied from the agents' prompt is no band description


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


# A band "description" that names only its place on the scale says nothing about the
# dimension: what small models write when they copy the prompt's example.
_GENERIC_BAND = re.compile(
    r"^\W*(?:the\s+)?(?:(?:very\s+)?(?:lowest|lower|low|bottom|middle|mid|medium|moderate|"
    r"average|higher|high|highest|top|first|second|third|fourth|fifth|last|best|worst|poor|"
    r"fair|good|excellent|weak|strong)\s*(?:-?\s*band|level|score|tier)?|band\s*\d+(?:\s*of\s*\d+)?"
    r"|\.\.\.|…|n/?a|none|tbd)\W*$", re.IGNORECASE)
_LEVELS = ("does not meet it at all", "meets it only in small part", "meets about half of it",
           "meets most of it", "meets it fully")


def generic_band(text: str, prompt_runs: frozenset[tuple[str, ...]] = frozenset()) -> bool:
    """Whether a band description is generic: only a place on the scale, fewer than three
    words, or a run of `SHINGLE_WORDS` words copied from the prompt (`prompt_runs`)."""
    words = _words(text)
    if _GENERIC_BAND.match(text.strip()) or len(words) < 3:
        return True
    return any(tuple(words[i:i + SHINGLE_WORDS]) in prompt_runs
               for i in range(len(words) - SHINGLE_WORDS + 1))


def specific_bands(dimensions: list[dict[str, Any]],
                   prompt_runs: frozenset[tuple[str, ...]] = frozenset()) -> int:
    """Rewrite, in place, every generic band and every band repeated within its dimension or
    across dimensions as what that band of that dimension looks like (its level against the
    dimension's own description); give a rationale repeated from an earlier dimension the
    dimension's description instead. Returns how many bands were rewritten."""
    seen_bands: set[str] = set()
    seen_rationales: set[str] = set()
    fixed = 0
    for dim in dimensions:
        bands = dim.get("bands") or []
        focus = (_text(dim.get("description")) or _text(dim.get("name"))).rstrip(".")
        for k, band in enumerate(bands):
            text = _text(band.get("description"))
            key = " ".join(_words(text))
            if generic_band(text, prompt_runs) or key in seen_bands:
                band["description"] = _level_text(k, len(bands), focus)
                key = " ".join(_words(band["description"]))
                fixed += 1
            seen_bands.add(key)
        rationale = " ".join(_words(_text(dim.get("rationale"))))
        if rationale and rationale in seen_rationales:
            dim["rationale"] = f"It decides whether the response {focus[:1].lower()}{focus[1:]}."
        seen_rationales.add(" ".join(_words(_text(dim.get("rationale")))))
    return fixed


def _level_text(k: int, count: int, focus: str) -> str:
    level = _LEVELS[round(k * (len(_LEVELS) - 1) / max(1, count - 1))]
    return f"The response {level}: {focus[:1].lower()}{focus[1:]}."


def level_band(text: str) -> bool:
    """Whether a band is one `specific_bands` wrote (the agent's band was generic)."""
    return any(text.startswith(f"The response {level}: ") for level in _LEVELS)


def prompt_runs(*texts: str) -> frozenset[tuple[str, ...]]:
    """Every run of `SHINGLE_WORDS` words in `texts` (the prompts the coding agents saw)."""
    runs: set[tuple[str, ...]] = set()
    for text in texts:
        words = _words(text)
        runs.update(tuple(words[i:i + SHINGLE_WORDS])
                    for i in range(len(words) - SHINGLE_WORDS + 1))
    return frozenset(runs)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())

"""The checklist a text is judged against, and the scores a judge gives it.

A dimension's scale is derived from its bands (first low .. last high); scores are integers on
that scale. Totals and normalised totals are computed from the scores and the checklist on
demand, never stored next to them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from generation.errors import InvalidRequest
from generation.schemas import name_key
from generation.structured import describe_error
from rubrics.checks.model import Check

Source = Literal["generated", "cache", "pack", "user"]


class ChecklistInvalid(InvalidRequest):
    """A checklist (or an evaluation of one) that breaks the rubric rules and cannot be fixed."""

    def __init__(self, message: str, *, param: str | None = "reflection.checklist",
                 **kw: Any) -> None:
        super().__init__(message, param=param, **kw)


@dataclass(frozen=True, slots=True)
class Limits:
    """How many dimensions and bands per dimension a checklist may have."""

    min_dimensions: int
    max_dimensions: int
    min_bands: int
    max_bands: int

    def check(self, checklist: Checklist) -> Checklist:
        n = len(checklist.dimensions)
        if not self.min_dimensions <= n <= self.max_dimensions:
            raise ChecklistInvalid(f"checklist has {n} dimensions; expected "
                                   f"{self.min_dimensions}..{self.max_dimensions}")
        for dim in checklist.dimensions:
            if not self.min_bands <= len(dim.bands) <= self.max_bands:
                raise ChecklistInvalid(f"dimension {dim.name!r} has {len(dim.bands)} bands; "
                                       f"expected {self.min_bands}..{self.max_bands}")
        return checklist


# Generated rubrics follow the method (4..8 dimensions, 3..5 bands); packs and user
# checklists are someone's deliberate choice, so only sanity bounds apply to them.
GENERATED = Limits(4, 8, 3, 5)
ANY = Limits(1, 12, 2, 10)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class Band(_Frozen):
    low: int
    high: int
    description: str

    _description = field_validator("description")(_not_blank)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.low > self.high:
            raise ValueError(f"band {self.low}-{self.high}: low is above high")
        return self

    @property
    def label(self) -> str:
        return f"{self.low}-{self.high}"


class Dimension(_Frozen):
    name: str
    description: str
    weight: float = 1.0
    bands: tuple[Band, ...]
    rationale: str = ""

    _texts = field_validator("name", "description")(_not_blank)

    @field_validator("weight")
    @classmethod
    def _positive(cls, weight: float) -> float:
        if not math.isfinite(weight) or weight <= 0:
            raise ValueError("weight must be a positive finite number")
        return weight

    @field_validator("bands")
    @classmethod
    def _contiguous(cls, bands: tuple[Band, ...]) -> tuple[Band, ...]:
        if not ANY.min_bands <= len(bands) <= ANY.max_bands:
            raise ValueError(f"{len(bands)} bands; expected {ANY.min_bands}..{ANY.max_bands}")
        for prev, band in zip(bands, bands[1:], strict=False):
            if band.low != prev.high + 1:
                raise ValueError(f"bands {prev.label} and {band.label} must be ascending, "
                                 "contiguous and non-overlapping")
        return bands

    @property
    def scale_min(self) -> int:
        return self.bands[0].low

    @property
    def scale_max(self) -> int:
        return self.bands[-1].high

    def clamp(self, score: float) -> int:
        return min(self.scale_max, max(self.scale_min, round(score)))

    def band_index(self, score: int) -> int:
        for i, band in enumerate(self.bands):
            if band.low <= score <= band.high:
                return i
        raise ChecklistInvalid(f"score {score} is outside {self.name!r} "
                               f"({self.scale_min}..{self.scale_max})", param="evaluation")

    def scored(self, score: float, evidence: str = "") -> DimensionScore:
        """A score for this dimension, clamped onto its scale (judges stray off it)."""
        value = self.clamp(score)
        return DimensionScore(name=self.name, score=value, evidence=evidence,
                              band=self.band_index(value))


class Checklist(_Frozen):
    dimensions: tuple[Dimension, ...]
    source: Source = "generated"
    language: str | None = None
    # requirements verified in code (rubrics.checks); no judge scores them
    checks: tuple[Check, ...] = ()

    @field_validator("dimensions")
    @classmethod
    def _unique(cls, dims: tuple[Dimension, ...]) -> tuple[Dimension, ...]:
        if not ANY.min_dimensions <= len(dims) <= ANY.max_dimensions:
            raise ValueError(f"{len(dims)} dimensions; expected "
                             f"{ANY.min_dimensions}..{ANY.max_dimensions}")
        seen: set[str] = set()
        for dim in dims:
            if name_key(dim.name) in seen:
                raise ValueError(f"dimension name {dim.name!r} appears twice")
            seen.add(name_key(dim.name))
        return dims

    @property
    def total_weight(self) -> float:
        return sum(d.weight for d in self.dimensions)

    @property
    def max_score(self) -> float:
        return sum(d.weight * d.scale_max for d in self.dimensions)

    @property
    def min_score(self) -> float:
        return sum(d.weight * d.scale_min for d in self.dimensions)

    def dimension(self, name: str) -> Dimension:
        key = name_key(name)
        for dim in self.dimensions:
            if name_key(dim.name) == key:
                return dim
        raise ChecklistInvalid(f"no dimension named {name!r}", param="evaluation")


class DimensionScore(_Frozen):
    name: str
    score: int
    evidence: str = ""
    band: int


class Evaluation(_Frozen):
    scores: tuple[DimensionScore, ...]

    def validate_against(self, checklist: Checklist) -> Evaluation:
        """Every dimension scored exactly once, on its scale, in the band the score lies in."""
        by_name: dict[str, DimensionScore] = {}
        for s in self.scores:
            if name_key(s.name) in by_name:
                raise ChecklistInvalid(f"dimension {s.name!r} scored twice", param="evaluation")
            by_name[name_key(s.name)] = s
        for dim in checklist.dimensions:
            given = by_name.pop(name_key(dim.name), None)
            if given is None:
                raise ChecklistInvalid(f"dimension {dim.name!r} not scored", param="evaluation")
            if dim.band_index(given.score) != given.band:
                raise ChecklistInvalid(f"{dim.name!r}: score {given.score} is not in band "
                                       f"{given.band}", param="evaluation")
        if by_name:
            raise ChecklistInvalid(f"unknown dimensions scored: {sorted(by_name)}",
                                   param="evaluation")
        return self

    def _pairs(self, checklist: Checklist) -> list[tuple[Dimension, int]]:
        self.validate_against(checklist)
        return [(checklist.dimension(s.name), s.score) for s in self.scores]

    def total(self, checklist: Checklist) -> float:
        """S = sum of weight x score over the dimensions."""
        return sum(d.weight * score for d, score in self._pairs(checklist))

    def rebanded(self, checklist: Checklist) -> Evaluation:
        """The same scores placed in `checklist`'s bands (a judgement given on a copy of the
        rubric with other bands, e.g. without their descriptions)."""
        dims = {name_key(d.name): d for d in checklist.dimensions}
        return Evaluation(scores=tuple(
            dims[name_key(s.name)].scored(s.score, s.evidence) if name_key(s.name) in dims
            else s for s in self.scores))

    def normalised(self, checklist: Checklist) -> float:
        """Weighted mean of each score's position on its own scale, in [0, 1]."""
        # Bands are contiguous and at least two, so every scale spans more than one point.
        parts = [d.weight * (score - d.scale_min) / (d.scale_max - d.scale_min)
                 for d, score in self._pairs(checklist)]
        return min(1.0, max(0.0, sum(parts) / checklist.total_weight))


REQUIREMENTS = "Stated requirements"


def requirements_scale(checks: Sequence[Check], source: Source = "user") -> Checklist:
    """The checklist of a loop scored by its checks alone: one dimension on 0..N, N the number
    of checks, a text's score the number it meets (`loops.judges.requirements`)."""
    n = len(checks)
    width = -(-(n + 1) // ANY.max_bands)  # a band per count, grouped when there are many checks
    bands = tuple(Band(low=k, high=min(k + width - 1, n),
                       description=f"meets {k}" + (f"-{min(k + width - 1, n)}" if width > 1
                                                   else "") + f" of the {n} stated requirements")
                  for k in range(0, n + 1, width))
    return Checklist(source=source, checks=tuple(checks), dimensions=(Dimension(
        name=REQUIREMENTS, description="The requirements the request states, verified in code.",
        bands=bands),))


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def checklist_id(checklist: Checklist) -> str:
    """Content address: the same rubric has the same id whether generated, cached or packed.

    Checks count too (their kinds and params; quotes and sources aside), so caches tell apart
    two rubrics that differ only in them; a checklist without checks keeps the id it had
    before checks were."""
    content = checklist.model_dump(mode="json", include={"dimensions"})
    if checklist.checks:
        content["checks"] = sorted(c.key() for c in checklist.checks)
    return hashlib.sha256(_canonical(content).encode()).hexdigest()


def to_json(checklist: Checklist) -> str:
    return _canonical(checklist.model_dump(mode="json"))


def from_json(data: str | bytes | Mapping[str, Any], *, limits: Limits = ANY,
              source: Source | None = None, param: str = "reflection.checklist") -> Checklist:
    """Parse and validate strictly (no repair): for stored and user-given checklists."""
    try:
        raw = json.loads(data) if isinstance(data, str | bytes) else dict(data)
    except ValueError as exc:
        raise ChecklistInvalid(f"checklist is not valid JSON: {exc}", param=param) from None
    if not isinstance(raw, dict):
        raise ChecklistInvalid("checklist must be a JSON object", param=param)
    if source is not None:
        raw = {**raw, "source": source}
    try:
        checklist = Checklist.model_validate(raw)
    except ValidationError as exc:
        raise ChecklistInvalid(f"invalid checklist: {describe_error(exc)}", param=param) from None
    try:
        return limits.check(checklist)
    except ChecklistInvalid as exc:
        raise ChecklistInvalid(exc.message, param=param) from None

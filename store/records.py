"""Plain records passed into and out of the repositories; upper layers never see ORM rows.

JSON-valued fields hold whatever JSON-compatible value the caller gives (dicts, lists, str,
numbers, bool, None); they come back as dicts and lists, so tuples inside them read back as
lists. Datetimes are timezone-aware UTC on the way out; naive ones are refused on the way in.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")

CANDIDATE_KINDS = ("draft", "memory_rewrite", "rewrite")
CHECKLIST_SOURCES = ("generated", "cache", "pack", "user", "none", "checks")


def new_id() -> str:
    """A UUIDv7-shaped id as 32 hex digits: 48 bits of Unix milliseconds, then randomness.

    Python 3.11 has no `uuid.uuid7`; ids made in the same millisecond sort in random order,
    which keyset pagination tolerates because it also orders by creation time.
    """
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return f"{value:032x}"


def utcnow() -> datetime:
    return datetime.now(UTC)


def _require_aware(name: str, value: datetime | None) -> None:
    if value is not None and value.tzinfo is None:
        raise ValueError(f"{name} must be timezone-aware (use datetime.now(UTC))")


@dataclass(frozen=True, slots=True)
class CandidateRecord:
    """One text the loop produced: the draft, a memory rewrite, or a reflection rewrite.

    `scores` maps a dimension name to {"score": int, "evidence": str, ...}; `total_score` is
    the normalised total in [0, 1], None when the candidate was never evaluated.
    """

    position: int
    round: int
    kind: str
    text: str
    parent_position: int | None = None
    scores: dict[str, Any] = field(default_factory=dict)
    total_score: float | None = None
    reflection: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    latency_ms: float = 0.0
    id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        if self.kind not in CANDIDATE_KINDS:
            raise ValueError(f"candidate kind {self.kind!r} is not one of {CANDIDATE_KINDS}")


@dataclass(frozen=True, slots=True)
class LoopRecord:
    """Everything one reflection loop did, as training and the admin trace need it."""

    namespace: str
    model: str
    backend: str
    request: dict[str, Any]
    id: str = field(default_factory=new_id)
    created_at: datetime = field(default_factory=utcnow)
    finished_at: datetime | None = None
    checklist: dict[str, Any] | None = None
    checklist_source: str = "none"
    checklist_id: str | None = None
    stop_reason: str | None = None
    rounds: int = 0
    initial_score: float | None = None
    final_score: float | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)
    experiences: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    candidates: tuple[CandidateRecord, ...] = ()
    # why a stage did less than asked: [{stage, cause, detail, outcome}]
    degradations: tuple[dict[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.checklist_source not in CHECKLIST_SOURCES:
            raise ValueError(
                f"checklist_source {self.checklist_source!r} is not one of {CHECKLIST_SOURCES}"
            )
        _require_aware("created_at", self.created_at)
        _require_aware("finished_at", self.finished_at)
        # Callers naturally build lists; a tuple keeps the record immutable and comparable.
        object.__setattr__(self, "candidates", tuple(self.candidates))
        object.__setattr__(self, "degradations", tuple(self.degradations or ()))

    @property
    def score_gain(self) -> float | None:
        """Final minus initial normalised score; stored only so that lists can filter on it."""
        if self.initial_score is None or self.final_score is None:
            return None
        return self.final_score - self.initial_score


@dataclass(frozen=True, slots=True)
class LoopSummary:
    """A loop without its payloads (request, checklist, candidates): one row of a listing."""

    id: str
    namespace: str
    created_at: datetime
    finished_at: datetime | None
    model: str
    backend: str
    checklist_source: str
    checklist_id: str | None
    stop_reason: str | None
    rounds: int
    initial_score: float | None
    final_score: float | None
    score_gain: float | None
    error: str | None
    degradations: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ExperienceRecord:
    """A reflection experience: what kind of task (`key`), what worked (`text`), and usage.

    `gain_sum / gain_count` is the mean score gain when the experience was selected; the
    mean is derived, not stored. `merged_count` counts the near duplicates folded into it.
    The key's embedding is stored beside the row but is not part of the record: only an index
    rebuild reads it (`ExperienceRepository.all_for_index`).
    """

    namespace: str
    key: str
    text: str
    embedding_model: str
    score_trajectory: tuple[float, ...] = ()
    source_loop_id: str | None = None
    id: str = field(default_factory=new_id)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime | None = None  # None: same as created_at
    recalled_count: int = 0
    selected_count: int = 0
    gain_sum: float = 0.0
    gain_count: int = 0
    merged_count: int = 0

    def __post_init__(self) -> None:
        _require_aware("created_at", self.created_at)
        _require_aware("updated_at", self.updated_at)
        object.__setattr__(self, "score_trajectory", tuple(self.score_trajectory))
        if self.updated_at is None:
            object.__setattr__(self, "updated_at", self.created_at)

    @property
    def mean_gain(self) -> float | None:
        return self.gain_sum / self.gain_count if self.gain_count else None


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """What rebuilding the vector index needs for one experience.

    `embedding` is the stored key vector (float32 little-endian, for `embedding_model`) when
    asked for and present; None means the key must be embedded again.
    """

    id: str
    namespace: str
    embedding_model: str
    key: str
    text: str
    embedding: bytes | None = None


@dataclass(frozen=True, slots=True)
class ChecklistRecord:
    """A checklist as stored for reuse; `body` is the serialised Checklist."""

    namespace: str
    query_hash: str
    model: str
    source: str
    body: dict[str, Any]
    id: str = field(default_factory=new_id)
    created_at: datetime = field(default_factory=utcnow)

    def __post_init__(self) -> None:
        _require_aware("created_at", self.created_at)


RESPONSE_STATUSES = ("completed", "incomplete", "failed", "in_progress", "cancelled", "queued")


@dataclass(frozen=True, slots=True)
class ResponseRecord:
    """A stored Responses API response: the body as it was returned, the items it was made
    from (`input_items`: the whole conversation it continued, earlier turns included, so a
    chain never needs walking) and the items it made (`output_items`). Every item carries its
    own `id`; the caller mints the response id."""

    id: str
    namespace: str
    model: str
    status: str
    body: dict[str, Any]
    input_items: tuple[dict[str, Any], ...] = ()
    output_items: tuple[dict[str, Any], ...] = ()
    previous_response_id: str | None = None
    created_at: datetime = field(default_factory=utcnow)

    def __post_init__(self) -> None:
        if self.status not in RESPONSE_STATUSES:
            raise ValueError(f"response status {self.status!r} is not one of {RESPONSE_STATUSES}")
        _require_aware("created_at", self.created_at)
        for item in (*self.input_items, *self.output_items):
            if not isinstance(item.get("id"), str) or not item["id"]:
                raise ValueError("every stored response item needs a string id")
        object.__setattr__(self, "input_items", tuple(self.input_items))
        object.__setattr__(self, "output_items", tuple(self.output_items))


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing; unpacks as `items, next_cursor`. No next cursor: last page."""

    items: tuple[T, ...]
    next_cursor: str | None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.items, self.next_cursor))

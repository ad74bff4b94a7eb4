"""What the pages show, derived from the stored records; plain data, no markup.

Stored JSON (the request, the checklist, scores, reflections) is read defensively: records
written by older versions may lack fields, and a page should still render.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from app.admin.ui.charts import Point, trajectory_chart
from loops.record import (
    CONFORMED_KEY,
    CUT_KEY,
    LOOPING_KEY,
    RETRIED_KEY,
    SAME_AS_KEY,
    SHRUNK_KEY,
    UNSUPPORTED_KEY,
    answer_of,
    dimension_scores,
    stored_checks,
)
from store.records import CandidateRecord, ExperienceRecord, LoopRecord


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    text: str


@dataclass(frozen=True, slots=True)
class BandView:
    label: str
    description: str


@dataclass(frozen=True, slots=True)
class DimensionView:
    name: str
    description: str
    weight: float
    rationale: str
    bands: tuple[BandView, ...]


@dataclass(frozen=True, slots=True)
class ScoreView:
    dimension: str
    score: Any
    band: str
    evidence: str


@dataclass(frozen=True, slots=True)
class ActionView:
    dimension: str
    evidence: str
    objective: str
    actions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckView:
    kind: str
    passed: bool
    detail: str   # "45 words; needs at least 120 words"
    quote: str


@dataclass(frozen=True, slots=True)
class CandidateView:
    position: int
    round: int
    kind: str
    parent: int | None
    total: float | None
    best: bool
    text: str
    scores: tuple[ScoreView, ...]
    summary: str
    reflection: tuple[ActionView, ...]
    checks: tuple[CheckView, ...] = ()
    shrunk: bool = False
    looping: bool = False
    conformed: tuple[str, ...] = ()   # check kinds met in code on the model's text
    notes: tuple[str, ...] = ()       # how it was judged: once for its text, asked again...

    @property
    def checks_passed(self) -> int:
        return sum(c.passed for c in self.checks)


@dataclass(frozen=True, slots=True)
class LoopView:
    record: LoopRecord
    messages: tuple[Message, ...]
    threshold: float | None
    dimensions: tuple[DimensionView, ...]
    candidates: tuple[CandidateView, ...]
    chart: Markup
    experiences: str  # pretty JSON of what memory recalled and selected; "" when nothing


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def message_text(content: Any) -> str:
    """A chat message's content as text: a string, or the text parts of a parts list."""
    if isinstance(content, list):
        return "\n".join(_text(part.get("text")) if isinstance(part, dict) else _text(part)
                         for part in content)
    return _text(content)


def request_threshold(request: dict[str, Any]) -> float | None:
    reflection = request.get("reflection")
    value = reflection.get("threshold") if isinstance(reflection, dict) else None
    return float(value) if isinstance(value, int | float) else None


def _bands(dimension: dict[str, Any]) -> tuple[BandView, ...]:
    return tuple(BandView(f"{b.get('low')}–{b.get('high')}", _text(b.get("description")))
                 for b in dimension.get("bands") or () if isinstance(b, dict))


def dimensions(checklist: dict[str, Any] | None) -> tuple[DimensionView, ...]:
    dims = (checklist or {}).get("dimensions") or ()
    return tuple(DimensionView(_text(d.get("name")), _text(d.get("description")),
                               float(d.get("weight", 1.0)), _text(d.get("rationale")),
                               _bands(d))
                 for d in dims if isinstance(d, dict))


def _band_label(dims: Sequence[DimensionView], name: str, band: Any) -> str:
    for dim in dims:
        if dim.name == name and isinstance(band, int) and 0 <= band < len(dim.bands):
            return dim.bands[band].label
    return ""


def candidate_view(c: CandidateRecord, dims: Sequence[DimensionView], best: bool) -> CandidateView:
    scores = tuple(
        ScoreView(name, s.get("score"), _band_label(dims, name, s.get("band")),
                  _text(s.get("evidence")))
        for name, s in dimension_scores(c.scores).items() if isinstance(s, dict))
    reflection = c.reflection or {}
    items = tuple(ActionView(_text(i.get("dimension")), _text(i.get("evidence")),
                             _text(i.get("objective")), tuple(map(_text, i.get("actions") or ())))
                  for i in reflection.get("items") or () if isinstance(i, dict))
    checks = tuple(CheckView(o.kind, o.passed, f"{o.measured}; needs {o.target}", o.quote)
                   for o in stored_checks(c.scores))
    return CandidateView(c.position, c.round, c.kind, c.parent_position, c.total_score, best,
                         c.text, scores, _text(reflection.get("summary")), items, checks,
                         bool((c.scores or {}).get(SHRUNK_KEY)),
                         bool((c.scores or {}).get(LOOPING_KEY)),
                         tuple(map(_text, (c.scores or {}).get(CONFORMED_KEY) or ())),
                         candidate_notes(c.scores or {}))


def candidate_notes(scores: dict[str, Any]) -> tuple[str, ...]:
    """What the reserved marks of a stored candidate say, in words."""
    notes = []
    if scores.get(SAME_AS_KEY) is not None:
        notes.append(f"The same text as #{scores[SAME_AS_KEY]}: its judgement is reused, not "
                     "asked again.")
    if scores.get(RETRIED_KEY):
        notes.append("The reviser first gave its parent back unchanged and was asked again.")
    if scores.get(UNSUPPORTED_KEY):
        notes.append("The judge scored it higher without quoting it: the gain is not counted.")
    if scores.get(CUT_KEY):
        notes.append("The call that wrote it stopped at the token limit: its end may be cut "
                     "(export leaves such an answer out of SFT).")
    return tuple(notes)


def loop_chart(record: LoopRecord, threshold: float | None) -> Markup:
    points = [Point(c.total_score, f"#{c.position}", f"#{c.position} {c.kind}, round {c.round}")
              for c in record.candidates if c.total_score is not None]
    return trajectory_chart(points, title=f"Score trajectory of loop {record.id}",
                            chart_id="loop-chart", threshold=threshold)


def loop_view(record: LoopRecord) -> LoopView:
    messages = tuple(Message(_text(m.get("role")), message_text(m.get("content")))
                     for m in record.request.get("messages") or () if isinstance(m, dict))
    threshold = request_threshold(record.request)
    dims = dimensions(record.checklist)
    answer = answer_of(record.candidates)
    best = answer.position if answer is not None else None
    candidates = tuple(candidate_view(c, dims, c.position == best) for c in record.candidates)
    experiences = json.dumps(record.experiences, indent=2, ensure_ascii=False) \
        if record.experiences else ""
    return LoopView(record, messages, threshold, dims, candidates,
                    loop_chart(record, threshold), experiences)


def experience_chart(record: ExperienceRecord, threshold: float | None) -> Markup:
    points = [Point(s, str(i), f"step {i}") for i, s in enumerate(record.score_trajectory)]
    return trajectory_chart(points, title=f"Score trajectory of experience {record.id}",
                            chart_id="experience-chart", threshold=threshold)

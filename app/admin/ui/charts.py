"""The score-trajectory chart as inline SVG: no script, no build step, no chart library.

Every piece of text goes through `Markup.format`, which escapes its arguments, so labels that
come from users (dimension names, kinds, titles) cannot inject markup into the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 52, 100, 16, 44  # the right margin holds the threshold label
Y_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True, slots=True)
class Point:
    score: float      # normalised, [0, 1]
    label: str        # short: the x-axis tick
    detail: str = ""  # longer: the point's tooltip


def _x(index: int, count: int) -> float:
    width = WIDTH - LEFT - RIGHT
    if count == 1:
        return LEFT + width / 2
    return LEFT + width * index / (count - 1)


def _y(score: float) -> float:
    clamped = min(1.0, max(0.0, score))
    return TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - clamped)


def running_best(scores: Sequence[float]) -> list[float]:
    out: list[float] = []
    for score in scores:
        out.append(max(score, out[-1]) if out else score)
    return out


def _axes(points: Sequence[Point]) -> list[Markup]:
    parts = []
    right = WIDTH - RIGHT
    for tick in Y_TICKS:
        y = _y(tick)
        parts.append(Markup(
            '<line class="grid" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#e3e6ea"/>'
            '<text class="tick" x="{}" y="{:.1f}" text-anchor="end" dominant-baseline="middle"'
            ' font-size="11" fill="#5b6470">{:.2f}</text>'
        ).format(LEFT, y, right, y, LEFT - 8, y, tick))
    base = HEIGHT - BOTTOM
    parts.append(Markup('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#8a929c"/>')
                 .format(LEFT, base, right, base))
    for i, point in enumerate(points):
        parts.append(Markup('<text class="tick" x="{:.1f}" y="{}" text-anchor="middle"'
                            ' font-size="11" fill="#5b6470">{}</text>')
                     .format(_x(i, len(points)), base + 16, point.label))
    parts.append(Markup('<text class="axis-title" x="{:.1f}" y="{}" text-anchor="middle"'
                        ' font-size="11" fill="#5b6470">candidate</text>')
                 .format(LEFT + (right - LEFT) / 2, HEIGHT - 6))
    parts.append(Markup('<text class="axis-title" x="12" y="{:.1f}" text-anchor="middle"'
                        ' font-size="11" fill="#5b6470" transform="rotate(-90 12 {:.1f})">'
                        'score</text>').format((TOP + base) / 2, (TOP + base) / 2))
    return parts


def trajectory_chart(points: Sequence[Point], *, title: str, chart_id: str,
                     threshold: float | None = None) -> Markup:
    """An accessible SVG line chart: one circle per score, a line through the running best,
    and the threshold as a dashed line when it is known. No points: a short note instead."""
    if not points:
        return Markup('<p class="muted">No scores recorded.</p>')
    scores = [p.score for p in points]
    best = running_best(scores)
    summary = "Scores in order: " + ", ".join(f"{s:.2f}" for s in scores)
    summary += f". Best {best[-1]:.2f}."
    if threshold is not None:
        summary += f" Threshold {threshold:.2f}."
    parts = [Markup(
        '<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" role="img"'
        ' aria-labelledby="{}-title {}-desc"><title id="{}-title">{}</title>'
        '<desc id="{}-desc">{}</desc>'
    ).format(WIDTH, HEIGHT, chart_id, chart_id, chart_id, title, chart_id, summary)]
    parts.extend(_axes(points))
    if threshold is not None:
        y = _y(threshold)
        parts.append(Markup(
            '<line class="threshold" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#c2410c"'
            ' stroke-width="1.5" stroke-dasharray="6 4"/><text class="threshold-label" x="{}"'
            ' y="{:.1f}" dominant-baseline="middle" font-size="11" fill="#c2410c">'
            'threshold {:.2f}</text>'
        ).format(LEFT, y, WIDTH - RIGHT, y, WIDTH - RIGHT + 8, y, threshold))
    coords = " ".join(f"{_x(i, len(best)):.1f},{_y(s):.1f}" for i, s in enumerate(best))
    parts.append(Markup('<polyline class="best" points="{}" fill="none" stroke="#2563eb"'
                        ' stroke-width="2"/>').format(coords))
    for i, point in enumerate(points):
        tip = f"{point.detail or point.label}: {point.score:.2f}"
        parts.append(Markup(
            '<circle class="score" cx="{:.1f}" cy="{:.1f}" r="5" fill="#ffffff" stroke="#1e3a8a"'
            ' stroke-width="2"><title>{}</title></circle>'
        ).format(_x(i, len(points)), _y(point.score), tip))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)

"""PNG figures of a run: the radar of Writer-R1's Figure 2, the rounds histogram, the sweeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure  # Agg canvas, no pyplot state: files only, never a display

from evals.methods import METHODS
from evals.queries import FOCI

AXES = ("Overall", *(f"D{i}" for i in range(1, 7)), "R1 style", "R2 format", "R3 length")
MAX_RADAR = 8


def _axis_values(variant: dict[str, Any]) -> list[float]:
    s = variant["scores"]
    values = [s["overall"], *(s["domains"][f"D{i}"] for i in range(1, 7)),
              *(s["requirements"][f]["R"] for f in FOCI)]
    return [np.nan if v is None else 10 * v for v in values]


def _radar_variants(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """All of them when few; else, per method, the deepest loop at the first threshold."""
    scored = [v for v in variants if v["scores"]["overall"] is not None]
    if len(scored) <= MAX_RADAR:
        return scored
    picked = []
    for method in METHODS:
        mine = [v for v in scored if v.get("method") == method]
        if mine:
            picked.append(max(mine, key=lambda v: (v.get("max_rounds") or 0,
                                                   -(v.get("threshold") or 0))))
    return picked


def radar_axes(variants: list[dict[str, Any]]) -> tuple[list[str], list[list[float | None]]]:
    """The axes at least one variant has data for, and each variant's values on them (None
    where it has none: its polygon skips that axis rather than drawing a zero)."""
    values = [_axis_values(v) for v in variants]
    keep = [i for i in range(len(AXES)) if any(not np.isnan(row[i]) for row in values)]
    return ([AXES[i] for i in keep],
            [[None if np.isnan(row[i]) else row[i] for i in keep] for row in values])


def radar(summary: dict[str, Any], path: Path) -> Path | None:
    variants = _radar_variants(summary["variants"])
    if not variants:
        return None
    axes, values = radar_axes(variants)
    angles = np.linspace(0, 2 * np.pi, len(axes), endpoint=False)
    fig = Figure(figsize=(7, 7))
    ax = fig.add_subplot(projection="polar")
    low = 10.0
    for variant, row in zip(variants, values, strict=True):
        points = [(a, v) for a, v in zip(angles, row, strict=True) if v is not None]
        xs = [a for a, _ in points] + [points[0][0]]
        ys = [v for _, v in points] + [points[0][1]]
        low = min(low, *ys)
        ax.plot(xs, ys, "o-" if len(points) < len(axes) else "-", linewidth=1.8,
                markersize=3, label=variant["key"])
        ax.fill(xs, ys, alpha=0.08)
    ax.set_xticks(angles, axes)
    ax.set_ylim(max(0.0, np.floor(low) - 1), 10)
    model = summary.get("options", {}).get("model", "")
    ax.set_title(f"WritingBench (1–10): {model}", pad=24)
    ax.legend(loc="upper right", bbox_to_anchor=(1.32, 1.12), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def rounds_histogram(summary: dict[str, Any], path: Path) -> Path | None:
    loops = [v for v in summary["variants"] if v.get("method") not in (None, "direct")
             and v["cost"]["rounds_histogram"]]
    if not loops:
        return None
    top = max(int(k) for v in loops for k in v["cost"]["rounds_histogram"])
    xs = np.arange(top + 1)
    width = 0.8 / len(loops)
    fig = Figure(figsize=(8, 4.5))
    ax = fig.add_subplot()
    for i, variant in enumerate(loops):
        hist = {int(k): n for k, n in variant["cost"]["rounds_histogram"].items()}
        ax.bar(xs + i * width - 0.4 + width / 2, [hist.get(x, 0) for x in xs], width,
               label=f"{variant['key']} (mean {variant['cost']['rounds']:.2f})")
    ax.set_xticks(xs)
    ax.set_xlabel("reflection rounds used")
    ax.set_ylabel("queries")
    ax.set_title("Rounds per query")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def _sweep(summary: dict[str, Any], axis: str, other: str, path: Path,
           xlabel: str) -> Path | None:
    loops = [v for v in summary["variants"] if v.get("method") not in (None, "direct")
             and v["scores"]["overall"] is not None]
    if len({v[axis] for v in loops}) < 2:
        return None
    fig = Figure(figsize=(11, 4.5))
    score_ax, rounds_ax = fig.subplots(1, 2)
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for v in loops:
        groups.setdefault((v["method"], v[other]), []).append(v)
    for (method, fixed), members in groups.items():
        members.sort(key=lambda v: v[axis])
        xs = [v[axis] for v in members]
        label = f"{method} ({'τ' if other == 'threshold' else 'T'}={fixed:g})"
        score_ax.plot(xs, [10 * v["scores"]["overall"] for v in members], "o-", label=label)
        rounds_ax.plot(xs, [v["cost"]["rounds"] for v in members], "o-", label=label)
    direct = next((v for v in summary["variants"] if v.get("method") == "direct"
                   and v["scores"]["overall"] is not None), None)
    if direct is not None:
        score_ax.axhline(10 * direct["scores"]["overall"], color="grey", linestyle="--",
                         label="direct")
    ticks = sorted({v[axis] for v in loops})
    score_ax.set_xticks(ticks)
    rounds_ax.set_xticks(ticks)
    score_ax.set(xlabel=xlabel, ylabel="WritingBench overall (1–10)", title="Score")
    rounds_ax.set(xlabel=xlabel, ylabel="mean rounds", title="Rounds used")
    score_ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def draw_all(summary: dict[str, Any], out: Path) -> list[Path]:
    made = [radar(summary, out / "radar.png"),
            rounds_histogram(summary, out / "rounds.png"),
            _sweep(summary, "max_rounds", "threshold", out / "sweep_max_rounds.png",
                   "max rounds T"),
            _sweep(summary, "threshold", "max_rounds", out / "sweep_threshold.png",
                   "threshold τ")]
    return [p for p in made if p is not None]

"""Stage reports: `report.json`, `metrics.jsonl` (TRL's log history) and PNG plots, and the
`report` subcommand that prints a run's summary table and redraws its plots."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from training.errors import UsageError

# (panel title, log-history keys drawn in it); a panel appears when any key was logged.
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("loss", ("loss",)),
    ("reward (mean ± std)", ("reward",)),
    ("KL to the reference", ("kl",)),
    ("clip ratio", ("clip_ratio/region_mean", "clip_ratio/low_mean", "clip_ratio/high_mean")),
    ("grad norm", ("grad_norm",)),
    ("completion length (tokens)", ("completions/mean_length",)),
    ("groups with zero reward std", ("frac_reward_zero_std",)),
    ("learning rate", ("learning_rate",)),
)
TRAINING_PNG, HOLDOUT_PNG = "training.png", "holdout.png"
PIPELINE = ("export", "sft", "gspo", "dpo")  # stage directories of a run, in the order made


def _series(history: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    points = [(h["step"], h[key]) for h in history
              if key in h and isinstance(h[key], int | float) and math.isfinite(h[key])]
    return [p[0] for p in points], [p[1] for p in points]


def plot_training(history: list[dict[str, Any]], path: Path, title: str) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    panels = [(t, keys) for t, keys in PANELS if any(_series(history, k)[0] for k in keys)]
    if not panels:
        return False
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax, (name, keys) in zip(axes.flat, panels, strict=False):
        for key in keys:
            steps, values = _series(history, key)
            if not steps:
                continue
            ax.plot(steps, values, marker="o", markersize=3, label=key)
            if key == "reward":
                _, std = _series(history, "reward_std")
                if len(std) == len(values):
                    low = [v - s for v, s in zip(values, std, strict=True)]
                    high = [v + s for v, s in zip(values, std, strict=True)]
                    ax.fill_between(steps, low, high, alpha=0.25, label="± std")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        if len(keys) > 1 or name.startswith("reward"):
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plot_holdout(before: float | None, after: float | None, label: str, path: Path) -> bool:
    if before is None or after is None:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3.2))
    bars = ax.bar(["before", "after"], [before, after], color=["#999999", "#3b7dd8"])
    ax.bar_label(bars, fmt="%.3f")
    ax.set_ylabel(label)
    ax.set_title(f"held-out {label}")
    ax.margins(y=0.2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _holdout(summary: dict[str, Any]) -> tuple[str, float | None, float | None]:
    for key, label in (("holdout_reward", "reward"), ("holdout_loss", "loss")):
        if isinstance(summary.get(key), dict):
            return label, summary[key].get("before"), summary[key].get("after")
    return "", None, None


def draw(out: Path, stage: str, history: list[dict[str, Any]],
         summary: dict[str, Any]) -> list[str]:
    plots = []
    name = out.name.removesuffix(".partial")  # drawn before the stage directory is renamed
    if plot_training(history, out / TRAINING_PNG, stage if name == stage else f"{stage}: {name}"):
        plots.append(TRAINING_PNG)
    label, before, after = _holdout(summary)
    if plot_holdout(before, after, label, out / HOLDOUT_PNG):
        plots.append(HOLDOUT_PNG)
    return plots


def write_stage_report(out: Path, stage: str, history: list[dict[str, Any]],
                       summary: dict[str, Any]) -> dict[str, Any]:
    """report.json, metrics.jsonl and the plots (by the main process of a distributed run)."""
    if int(os.environ.get("RANK", "0")) != 0:
        return {}
    with (out / "metrics.jsonl").open("w") as f:
        for entry in history:
            f.write(json.dumps(entry) + "\n")
    last = {k: v for h in history for k, v in h.items() if k not in ("epoch", "step")}
    report = {"stage": stage, "summary": summary, "last_logged": last,
              "steps_logged": len(history), "plots": draw(out, stage, history, summary)}
    (out / "report.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


def stage_dirs(root: Path) -> list[Path]:
    """`root` itself when it is a stage directory, else its stage subdirectories."""
    if (root / "report.json").is_file():
        return [root]
    found = [p for p in root.iterdir() if (p / "report.json").is_file()]
    # The order a run makes them in; other directories after, by name.
    return sorted(found, key=lambda p: (PIPELINE.index(p.name) if p.name in PIPELINE
                                        else len(PIPELINE), p.name))


def _notes(summary: dict[str, Any]) -> str:
    """What a stage's row cannot show in its columns: export's counts, GSPO's flat groups."""
    counts = summary.get("counts")
    if isinstance(counts, dict):
        return (f"{counts.get('kept')} of {counts.get('loops_read')} loops kept, "
                f"{counts.get('prompts')} prompts")
    share = summary.get("zero_std_group_share")
    if isinstance(share, int | float):
        return f"zero-variance groups {share:.0%}"
    return ""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def table(dirs: list[Path]) -> str:
    lines = [f"{'stage':<8} {'steps':>6} {'loss':>9} {'reward':>9} {'held-out':>9} "
             f"{'before':>9} {'after':>9}  plots / notes"]
    for directory in dirs:
        report = json.loads((directory / "report.json").read_text())
        summary, last = report.get("summary", {}), report.get("last_logged", {})
        label, before, after = _holdout(summary)
        lines.append(
            f"{report['stage']:<8} {_fmt(summary.get('steps')):>6} "
            f"{_fmt(summary.get('train_loss', last.get('loss'))):>9} "
            f"{_fmt(last.get('reward')):>9} {label or '-':>9} {_fmt(before):>9} "
            f"{_fmt(after):>9}  "
            + "; ".join(x for x in (", ".join(report.get("plots", [])), _notes(summary)) if x))
    return "\n".join(lines)


def run_report(config: Any) -> int:
    root = Path(config.run_dir)
    if not root.is_dir():
        raise UsageError(f"{root}: no such run directory")
    dirs = stage_dirs(root)
    if not dirs:
        raise UsageError(f"{root} holds no stage reports (report.json); is it a run directory?")
    for directory in dirs:
        report = json.loads((directory / "report.json").read_text())
        metrics = directory / "metrics.jsonl"
        if metrics.is_file():
            history = [json.loads(line) for line in metrics.read_text().splitlines() if line]
            draw(directory, report["stage"], history, report.get("summary", {}))
    print(table(dirs))
    return 0

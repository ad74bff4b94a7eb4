"""Stage `report`: every stage's figures in one object (the flywheel's JSON line), a markdown
table (report.md) and three plots: the dev split's pass rate per check kind at each DPO round
(dpo_rounds.png), GSPO's reward and pass rate per step (gspo.png), and the held-out pass rate
per check kind before and after training (heldout_kinds.png)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from training.flywheel.evaluate import METHODS
from training.stages.checkpoints import write_json

LABELS = {"base_direct": "base direct", "base_conformed": "base direct + checks met in code",
          "base_mrpo": "base MRPO", "trained_direct": "trained direct",
          "trained_conformed": "trained direct + checks met in code",
          "trained_mrpo": "trained MRPO"}
KEPT = ("prompts", "errors", "prompt_pass_rate", "check_pass_rate", "tokens", "seconds",
        "looping_share", "distinct_2", "words", "length_vs_base", "loop")
PASS_KEYS = (("reward", "reward (share of checks passed, less off the length band or when "
                        "cut, 0 if the task is dropped)"),
             ("checks/all_passed", "every check passed"),
             ("checks/dropped_task", "dropped the task"),
             ("checks/off_length", "off the length band"),
             ("checks/cut", "cut at the token limit"))


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text("utf-8")) if path.is_file() else {}


def _history(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def per_step(history: list[dict[str, Any]]) -> dict[str, list[float]]:
    """GSPO's logged reward and pass rates, one value per logged training step."""
    steps = [h for h in history if "reward" in h and "step" in h]
    out = {"step": [h["step"] for h in steps]}
    for key, _ in PASS_KEYS:
        out[key] = [round(h[key], 4) if key in h else None for h in steps]
    return out


def figures(run: Path) -> dict[str, Any]:
    """The run's figures from what its stages wrote."""
    prompts = _json(run / "prompts" / "manifest.json")
    export = _json(run / "export" / "manifest.json").get("counts", {})
    sft = _json(run / "sft" / "report.json").get("summary", {})
    gspo = _json(run / "gspo" / "report.json").get("summary", {})
    dpo = _json(run / "dpo" / "report.json").get("summary", {})
    evaluation = _json(run / "evaluate" / "summary.json")
    methods = evaluation.get("methods", {})
    return {
        "prompts": {"train": prompts.get("prompts", {}).get("train"),
                    "heldout": prompts.get("prompts", {}).get("heldout"),
                    "evaluated": evaluation.get("prompts"),
                    "evaluated_checks": evaluation.get("checks")},
        "record": _json(run / "record" / "summary.json"),
        "export": {k: export.get(k) for k in ("loops_read", "prompts", "gained", "left_out",
                                              "sft", "pairs")},
        "variants": _json(run / "sft-data" / "manifest.json").get("counts", {}).get("variants"),
        "sft": {"steps": sft.get("steps"), "train_loss": sft.get("train_loss"),
                "holdout_loss": sft.get("holdout_loss"), "rows": sft.get("rows")},
        "dpo": dpo_figures(dpo),
        "gspo": {"steps": gspo.get("steps"), "train_loss": gspo.get("train_loss"),
                 "completions": gspo.get("completions"),
                 "reward_stats": gspo.get("reward_stats"),
                 "zero_std_group_share": gspo.get("zero_std_group_share"),
                 "dev": gspo.get("holdout_checks"),
                 "per_step": per_step(_history(run / "gspo" / "metrics.jsonl"))},
        "evaluation": {
            "max_rounds": evaluation.get("max_rounds"), "max_tokens": evaluation.get("max_tokens"),
            "methods": {m: {**{k: methods[m].get(k) for k in KEPT if k in methods[m]},
                            "per_kind": {k: v["pass_rate"]
                                         for k, v in methods[m]["per_kind"].items()}}
                        for m in METHODS if m in methods},
            "pair_judge": evaluation.get("pair_judge")},
    }


def dpo_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """Per DPO round: the dev split's figures of the policy it started from, its pairs and
    what the trainer reported."""
    rounds = []
    for entry in summary.get("rounds", []):
        trainer = entry.get("dpo") or {}
        rounds.append({"round": entry["round"], "dev": entry["dev"],
                       "pairs": entry.get("pairs"), "by_source": entry.get("by_source"),
                       "by_kind": entry.get("by_kind"), "samples": entry.get("samples"),
                       "steps": trainer.get("steps"), "train_loss": trainer.get("train_loss")})
    return {"rounds": rounds, "dev_prompts": summary.get("dev_prompts"),
            **({"skipped": summary["skipped"]} if "skipped" in summary else {})}


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown(data: dict[str, Any], evaluation: dict[str, Any],
             seconds: dict[str, float]) -> str:
    methods = evaluation.get("methods", {})
    lines = [f"# Flywheel: {data['prompts']['evaluated']} held-out prompts, "
             f"{data['prompts']['evaluated_checks']} checks "
             f"(R = {evaluation.get('max_rounds')}, T = {evaluation.get('max_tokens')})", "",
             "| method | prompt pass | check pass | tokens | seconds | looping | distinct-2 "
             "| words (× base) |", "|---|---|---|---|---|---|---|---|"]
    for m in METHODS:
        f = methods.get(m)
        if f:
            lines.append(f"| {LABELS[m]} | {_f(f['prompt_pass_rate'])} | "
                         f"{_f(f['check_pass_rate'])} | {_f(f['tokens'], 1)} | "
                         f"{_f(f['seconds'], 2)} | {_f(f['looping_share'])} | "
                         f"{_f(f['distinct_2'])} | {_f(f['words'], 1)} "
                         f"({_f(f['length_vs_base'], 2)}) |")
    kinds = sorted({k for f in methods.values() for k in f.get("per_kind", {})})
    lines += ["", "Check pass rate per kind:", "",
              "| kind | checks | " + " | ".join(LABELS[m] for m in METHODS) + " |",
              "|---|---|" + "---|" * len(METHODS)]
    for kind in kinds:
        n = methods["base_direct"]["per_kind"].get(kind, {}).get("checks")
        cells = [_f(methods[m]["per_kind"].get(kind, {}).get("pass_rate")) for m in METHODS]
        lines.append(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    pair = data["evaluation"].get("pair_judge") or {}
    lines += ["", "Pair judge, trained direct against base direct: " + (
        pair["skipped"] if "skipped" in pair else
        f"{pair['wins']} wins, {pair['losses']} losses, {pair['ties']} ties, "
        f"{pair['failed']} without a verdict; wins + half ties {_f(pair['win_rate'])} "
        f"({pair['judge']})")]
    record, sft, gspo = data["record"], data["sft"], data["gspo"]
    more = data.get("variants") or {}
    lines += ["", "Training:", "",
              f"- record: {record.get('prompts')} loops, draft / answer prompt pass "
              f"{_f(record.get('draft_prompt_pass_rate'))} / "
              f"{_f(record.get('answer_prompt_pass_rate'))}, "
              f"{record.get('answer_is_another_text')} answers another text than the draft",
              f"- export: {data['export'].get('prompts')} prompts, "
              f"{data['export'].get('gained')} loops gained on their draft",
              f"- variants: {more.get('variants')} more SFT rows, "
              f"{more.get('answers_changed_in_code')} of them with a requirement met on the "
              f"answer in code, {more.get('relabelled')} with one the answer met as it stood"
              + (f"; {more['recovered']} from {more['recovered_answers']} recorded answers "
                 "export left out" if "recovered" in more else ""),
              f"- sft: {sft.get('steps')} steps, held-out loss "
              f"{_f((sft.get('holdout_loss') or {}).get('before'))} → "
              f"{_f((sft.get('holdout_loss') or {}).get('after'))}",
              *_dpo_lines(data["dpo"]),
              f"- gspo: {gspo.get('steps')} steps, {gspo.get('completions')} completions",
              "", "| stage | seconds |", "|---|---|"]
    lines += [f"| {name} | {_f(s, 1)} |" for name, s in seconds.items()]
    return "\n".join(lines) + "\n"


def _dpo_lines(dpo: dict[str, Any]) -> list[str]:
    if not dpo["rounds"]:
        return [f"- dpo: {dpo.get('skipped', 'no round')}"]
    lines = [f"- dpo: {len(dpo['rounds']) - 1} rounds; dev split ({dpo['dev_prompts']} "
             "training prompts no stage trains on), greedy:", "",
             "| round | dev prompt pass | looping | words | pairs (made / sampled) | steps |",
             "|---|---|---|---|---|---|"]
    for r in dpo["rounds"]:
        by = r.get("by_source") or {}
        pairs = "–" if r["pairs"] is None else \
            f"{r['pairs']} ({by.get('made', 0)} / {by.get('sampled', 0)})"
        lines.append(f"| {r['round']} | {_f(r['dev']['prompt_pass_rate'])} | "
                     f"{_f(r['dev']['looping_share'])} | {_f(r['dev']['words'], 1)} | "
                     f"{pairs} | {_f(r['steps'])} |")
    return [*lines, ""]


def plot_dpo(dpo: dict[str, Any], path: Path) -> bool:
    rounds = dpo["rounds"]
    if len(rounds) < 2:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    kinds = sorted({k for r in rounds for k in r["dev"]["per_kind"]})
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    xs = [r["round"] for r in rounds]
    ax.plot(xs, [r["dev"]["prompt_pass_rate"] for r in rounds], color="black", linewidth=2.5,
            marker="o", label="ALL (prompt level)")
    for kind in kinds:
        ax.plot(xs, [r["dev"]["per_kind"].get(kind) for r in rounds], marker=".",
                linewidth=1, label=kind)
    ax.set_xlabel("DPO round (0: the policy DPO starts from)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("dev pass rate")
    ax.set_title("Dev split, greedy, at each DPO round")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_gspo(steps: dict[str, list[Any]], path: Path) -> bool:
    if not steps["step"]:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for key, label in PASS_KEYS:
        points = [(s, v) for s, v in zip(steps["step"], steps[key], strict=True) if v is not None]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", markersize=3, label=label)
    ax.set_xlabel("GSPO step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("GSPO on the training prompts (checks reward)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_kinds(methods: dict[str, Any], path: Path) -> bool:
    shown = [m for m in ("base_direct", "base_mrpo", "trained_direct", "trained_mrpo")
             if m in methods]
    if not shown:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = sorted({k for m in shown for k in methods[m]["per_kind"]})
    counts = methods[shown[0]]["per_kind_n"]
    labels = ["ALL (prompt level)", "ALL (check level)",
              *(f"{k} (n={counts.get(k, 0)})" for k in kinds)]  # top to bottom
    fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.36 * len(labels)))
    height = 0.8 / len(shown)
    colors = {"base_direct": "#9e9e9e", "base_mrpo": "#d0d0d0", "trained_direct": "#2f6fd0",
              "trained_mrpo": "#9cbcec"}
    for i, m in enumerate(shown):
        f = methods[m]
        values = [f["prompt_pass_rate"], f["check_pass_rate"],
                  *(f["per_kind"].get(k) for k in kinds)]
        ys = [len(labels) - 1 - r + 0.4 - height * (i + 0.5) for r in range(len(labels))]
        ax.barh(ys, [v or 0.0 for v in values], height=height, color=colors[m], label=LABELS[m])
    ax.set_yticks([len(labels) - 1 - r for r in range(len(labels))], labels, fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_xlabel("held-out pass rate")
    ax.set_title("Held-out pass rate per check kind, before and after training")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08 - 0.6 / len(labels)),
              ncol=len(shown), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(run: Path, work: Path, seconds: dict[str, float]) -> dict[str, Any]:
    """report.json, report.md and the plots into `work`; returns the figures."""
    data = figures(run)
    evaluation = _json(run / "evaluate" / "summary.json")
    methods = {m: {**f, "per_kind": {k: v["pass_rate"] for k, v in f["per_kind"].items()},
                   "per_kind_n": {k: v["checks"] for k, v in f["per_kind"].items()}}
               for m, f in evaluation.get("methods", {}).items()}
    plots = [name for name, drawn in (
        ("dpo_rounds.png", plot_dpo(data["dpo"], work / "dpo_rounds.png")),
        ("gspo.png", plot_gspo(data["gspo"]["per_step"], work / "gspo.png")),
        ("heldout_kinds.png", plot_kinds(methods, work / "heldout_kinds.png"))) if drawn]
    (work / "report.md").write_text(markdown(data, evaluation, seconds), "utf-8")
    data["plots"] = plots
    write_json(work / "report.json", data)
    return data

"""Stage `evaluate`: the base model and the trained checkpoint answer the held-out prompts
through `redraft serve`, as a user would ask them: the request's words alone, no checks
attached (under MRPO the server reads them from the request with its pre-pass, and a request
whose checks it cannot read is judged instead). The prompts' attached checks only score.

Methods, all greedy (temperature 0) with the same max_tokens T:

- `base_direct`: the base model, loop off: one call.
- `base_conformed`: base direct's answer with the exact changes of `rubrics.checks.conform`
  for the checks the pre-pass finds in the request: what code alone adds, with no call.
- `base_mrpo`: the base model through MRPO (`evaluation: checks`, R rounds, threshold 1.0).
- `trained_direct`, `trained_conformed`, `trained_mrpo`: the same three on the trained
  checkpoint (`trained_conformed` is what serving it with the loop's code changes and no
  reviser gives, at one call).

Answers go to answers/METHOD.jsonl as they come (an interrupted stage continues); figures per
method (`training.flywheel.figures`) and, with a pair judge, trained direct against base
direct (`training.flywheel.pairs`) go to summary.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rubrics.checks import conform
from rubrics.checks.prepass import prepass
from training.data.prompts import Prompt, load
from training.flywheel.asking import Ask, ask_all, read_rows
from training.flywheel.figures import summarise
from training.flywheel.llamacpp import base_gguf, served, trained_gguf
from training.flywheel.pairs import judge_pairs, tally
from training.flywheel.record import checks_reflection
from training.stages.checkpoints import write_json

METHODS = ("base_direct", "base_conformed", "base_mrpo", "trained_direct", "trained_conformed",
           "trained_mrpo")
NO_JUDGE = "no --pair-judge-url given"


def conformed(prompt: Prompt, row: dict[str, Any]) -> dict[str, Any]:
    """A direct answer with the exact changes for the checks the pre-pass finds."""
    text, met = conform(row["text"], prepass(prompt.query))
    return {**row, "text": text, "conformed": list(met)}


def _answer(config: Any, model: Path, name: str, prompts: list[Prompt], work: Path,
            gguf: Path) -> dict[str, list[dict[str, Any]]]:
    """`name`_direct and `name`_mrpo answers of every prompt, in the prompts' order (`gguf`:
    where the model goes as a GGUF file when llama-server serves it)."""
    asks = {"direct": [Ask(p.id, p.query) for p in prompts],
            "mrpo": [Ask(p.id, p.query, checks_reflection(config.max_rounds))
                     for p in prompts]}
    files = {way: work / "answers" / f"{name}_{way}.jsonl" for way in asks}
    if all(len(_done(files[w], prompts)) == len(prompts) for w in asks):
        return {f"{name}_{w}": _done(files[w], prompts) for w in asks}
    files["direct"].parent.mkdir(parents=True, exist_ok=True)
    out: dict[str, list[dict[str, Any]]] = {}
    with served(config, model, work / f"server-{name}", gguf) as server:
        for way, todo in asks.items():
            rows = ask_all(server.base_url, server.model, todo, files[way], temperature=0.0,
                           max_tokens=config.max_tokens, concurrency=config.concurrency,
                           desc=f"{name} {way}")
            out[f"{name}_{way}"] = [rows[p.id] for p in prompts]
    return out


def _done(path: Path, prompts: list[Prompt]) -> list[dict[str, Any]]:
    rows = read_rows(path)
    return [rows[p.id] for p in prompts if p.id in rows]


def pair_figures(config: Any, prompts: list[Prompt], answers: dict[str, list[dict[str, Any]]],
                 work: Path) -> dict[str, Any]:
    if not config.pair_judge_url:
        return {"skipped": NO_JUDGE}
    items = [{"key": p.id, "query": p.query, "trained": t["text"], "base": b["text"]}
             for p, t, b in zip(prompts, answers["trained_direct"], answers["base_direct"],
                                strict=True)][:config.pair_judge_prompts or None]
    verdicts = judge_pairs(config, items)
    with open(work / "pairs.jsonl", "w", encoding="utf-8") as sink:
        sink.writelines(json.dumps(v) + "\n" for v in verdicts)
    return {"judge": config.pair_judge_model, **tally([v["outcome"] for v in verdicts])}


def evaluate(config: Any, run: Path, base: Path, trained: Path, work: Path) -> dict[str, Any]:
    """Answer, score and judge into `work` (the stage's partial folder); returns the figures."""
    prompts = load(run / "prompts" / "heldout.jsonl")[:config.evaluated]
    answers = _answer(config, base, "base", prompts, work, base_gguf(run, config))
    answers.update(_answer(config, trained, "trained", prompts, work,
                           trained_gguf(work, config)))
    for name in ("base", "trained"):
        answers[f"{name}_conformed"] = [conformed(p, r) for p, r in
                                        zip(prompts, answers[f"{name}_direct"], strict=True)]
    base_figures = summarise(prompts, answers["base_direct"])
    methods = {m: summarise(prompts, answers[m], base_words=base_figures["words"])
               for m in METHODS}
    figures = {"prompts": len(prompts), "checks": sum(len(p.checks) for p in prompts),
               "max_rounds": config.max_rounds, "max_tokens": config.max_tokens,
               "concurrency": config.concurrency,
               "models": {"base": str(base), "trained": str(trained)},
               "methods": methods,
               "pair_judge": pair_figures(config, prompts, answers, work)}
    write_json(work / "summary.json", figures)
    return figures

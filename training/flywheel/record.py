"""Stage `record`: the base model answers the first N training prompts through MRPO, served
by `redraft serve`, which records every loop in its own SQLite store (RUN/record/redraft.db).

Each request carries its prompt's checks as data, as a client that knows its requirements
would: `"reflection": {"evaluation": "checks", "checklist": {"checks": [...]}, "max_rounds":
R, "threshold": 1.0, "memory": false}` (R: `--record-rounds`, by default `--max-rounds`). The
loop then scores each text by the share of those checks it passes (code, no judge call),
reflects with the failed checks as measured facts and meets exact changes in code; the
recorded best text y* is what SFT learns from. Temperature `--temperature` (0 by default:
greedy drafts and rewrites, the same run records the same loops).
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from training.data.prompts import Prompt, load
from training.flywheel.asking import Ask, ask_all
from training.flywheel.figures import passed
from training.flywheel.llamacpp import base_gguf, served
from training.flywheel.rows import attached
from training.stages.checkpoints import write_json


def checks_reflection(max_rounds: int, checks: dict[str, Any] | None = None,
                      trace: bool = False) -> dict[str, Any]:
    """The `reflection` object of an MRPO request scored by checks; `checks` attached as data
    or, when None, read by the server from the request itself."""
    body: dict[str, Any] = {"evaluation": "checks", "max_rounds": max_rounds,
                            "threshold": 1.0, "memory": False}
    if checks is not None:
        body["checklist"] = checks
    if trace:
        body["return_trace"] = True
    return body


def draft_text(reflection: dict[str, Any] | None) -> str | None:
    """The loop's first draft, from a recorded answer's traced `reflection`."""
    trace = (reflection or {}).get("trace") or {}
    drafts = [c for c in trace.get("candidates") or () if c.get("kind") == "draft"]
    return drafts[0]["text"] if drafts else None


def summary(prompts: list[Prompt], rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the recorded loops did: pass rates of their drafts and answers on the attached
    checks, rounds, stop reasons, and how many answers are another text than the draft."""
    answers = [rows[p.id] for p in prompts]
    finals = [passed(r["text"], p) for r, p in zip(answers, prompts, strict=True)]
    drafts = [draft_text(r.get("reflection")) for r in answers]
    draft_results = [passed(d, p) for d, p in zip(drafts, prompts, strict=True) if d is not None]
    loops = [r["reflection"] for r in answers if r.get("reflection")]
    return {
        "prompts": len(prompts), "errors": sum(r["error"] is not None for r in answers),
        "loops": len(loops),
        "answer_prompt_pass_rate": round(sum(all(o) for o in finals) / len(finals), 4),
        "draft_prompt_pass_rate": round(sum(all(o) for o in draft_results)
                                        / len(draft_results), 4) if draft_results else None,
        "answer_is_another_text": sum(d is not None and d.strip() != r["text"].strip()
                                      for d, r in zip(drafts, answers, strict=True)),
        "rounds": round(statistics.fmean(x.get("rounds") or 0 for x in loops), 4)
        if loops else None,
        "stop_reasons": dict(sorted(Counter(str(x.get("stop_reason")) for x in loops).items())),
        "tokens": round(statistics.fmean(r["total_tokens"] for r in answers), 1),
        "seconds": round(statistics.fmean(r["seconds"] for r in answers), 2),
    }


def record(config: Any, run: Path, base: Path, work: Path) -> dict[str, Any]:
    """Record the loops into `work` (the stage's partial folder); returns the summary."""
    prompts = load(run / "prompts" / "train.jsonl")[:config.record_prompts]
    asks = [Ask(p.id, p.query, checks_reflection(config.recorded_rounds, attached(p), trace=True))
            for p in prompts]
    with served(config, base, work, base_gguf(run, config)) as server:
        rows = ask_all(server.base_url, server.model, asks, work / "answers.jsonl",
                       temperature=config.temperature, max_tokens=config.max_tokens,
                       concurrency=config.concurrency, desc="record")
    figures = summary(prompts, rows)
    write_json(work / "summary.json", figures)
    return figures

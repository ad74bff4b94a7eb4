"""The reward on held-out prompts: one greedy completion per prompt, scored like training's."""

from __future__ import annotations

import json
import sys
from typing import Any

from tqdm import tqdm
from transformers import TrainerCallback

from loops.answer import looping
from rubrics.checks import run_checks
from rubrics.checks.kinds import count_words
from training.rewards.checklist import stored_checks
from training.speed.rollouts import greedy_texts, usable

BATCH = 8


def generate(model: Any, tokenizer: Any, prompts: list[list[dict[str, str]]],
             max_new_tokens: int) -> list[str]:
    """Greedy completions, the model in eval mode meanwhile: on redraft's local engine where
    it can decode the model (a Llama-family model on the CPU, `training.speed.rollouts`), else
    transformers' `generate` batched with left padding."""
    was_training = model.training
    model.eval()
    try:
        if usable(model):
            return greedy_texts(model, tokenizer, prompts, max_new_tokens)
        return _generated(model, tokenizer, prompts, max_new_tokens)
    finally:
        model.train(was_training)


def _generated(model: Any, tokenizer: Any, prompts: list[list[dict[str, str]]],
               max_new_tokens: int) -> list[str]:
    import torch

    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    texts: list[str] = []
    try:
        for start in tqdm(range(0, len(prompts), BATCH), desc="held-out", unit="batch",
                          leave=False):
            chunk = [tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
                     for p in prompts[start:start + BATCH]]
            enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                     pad_token_id=tokenizer.pad_token_id)
            new = out[:, enc["input_ids"].shape[1]:]  # (batch, generated)
            texts.extend(tokenizer.batch_decode(new, skip_special_tokens=True))
    finally:
        tokenizer.padding_side = side
    return texts


def holdout_reward(model: Any, tokenizer: Any, rows: list[dict[str, Any]], reward: Any,
                   max_new_tokens: int) -> dict[str, Any]:
    """{"mean": mean reward (None when nothing scored), "scored": n, "prompts": n} and, when
    the rows' stored checklists carry checks, "checks": the answers' pass rates per check
    kind (`kind_figures`)."""
    if not rows:
        return {"mean": None, "scored": 0, "prompts": 0}
    prompts = [r["prompt"] for r in rows]
    texts = generate(model, tokenizer, prompts, max_new_tokens)
    columns = decode_columns({k: [r[k] for r in rows] for k in rows[0] if k != "prompt"})
    scores = reward(prompts=prompts, completions=[[{"role": "assistant", "content": t}]
                                                  for t in texts], **columns)
    got = [s for s in scores if s is not None]
    out = {"mean": sum(got) / len(got) if got else None, "scored": len(got),
           "prompts": len(rows)}
    figures = kind_figures(texts, columns.get("checklist") or [None] * len(rows))
    if figures is not None:
        out["checks"] = figures
    return out


def kind_figures(texts: list[str], checklists: list[Any]) -> dict[str, Any] | None:
    """The answers against their rows' stored checks: the share of prompts passing every
    check, the pass rate per check kind, mean words and the looping share (None when no row
    has checks)."""
    kinds: dict[str, list[int]] = {}
    prompts = passed = 0
    for text, checklist in zip(texts, checklists, strict=True):
        outcomes = run_checks(text, stored_checks(checklist))
        if not outcomes:
            continue
        prompts += 1
        passed += all(o.passed for o in outcomes)
        for outcome in outcomes:
            tally = kinds.setdefault(outcome.kind, [0, 0])
            tally[0] += 1
            tally[1] += outcome.passed
    if not prompts:
        return None
    return {"prompts": prompts, "prompt_pass_rate": round(passed / prompts, 4),
            "per_kind": {kind: round(k / n, 4) for kind, (n, k) in sorted(kinds.items())},
            "checks_per_kind": {kind: n for kind, (n, _) in sorted(kinds.items())},
            "words": round(sum(count_words(t) for t in texts) / len(texts), 1),
            "looping_share": round(sum(looping(t) for t in texts) / len(texts), 4)}


JSON_COLUMNS = ("checklist", "candidates")


class HeldOutEvery(TrainerCallback):
    """Every `every` optimiser steps, the held-out rows answered greedily and checked in
    code, per check kind: what the stage has moved so far, printed on stderr as it comes and
    kept in `history` for the report (the stage's own before and after figures bracket it)."""

    def __init__(self, stage: str, rows: list[dict[str, Any]], tokenizer: Any,
                 max_new_tokens: int, every: int) -> None:
        self.stage = stage
        self.prompts = [r["prompt"] for r in rows]
        self.checklists = decode_columns({"checklist": [r.get("checklist") for r in rows]}
                                         )["checklist"]
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.every = every
        self.history: list[dict[str, Any]] = []

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None,
                    **kwargs: Any) -> None:
        step = state.global_step
        if model is None or step % self.every or step >= state.max_steps:
            return
        texts = generate(model, self.tokenizer, self.prompts, self.max_new_tokens)
        figures = kind_figures(texts, self.checklists)
        if figures is None:
            return
        self.history.append({"step": step, **figures})
        say(self.stage, f"step {step}", figures)


def say(stage: str, when: str, figures: dict[str, Any] | None) -> None:
    """One line on stderr: the held-out answers' figures per check kind at `when`."""
    if figures is not None:  # tqdm's write keeps the line clear of a progress bar
        tqdm.write(f"{stage}: held-out answers, {when}: prompt pass rate "
                   f"{figures['prompt_pass_rate']}, per kind {json.dumps(figures['per_kind'])}, "
                   f"{figures['words']} words, looping {figures['looping_share']}",
                   file=sys.stderr)


def encode_columns(row: dict[str, Any]) -> dict[str, Any]:
    """Nested columns as JSON text: Arrow needs one schema, stored checklists vary."""
    return {k: json.dumps(v) if k in JSON_COLUMNS else v for k, v in row.items()}


def decode_columns(columns: dict[str, Any]) -> dict[str, Any]:
    return {k: [json.loads(v) if isinstance(v, str) else v for v in values]
            if k in JSON_COLUMNS else values for k, values in columns.items()}

"""The reward on held-out prompts: one greedy completion per prompt, scored like training's."""

from __future__ import annotations

import json
from typing import Any

from tqdm import tqdm

BATCH = 8


def generate(model: Any, tokenizer: Any, prompts: list[list[dict[str, str]]],
             max_new_tokens: int) -> list[str]:
    """Greedy completions, batched with left padding."""
    import torch

    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    texts: list[str] = []
    was_training = model.training
    model.eval()
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
        model.train(was_training)
    return texts


def holdout_reward(model: Any, tokenizer: Any, rows: list[dict[str, Any]], reward: Any,
                   max_new_tokens: int) -> dict[str, Any]:
    """{"mean": mean reward (None when nothing scored), "scored": n, "prompts": n}."""
    if not rows:
        return {"mean": None, "scored": 0, "prompts": 0}
    prompts = [r["prompt"] for r in rows]
    texts = generate(model, tokenizer, prompts, max_new_tokens)
    columns = decode_columns({k: [r[k] for r in rows] for k in rows[0] if k != "prompt"})
    scores = reward(prompts=prompts, completions=[[{"role": "assistant", "content": t}]
                                                  for t in texts], **columns)
    got = [s for s in scores if s is not None]
    return {"mean": sum(got) / len(got) if got else None, "scored": len(got),
            "prompts": len(rows)}


JSON_COLUMNS = ("checklist", "candidates")


def encode_columns(row: dict[str, Any]) -> dict[str, Any]:
    """Nested columns as JSON text: Arrow needs one schema, stored checklists vary."""
    return {k: json.dumps(v) if k in JSON_COLUMNS else v for k, v in row.items()}


def decode_columns(columns: dict[str, Any]) -> dict[str, Any]:
    return {k: [json.loads(v) if isinstance(v, str) else v for v in values]
            if k in JSON_COLUMNS else values for k, values in columns.items()}

"""A synthetic dataset in `export`'s format, written without a database: the trainer
benchmarks' input (every RL prompt carries the generic pack's checklist)."""

from __future__ import annotations

import json
from pathlib import Path

PROMPTS = ("Write a short note inviting the team to a picnic on Friday.",
           "Draft a product announcement for a new note-taking app.",
           "Write a polite email asking a landlord to fix a leaking tap.",
           "Write a story opening about a lighthouse keeper.")


def answer_text(sentences: int) -> str:
    return " ".join(f"Sentence {i} adds a concrete, relevant detail to the answer."
                    for i in range(sentences))


def row_sentences(i: int, sentences: int, varied: bool) -> int:
    """Sentences in row i's answer: all `sentences`, or with `varied` a spread from 1 to
    `sentences` in a fixed scrambled order (as real answers vary in length)."""
    return (i * 37) % sentences + 1 if varied else sentences


def write_dataset(root: Path, rows: int, sentences: int, varied: bool = False) -> Path:
    """A dataset directory in `export`'s format, without a database; `varied`: answers of
    many lengths (see `row_sentences`)."""
    from rubrics.packs.library import PackLibrary
    from training.data.dataset import VERSION, content_hash

    checklist = PackLibrary().generic("en").model_dump(mode="json")
    for kind in ("sft", "prompts", "pairs"):
        (root / kind).mkdir(parents=True, exist_ok=True)
        (root / kind / "holdout.jsonl").write_text("")
    with (root / "sft" / "train.jsonl").open("w") as sft, \
            (root / "prompts" / "train.jsonl").open("w") as rl:
        for i in range(rows):
            prompt = [{"role": "user", "content": f"{PROMPTS[i % len(PROMPTS)]} (#{i})"}]
            body = answer_text(row_sentences(i, sentences, varied))
            answer = [{"role": "assistant", "content": body}]
            sft.write(json.dumps({"id": str(i), "loop_id": str(i), "prompt": prompt,
                                  "completion": answer, "score": 1.0}) + "\n")
            rl.write(json.dumps({"id": str(i), "loop_id": str(i), "prompt": prompt,
                                 "checklist": checklist, "reference": body,
                                 "reference_score": 1.0, "candidates": []}) + "\n")
    (root / "pairs" / "train.jsonl").write_text("")
    (root / "manifest.json").write_text(json.dumps({
        "version": VERSION, "format": "chat", "content_hash": content_hash(root),
        "counts": {"prompts": rows}}))
    return root

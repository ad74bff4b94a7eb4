"""The memory's similarity floor, measured: how similar related and unrelated WritingBench tasks
look to the embedder the bank searches with; one JSON line.

    python -m bench.memory_floor                 # bundled MiniLM, English queries of the pack
    python -m bench.memory_floor --language zh --limit 200

Pairs come from the WritingBench rubric pack in the repository (`rubrics/packs/writingbench`,
Apache-2.0, see its SOURCE.md): related = two different queries of the same secondary domain
("Sales Letter", "Paper Outline"), unrelated = two queries of different primary domains.
Each side is embedded as the bank embeds a recall (`loops.memory_step.recall_text`).

A wrong experience costs more than a missed one (an unrelated lesson, applied, rewrites the
answer into another task), so the floor printed is the cosine that keeps 95% of unrelated
pairs out (`floor`, with the share of related pairs it still lets through); the cut with the
best balanced accuracy and the AUC say how well the embedder separates the two at all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from collections import defaultdict
from importlib import resources

import numpy as np

from loops.memory_step import recall_text
from memory.embedders import open_embedder


def load(language: str, limit: int) -> list[dict]:
    path = resources.files("rubrics").joinpath("packs", "writingbench", "writingbench.jsonl")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("language") == language]
    return rows[:limit]


def pairs(rows: list[dict], count: int, rng: random.Random) -> tuple[list, list]:
    by_domain2: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_domain2[r["domain2"]].append(i)
    related = [(a, b) for group in by_domain2.values() for a in group for b in group if a < b]
    unrelated = [(a, b) for a in range(len(rows)) for b in range(a + 1, len(rows))
                 if rows[a]["domain1"] != rows[b]["domain1"]]
    return (rng.sample(related, min(count, len(related))),
            rng.sample(unrelated, min(count, len(unrelated))))


def best_floor(related: np.ndarray, unrelated: np.ndarray) -> tuple[float, float]:
    """The cut with the highest balanced accuracy (related at or above, unrelated below)."""
    best, best_acc = 0.0, 0.0
    for cut in np.unique(np.concatenate([related, unrelated])):
        acc = ((related >= cut).mean() + (unrelated < cut).mean()) / 2
        if acc > best_acc:
            best, best_acc = float(cut), float(acc)
    return best, best_acc


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", default="en", choices=("en", "zh"))
    parser.add_argument("--limit", type=int, default=400, help="queries of the pack used")
    parser.add_argument("--pairs", type=int, default=2000, help="pairs of each kind")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = load(args.language, args.limit)
    related, unrelated = pairs(rows, args.pairs, random.Random(args.seed))
    embedder = await open_embedder("default")
    vectors = await embedder.embed([recall_text([{"role": "user", "content": r["query"]}])
                                    for r in rows])
    sim = vectors @ vectors.T
    rel = np.array([sim[a, b] for a, b in related])
    unr = np.array([sim[a, b] for a, b in unrelated])
    balanced, accuracy = best_floor(rel, unr)
    floor = float(np.quantile(unr, 0.95))
    auc = float((rel[:, None] > unr[None, :]).mean())
    print(json.dumps({
        "embedder": embedder.name, "language": args.language, "queries": len(rows),
        "related_pairs": len(rel), "unrelated_pairs": len(unr),
        "related_median": round(float(np.median(rel)), 4),
        "unrelated_median": round(float(np.median(unr)), 4),
        "floor": round(floor, 4), "related_kept": round(float((rel >= floor).mean()), 4),
        "unrelated_kept": round(float((unr >= floor).mean()), 4),
        "balanced_cut": round(balanced, 4), "balanced_accuracy": round(accuracy, 4),
        "auc": round(auc, 4)}))


if __name__ == "__main__":
    asyncio.run(main())

"""Hand-built loop rows and a checklist for the method tests (row shapes of the export)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from generation.types import ChatParams
from rubrics.checklist import Band, Checklist, Dimension, to_json

CHECKLIST = json.loads(to_json(Checklist(dimensions=(
    Dimension(name="Clarity", description="Is it clear?",
              bands=(Band(low=1, high=5, description="muddled"),
                     Band(low=6, high=10, description="clear"))),
))))


def candidate(position: int, score: float | None, text: str, *, kind: str = "rewrite",
              parent: int | None = None, reflection: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    return {"position": position, "round": position, "kind": kind, "text": text,
            "score": score, "parent": parent, "reflection": reflection}


def reflection(dimension: str = "Clarity") -> dict[str, Any]:
    return {"summary": "Too vague.", "items": [
        {"dimension": dimension, "evidence": "a nice day", "objective": "name the day",
         "actions": ["say Friday", "give the time"]}]}


def row(prompt_id: str, draft: float | None, *later: float | None,
        reference: str | None = None) -> dict[str, Any]:
    cands = [candidate(0, draft, f"{prompt_id} draft", kind="draft")]
    for i, score in enumerate(later, 1):
        cands.append(candidate(i, score, f"{prompt_id} rewrite {i}", parent=i - 1,
                               reflection=reflection()))
    scored = [c for c in cands if c["score"] is not None]
    best = max(scored, key=lambda c: c["score"]) if scored else cands[0]
    return {"id": prompt_id, "loop_id": f"loop-{prompt_id}",
            "prompt": [{"role": "user", "content": f"Write {prompt_id}."}],
            "checklist": CHECKLIST, "reference": reference or best["text"],
            "reference_score": best["score"], "candidates": cands}


@dataclass
class FakeJudge:
    """training.rewards.judge.Judge's members over a scripted backend, on a fresh loop per
    call."""

    backend: Any
    params: ChatParams = field(default_factory=lambda: ChatParams(model="judge", temperature=0.0))
    calls: int = 0

    def run(self, coroutine: Any) -> Any:
        return asyncio.run(coroutine)


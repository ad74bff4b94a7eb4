"""What one loop may do. Bounds are checked at the API edge; this is the plain result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# holistic: loops.judges.holistic; checks: the request's checks alone, no judge
# (loops.judges.requirements)
EvaluationMode = Literal["joint", "per_dimension", "holistic", "checks"]
ChecklistMode = Literal["three_agent", "fused"]
# unchanged: the reviser gave the text back word for word, even when asked again, firmer
STOP_REASONS = ("threshold", "max_rounds", "budget", "degraded", "unchanged")


@dataclass(frozen=True, slots=True)
class LoopOptions:
    max_rounds: int = 5          # T: reflection rounds after the first evaluation
    threshold: float = 0.9       # tau, on the normalised score
    candidates: int = 1          # k rewrites per round; the best is kept
    evaluation: EvaluationMode = "joint"
    memory: bool = True
    return_trace: bool = False
    token_budget: int | None = None   # all hidden calls together
    time_budget: float | None = None  # seconds for the whole loop
    checklist_mode: ChecklistMode = "three_agent"
    # Joint evaluation also writes the reflection for the next round in the same call: one
    # sequential call fewer per round. Per-dimension evaluation always reflects separately.
    fuse_reflection: bool = True
    # Requirements one exact change meets without touching a word (case, commas, a closing
    # phrase, a list's style: `rubrics.checks.conform`) are met in code on every candidate
    # before it is judged; the reviser is left what needs new words.
    conform: bool = True

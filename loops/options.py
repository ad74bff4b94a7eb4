"""What one loop may do. Bounds are checked at the API edge; this is the plain result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# holistic: loops.judges.holistic; checks: the request's checks alone, no judge
# (loops.judges.requirements); auto: the request's checks when it states any (revised only by
# a writer whose probe has shown it can revise: loops.probes.reviser), else the judge once its
# probe has shown it can judge (loops.judges.calibration), else the draft
EvaluationMode = Literal["auto", "joint", "per_dimension", "holistic", "checks"]
ChecklistMode = Literal["three_agent", "fused"]
# unchanged: the reviser gave the text back word for word, even when asked again, firmer;
# unjudged: under `auto`, the request states no check code can run and the judge has not
# shown it can judge, so the draft is the answer at its own cost
# max_tokens: under `checks`, the text was cut at its completion limit and every check it
# fails asks for more words than it has, which no rewrite under that limit can write
# unrevised: under `auto`, the draft misses a check the request states and the writer has not
# shown it can revise, so the draft with the exact changes made in code is the answer at the
# draft's cost
STOP_REASONS = ("threshold", "max_rounds", "budget", "degraded", "unchanged", "unjudged",
                "no_gain", "max_tokens", "unrevised")


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
    # budgets relative to the draft: no new round starts once the loop has spent this many
    # times the draft's tokens (prompt and completion) or its seconds (the absolute budgets
    # above stay the ceiling)
    token_budget_ratio: float | None = None
    time_budget_ratio: float | None = None
    checklist_mode: ChecklistMode = "three_agent"
    # Joint evaluation also writes the reflection for the next round in the same call: one
    # sequential call fewer per round. Per-dimension evaluation always reflects separately.
    fuse_reflection: bool = True
    # Requirements one exact change meets without touching a word (case, commas, a closing
    # phrase, a list's style: `rubrics.checks.conform`) are met in code on every candidate
    # before it is judged; the reviser is left what needs new words.
    conform: bool = True

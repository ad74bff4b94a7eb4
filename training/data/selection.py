"""Margin-aware data selection (Writing-RL, Lei et al., "Adaptive Curriculum Reinforcement
Learning"): keep the prompts where the policy has the most to learn.

A prompt's learning potential is p = max_j (s_j - s_pi): the best competitor's normalised
score minus the policy's. In a loop record the policy's answer is the draft y0 and the
competitors are the loop's later candidates; with a competitor model configured, answers of
other OpenAI-compatible models are generated and scored (redraft's `rubrics.evaluate` against
the prompt's stored checklist) at export time and join them. Prompts whose best competitor
scores below `min_competitor_score` teach nothing and are dropped; of the rest the top-k by p
are kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from generation.base import Backend
from generation.errors import RedraftError
from generation.types import ChatParams
from rubrics.checklist import from_json
from rubrics.evaluate import evaluate

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Potential:
    """One prompt's margin: p = best competitor score - policy (draft) score."""

    id: str
    policy_score: float
    best_competitor: float
    competitors: int

    @property
    def p(self) -> float:
        return self.best_competitor - self.policy_score


@dataclass(frozen=True, slots=True)
class Selection:
    kept: tuple[str, ...]                       # prompt ids, highest p first
    potentials: dict[str, Potential]
    dropped_low_competitor: int = 0             # best competitor under the floor
    dropped_unscored: int = 0                   # no scored draft or no scored competitor
    dropped_below_top_k: int = 0
    competitor_answers: int = 0                 # generated at export time
    competitor_failures: int = 0

    def counts(self) -> dict[str, Any]:
        """What the manifest records about the selection."""
        kept = [self.potentials[i].p for i in self.kept]
        return {"kept": len(self.kept), "dropped_low_competitor": self.dropped_low_competitor,
                "dropped_unscored": self.dropped_unscored,
                "dropped_below_top_k": self.dropped_below_top_k,
                "competitor_answers": self.competitor_answers,
                "competitor_failures": self.competitor_failures,
                "p_min": min(kept) if kept else None, "p_max": max(kept) if kept else None}


def _draft(row: Row) -> Mapping[str, Any] | None:
    for cand in row.get("candidates") or ():
        if cand.get("kind") == "draft":
            return cand
    return None


def _draft_score(row: Row) -> float | None:
    draft = _draft(row)
    return None if draft is None else draft.get("score")


def competitor_scores(row: Row, extra: Sequence[float] = ()) -> list[float]:
    """The scores of every answer competing with the draft: later candidates, then `extra`.

    A loop whose answer has the draft's text gained nothing, so its candidates do not compete
    (whatever they scored, the loop kept the draft's words); nor does a candidate with the
    draft's text. Answers of a competitor model (`extra`) always do."""
    draft = _draft(row)
    words = (draft.get("text") or "").strip() if draft is not None else None
    candidates = list(row.get("candidates") or ())
    answer = next((c for c in candidates if c.get("answer")), None)
    if answer is not None and words is not None and (answer.get("text") or "").strip() == words:
        candidates = []
    scores = [c["score"] for c in candidates
              if c.get("kind") != "draft" and c.get("score") is not None
              and (c.get("text") or "").strip() != words]
    return [*scores, *extra]


def potential(row: Row, extra: Sequence[float] = ()) -> Potential | None:
    """The prompt's learning potential, or None when the draft or every competitor is unscored."""
    policy = _draft_score(row)
    scores = competitor_scores(row, extra)
    if policy is None or not scores:
        return None
    return Potential(str(row["id"]), float(policy), float(max(scores)), len(scores))


def select_margin(rows: Iterable[Row], *, top_k: int, min_competitor_score: float = 0.0,
                  extra_scores: Mapping[str, Sequence[float]] | None = None,
                  competitor_answers: int = 0, competitor_failures: int = 0) -> Selection:
    """Keep the top-k prompts by p among those whose best competitor reaches the floor.

    Ties in p keep the export order (stable sort), so the same data selects the same prompts.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    extra_scores = extra_scores or {}
    potentials: dict[str, Potential] = {}
    unscored = low = 0
    for row in rows:
        found = potential(row, extra_scores.get(str(row["id"]), ()))
        if found is None:
            unscored += 1
        elif found.best_competitor < min_competitor_score:
            low += 1
        else:
            potentials[found.id] = found
    ranked = sorted(potentials.values(), key=lambda x: x.p, reverse=True)
    kept = tuple(x.id for x in ranked[:top_k])
    return Selection(kept, potentials, low, unscored, max(0, len(ranked) - top_k),
                     competitor_answers, competitor_failures)


@dataclass(frozen=True, slots=True)
class Competitor:
    """Another OpenAI-compatible model whose answers compete with the draft."""

    writer: Backend
    judge: Backend
    params: ChatParams = field(default_factory=ChatParams)
    judge_params: ChatParams = field(default_factory=lambda: ChatParams(temperature=0.0))
    concurrency: int = 8


async def _score_one(competitor: Competitor, row: Row,
                     semaphore: asyncio.Semaphore) -> float | None:
    async with semaphore:
        try:
            answer = await competitor.writer.chat(row["prompt"], competitor.params)
            if not answer.text.strip():
                return None
            checklist = from_json(row["checklist"])
            result = await evaluate(competitor.judge, row["prompt"], answer.text, checklist,
                                    competitor.judge_params)
        except RedraftError:
            return None
        return None if result.degraded else result.normalised


async def score_competitors(competitor: Competitor, rows: Sequence[Row],
                            *, progress: bool = True) -> tuple[dict[str, list[float]], int]:
    """One competitor answer per prompt, scored on its checklist: ({id: [score]}, failures).

    A failed generation or a degraded evaluation is counted and left out, never guessed.
    """
    semaphore = asyncio.Semaphore(competitor.concurrency)
    tasks = [asyncio.ensure_future(_score_one(competitor, row, semaphore)) for row in rows]
    scores: dict[str, list[float]] = {}
    failures = 0
    with tqdm(total=len(tasks), desc="competitor answers", disable=not progress) as bar:
        for row, task in zip(rows, tasks, strict=True):
            value = await task
            bar.update()
            if value is None:
                failures += 1
            else:
                scores.setdefault(str(row["id"]), []).append(value)
    return scores, failures


async def select_with_competitor(rows: Sequence[Row], *, top_k: int,
                                 min_competitor_score: float,
                                 competitor: Competitor | None,
                                 progress: bool = True) -> Selection:
    """`select_margin`, after generating and scoring the competitor's answers if one is given."""
    if competitor is None:
        return select_margin(rows, top_k=top_k, min_competitor_score=min_competitor_score)
    extra, failures = await score_competitors(competitor, rows, progress=progress)
    return select_margin(rows, top_k=top_k, min_competitor_score=min_competitor_score,
                         extra_scores=extra, competitor_answers=len(rows) - failures,
                         competitor_failures=failures)

"""Preference pairs from the policy's own samples, scored by the prompt's checks in code.

Each training prompt is answered K times at a sampling temperature. Every sample is scored by
the prompt's attached checks (`rubrics.checks.run_checks`) and the drop-task guard of the
checks reward (`training.rewards.task.drops_task`: empty, looping, refused, off the task); a
sample cut at the token limit is never a chosen text, and one that drops the task ranks below
every other. Two kinds of pair come out of a prompt's group:

- `made`: a minimal pair made in code. A sample that fails a check an exact change meets
  (no commas, paragraphs regrouped, case, a closing phrase...: `rubrics.checks.conform`) is
  the rejected text, and the same text with the change made the chosen one. The two differ in
  exactly the tokens the check is about, so the gradient sits there.
- `sampled`: a usable sample that passes every check (ties: the longest, so that a
  preference for meeting the checks is not also one for saying less) against the group's
  worst sample that still holds the task (ties: drawn from the seed). This is where the kinds
  no change in code makes (a keyword N times, a word or paragraph count that needs new words)
  get their signal. A text that drops the task is neither side of a sampled pair: against it,
  any text wins, and the pair would teach holding the task rather than the check.

A prompt with no sample that passes every check, or whose samples all pass, gives no sampled
pair.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rubrics.checks.run import conform, run_checks
from training.data.prompts import Prompt
from training.rewards.task import drops_task

MADE, SAMPLED = "made", "sampled"


@dataclass(frozen=True, slots=True)
class Scored:
    """One sample of a prompt with what the checks and the guard say of it."""

    text: str
    passed: tuple[bool, ...]
    dropped: str | None   # why it drops the task, or None
    cut: bool             # stopped at the token limit

    @property
    def score(self) -> float:
        """The share of checks passed; -1 for a text that drops the task."""
        if self.dropped:
            return -1.0
        return sum(self.passed) / len(self.passed) if self.passed else 1.0

    @property
    def usable(self) -> bool:
        """Whether it may be a chosen text: holds the task and ended before the limit."""
        return self.dropped is None and not self.cut


@dataclass(frozen=True, slots=True)
class Pair:
    prompt_id: str
    query: str
    chosen: str
    rejected: str
    source: str                 # MADE or SAMPLED
    kinds: tuple[str, ...]      # the kinds of the checks chosen passes and rejected fails

    def row(self) -> dict[str, Any]:
        """TRL's conversational prompt/chosen/rejected row, with where it came from."""
        return {"prompt": [{"role": "user", "content": self.query}],
                "chosen": [{"role": "assistant", "content": self.chosen}],
                "rejected": [{"role": "assistant", "content": self.rejected}],
                "prompt_id": self.prompt_id, "source": self.source, "kinds": list(self.kinds)}


def score(prompt: Prompt, text: str, finish_reason: str | None = None, *,
          guard: bool = True) -> Scored:
    """`text` scored on `prompt`'s checks; `guard=False` takes every text as holding the
    task and ending in time (mechanics runs on a random model, whose every text drops it)."""
    checks = prompt.run_checks()
    passed = tuple(o.passed for o in run_checks(text, checks))
    if not guard:
        return Scored(text, passed, None, False)
    return Scored(text, passed, drops_task(text, prompt.query, checks),
                  finish_reason == "length")


def _gained(prompt: Prompt, chosen: Scored, rejected: Scored) -> tuple[str, ...]:
    return tuple(kind for kind, a, b in zip(prompt.kinds, chosen.passed, rejected.passed,
                                            strict=True) if a and not b)


def made_pair(prompt: Prompt, sample: Scored, *, guard: bool = True) -> Pair | None:
    """The sample against itself with the exact changes that meet checks it fails; None when
    no change applies, or the changed text still drops the task."""
    if not sample.usable:
        return None
    text, met = conform(sample.text, prompt.run_checks())
    if not met or text == sample.text:
        return None
    changed = score(prompt, text, guard=guard)
    if not changed.usable or changed.score <= sample.score:
        return None
    return Pair(prompt.id, prompt.query, text, sample.text, MADE,
                _gained(prompt, changed, sample))


def sampled_pair(prompt: Prompt, group: Sequence[Scored], rng: random.Random) -> Pair | None:
    """A usable sample that passes every check against the worst sample that holds the task,
    when that one fails a check."""
    passing = [s for s in group if s.usable and s.score == 1.0]
    holding = [s for s in group if s.dropped is None]
    if not passing or not holding:
        return None
    chosen = max(passing, key=lambda s: len(s.text))
    bottom = min(s.score for s in holding)
    if bottom >= 1.0:
        return None
    rejected = rng.choice([s for s in holding if s.score == bottom])
    return Pair(prompt.id, prompt.query, chosen.text, rejected.text, SAMPLED,
                _gained(prompt, chosen, rejected))


def pairs_for(prompt: Prompt, group: Sequence[Scored], rng: random.Random, *,
              guard: bool = True) -> list[Pair]:
    """At most one pair made in code (on the best sample a change helps) and one sampled
    pair, from one prompt's group of samples."""
    out: list[Pair] = []
    for sample in sorted(group, key=lambda s: -s.score):
        made = made_pair(prompt, sample, guard=guard)
        if made is not None:
            out.append(made)
            break
    sampled = sampled_pair(prompt, group, rng)
    if sampled is not None and all(p.chosen != sampled.chosen or p.rejected != sampled.rejected
                                   for p in out):
        out.append(sampled)
    return out

"""Where a training step's time goes: generation, reward, the log-probability passes of GSPO,
forward and backward, the optimiser, and what happens between steps (logging, checkpoints,
loading the next batch).

A trainer callback marks each optimiser step's begin, the optimiser's start and the step's end;
the parts of a GSPO step that TRL runs inside its training step (generating, scoring with the
reward, the old-policy and reference log-probabilities) are timed by wrapping the trainer's own
methods. On CUDA every mark waits for the device first, so a part is charged with its kernels.
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from typing import Any

from transformers import TrainerCallback

# The parts, in the order the report lists them.
PARTS = ("generation", "reward", "logprobs", "forward_backward", "optimizer", "between_steps")
# GRPOTrainer methods (TRL 1.16) timed as parts of the step that calls them.
GSPO_METHODS = {"_generate_single_turn": "generation", "_calculate_rewards": "reward",
                "_generate_and_score_completions": "rollout"}


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


class StepTimes(TrainerCallback):
    """Seconds spent in each part of the optimiser steps of one `train()` call."""

    def __init__(self, clock: Any = time.perf_counter) -> None:
        self.clock = clock
        self.totals: dict[str, float] = defaultdict(float)
        self.steps = 0
        self._in_step = False
        self._begin: float | None = None
        self._optimizer: float | None = None
        self._last_end: float | None = None
        self._rollout_at_begin = 0.0

    def now(self) -> float:
        _sync()
        return self.clock()

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._begin = self.now()
        if self._last_end is not None:
            self.totals["between_steps"] += self._begin - self._last_end
        self._in_step = True
        self._rollout_at_begin = self.totals["rollout"]

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._optimizer = self.now()
        if self._begin is not None:
            rollout = self.totals["rollout"] - self._rollout_at_begin
            self.totals["forward_backward"] += self._optimizer - self._begin - rollout

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        end = self.now()
        if self._optimizer is not None:
            self.totals["optimizer"] += end - self._optimizer
        self._last_end = end
        self._in_step = False
        self.steps += 1

    def timed(self, method: Any, part: str) -> Any:
        """`method`, charging its time to `part` when it runs inside a step."""

        @functools.wraps(method)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not self._in_step:
                return method(*args, **kwargs)
            start = self.now()
            try:
                return method(*args, **kwargs)
            finally:
                self.totals[part] += self.now() - start

        return run

    def report(self) -> dict[str, Any]:
        """{"steps", "seconds": {part: total}, "share": {part: share of all parts}} for the parts
        that took time; a GSPO rollout is split into generation, reward and logprobs."""
        totals = dict(self.totals)
        rollout = totals.pop("rollout", 0.0)
        if rollout:
            totals["logprobs"] = max(0.0, rollout - totals.get("generation", 0.0)
                                     - totals.get("reward", 0.0))
        seconds = {p: round(totals[p], 4) for p in PARTS if totals.get(p)}
        whole = sum(seconds.values())
        share = {p: round(s / whole, 4) for p, s in seconds.items()} if whole else {}
        return {"steps": self.steps, "seconds": seconds, "share": share}


def time_steps(trainer: Any) -> StepTimes:
    """A StepTimes attached to `trainer` (a GSPO trainer's rollout methods are wrapped too)."""
    times = StepTimes()
    for name, part in GSPO_METHODS.items():
        method = getattr(trainer, name, None)
        if callable(method):
            setattr(trainer, name, times.timed(method, part))
    if getattr(trainer, "rollout_func", None) is not None:  # completions decoded off TRL's path
        trainer.rollout_func = times.timed(trainer.rollout_func, "generation")
    trainer.add_callback(times)
    return times

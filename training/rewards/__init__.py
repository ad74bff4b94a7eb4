"""Reward functions for GSPO, by configured name (`--reward`).

A factory takes (config, **collaborators) — today `judge` (training.rewards.judge.Judge) — and
returns a TRL reward function `reward(prompts, completions, completion_ids=None, **columns)
-> list[float | None]` with a `__name__`. The returned callable may carry `config_overrides`
(extra GRPOConfig fields) and `callbacks` (TrainerCallbacks), and `stats()` (counts for the
report). A reward that cannot be had is None, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from training.rewards.checklist import checklist_reward, checks_reward
from training.rewards.pairwise import pairwise_reward
from training.rewards.process import process_reward
from training.rewards.r3 import r3_reward

RewardFactory = Callable[..., Any]

REWARDS: dict[str, RewardFactory] = {
    "checklist": checklist_reward,
    "pairwise": pairwise_reward,
    "r3": r3_reward,
    "checklist+process": process_reward(checklist_reward),
    "pairwise+process": process_reward(pairwise_reward),
    "checks": checks_reward,
}


def make_reward(name: str, config: Any, **collaborators: Any) -> Any:
    from training.errors import UsageError

    if name not in REWARDS:
        raise UsageError(f"--reward {name!r} is not one of {', '.join(REWARDS)}")
    return REWARDS[name](config, **collaborators)

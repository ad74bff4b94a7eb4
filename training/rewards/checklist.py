"""The checklist reward: each completion scored by the judge on its prompt's stored checklist,
and the checks stored with it run in code; and the checks reward: the checks alone, no judge.

Scoring is redraft's own `rubrics.evaluate.evaluate` (joint mode: one judge call per
completion, re-asked on a malformed answer), normalised to [0, 1]. The checks mix in as they do
in the loop's selection (`loops.answer`): a bounded bonus that never overturns a content gap,

    reward = content - CHECK_WEIGHT x (1 - pass rate)        (CHECK_WEIGHT = 0.05)

so a completion passing every check (or a prompt without checks) gets its content score, and
one failing them all loses 0.05: checks break near-ties between completions of one group but
a fragment that passes a format check never outscores the text that was asked for. The checks
reward (`--reward checks`) is the pass rate alone: exact, free, deterministic; a prompt without
checks gets no reward (None, the group teaches nothing), and the stage leaves such prompts
out and says how many. A completion that drops the task (empty, looping, or sharing no word
with the task: `training.rewards.task`) earns 0 whatever checks it passes, since silence
meets many of them. A call that still fails,
or an evaluation left degraded, gives no reward (None). One missing reward voids its whole
group (every completion of the same prompt id in the batch gets None): TRL then computes NaN
for the group and turns its advantages into zeros, so the group teaches nothing rather than
teaching against a partial baseline. Both are counted (`stats()`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from generation.errors import RedraftError
from loops.answer import CHECK_WEIGHT
from rubrics.checklist import ChecklistInvalid, from_json
from rubrics.checks import Check, pass_rate, run_checks
from rubrics.checks.kinds import KINDS
from rubrics.evaluate import evaluate
from training.rewards.judge import Judge
from training.rewards.length import REFERENCE_WORDS, CutGuard, LengthBand
from training.rewards.task import drops_task, request_text


def stored_checks(checklist_data: Any) -> tuple[Check, ...]:
    """The checks a stored checklist carries; entries that do not parse or name a kind this
    version does not know are skipped (a newer server may have stored them)."""
    checklist_data = _parsed(checklist_data)
    raw = checklist_data.get("checks") if isinstance(checklist_data, dict) else None
    out = []
    for item in raw or ():
        try:
            check = Check.model_validate(item)
        except ValueError:
            continue
        if check.kind in KINDS:
            out.append(check)
    return tuple(out)


def _parsed(checklist_data: Any) -> Any:
    """A stored checklist as a dict when it came as JSON text; else as given."""
    if isinstance(checklist_data, str | bytes):
        try:
            return json.loads(checklist_data)
        except ValueError:
            return checklist_data
    return checklist_data


def dimensions_only(checklist_data: Any) -> Any:
    """A stored checklist without its checks, as the judge scores it."""
    checklist_data = _parsed(checklist_data)
    if isinstance(checklist_data, dict):
        return {k: v for k, v in checklist_data.items() if k != "checks"}
    return checklist_data


def with_checks(content: float, text: str, checks: Sequence[Check]) -> float:
    """The content score less CHECK_WEIGHT for the share of checks the text fails."""
    if not checks:
        return content
    return content - CHECK_WEIGHT * (1.0 - pass_rate(run_checks(text, checks)))


def completion_text(completion: Any) -> str:
    """Text of a TRL completion: a string, or a list of assistant messages."""
    if isinstance(completion, str):
        return completion
    return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))


def prompt_messages(prompt: Any) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return list(prompt)


def void_groups(rewards: list[float | None],
                ids: Sequence[Any] | None) -> tuple[list[float | None], int]:
    """Every reward of a group that lost one becomes None; returns (rewards, groups voided)."""
    if ids is None:
        return rewards, 0
    broken = {g for g, r in zip(ids, rewards, strict=True) if r is None}
    voided = [None if g in broken else r for g, r in zip(ids, rewards, strict=True)]
    return voided, len(broken)


class ChecklistReward:
    __name__ = "checklist"

    def __init__(self, judge: Judge, retries: int = 2) -> None:
        self.judge = judge
        self.retries = retries
        self.counts: Counter[str] = Counter()

    async def score(self, item: tuple[Any, str, Any]) -> float | None:
        prompt, text, checklist_data = item
        try:
            # The judge scores the dimensions; the checks are run here, in code (and a check
            # of a kind this version does not know must not cost the content score).
            checklist = from_json(dimensions_only(checklist_data))
        except ChecklistInvalid:
            self.counts["bad_checklist"] += 1
            return None
        for _ in range(self.retries + 1):
            self.judge.calls += 1
            try:
                result = await evaluate(self.judge.backend, prompt_messages(prompt), text,
                                        checklist, self.judge.params, mode="joint",
                                        retries=self.retries)
            except RedraftError:
                self.counts["judge_errors"] += 1
                continue
            if not result.degraded:
                return with_checks(result.normalised, text, stored_checks(checklist_data))
            self.counts["degraded"] += 1
        return None

    def __call__(self, prompts: list[Any], completions: list[Any],
                 completion_ids: Any = None, **columns: Any) -> list[float | None]:
        checklists = columns.get("checklist") or [None] * len(prompts)
        items = [(p, completion_text(c), k) for p, c, k in
                 zip(prompts, completions, checklists, strict=True)]
        rewards = self.judge.map(self.score, items)
        missing = sum(r is None for r in rewards)
        rewards, voided = void_groups(rewards, columns.get("id"))
        self.counts["scored"] += len(rewards) - missing
        self.counts["unscorable"] += missing
        self.counts["groups_voided"] += voided
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            log_metric("checklist/unscorable", float(missing))
            log_metric("checklist/groups_voided", float(voided))
        return rewards

    def stats(self) -> dict[str, int]:
        return {k: self.counts.get(k, 0) for k in
                ("scored", "unscorable", "groups_voided", "judge_errors", "degraded",
                 "bad_checklist")}


def checklist_reward(config: Any, *, judge: Judge, **_: Any) -> ChecklistReward:
    return ChecklistReward(judge, retries=getattr(config, "judge_retries", 2))



class ChecksReward:
    """The share of its prompt's stored checks a completion passes; 0 for a completion that
    drops the task; None without checks; scaled down off the prompt's length band (`band`)
    and when cut at the token limit (`cut`). Logs per step the share of completions that pass
    every check (`checks/all_passed`), that drop the task (`checks/dropped_task`), that are
    off the band (`checks/off_length`) and that are cut (`checks/cut`)."""

    __name__ = "checks"

    def __init__(self, band: LengthBand | None = None, cut: CutGuard | None = None) -> None:
        self.band = band or LengthBand()
        self.cut = cut or CutGuard()
        self.counts: Counter[str] = Counter()

    def __call__(self, prompts: list[Any], completions: list[Any],
                 completion_ids: Any = None, **columns: Any) -> list[float | None]:
        checklists = columns.get("checklist") or [None] * len(prompts)
        references = columns.get(REFERENCE_WORDS) or [None] * len(prompts)
        ids = completion_ids if completion_ids is not None else [None] * len(prompts)
        rewards: list[float | None] = []
        passed_all = dropped = off_length = cut = 0
        for prompt, completion, data, reference, tokens in zip(
                prompts, completions, checklists, references, ids, strict=True):
            checks = stored_checks(data)
            if not checks:
                self.counts["no_checks"] += 1
                rewards.append(None)
                continue
            text = completion_text(completion)
            outcomes = run_checks(text, checks)
            self.counts["checks_run"] += len(outcomes)
            self.counts["checks_passed"] += sum(o.passed for o in outcomes)
            passed_all += all(o.passed for o in outcomes)
            if drops_task(text, request_text(prompt), checks) is not None:
                self.counts["dropped_task"] += 1
                dropped += 1
                rewards.append(0.0)
                continue
            scale = self.band.scale(text, reference, checks)
            off_length += scale < 1.0
            self.counts["off_length"] += scale < 1.0
            kept = self.cut.scale(tokens)
            cut += kept < 1.0
            self.counts["cut"] += kept < 1.0
            rewards.append(pass_rate(outcomes) * scale * kept)
        missing = sum(r is None for r in rewards)
        self.counts["scored"] += len(rewards) - missing
        self.counts["unscorable"] += missing
        log_metric = columns.get("log_metric")
        if callable(log_metric) and len(rewards) > missing:
            log_metric("checks/all_passed", passed_all / (len(rewards) - missing))
            log_metric("checks/dropped_task", dropped / (len(rewards) - missing))
            log_metric("checks/off_length", off_length / (len(rewards) - missing))
            log_metric("checks/cut", cut / (len(rewards) - missing))
        return rewards

    def stats(self) -> dict[str, int]:
        return {k: self.counts.get(k, 0) for k in
                ("scored", "unscorable", "no_checks", "checks_run", "checks_passed",
                 "dropped_task", "off_length", "cut")}


def checks_reward(config: Any, **_: Any) -> ChecksReward:
    default = LengthBand()
    band = LengthBand(floor=getattr(config, "length_floor", default.floor),
                      ceiling=getattr(config, "length_ceiling", default.ceiling))
    cut = CutGuard(limit=getattr(config, "max_completion_length", None),
                   factor=getattr(config, "cut_factor", CutGuard().factor))
    return ChecksReward(band, cut)

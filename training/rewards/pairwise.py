"""Pairwise comparison reward (Writing-RL, Lei et al.; R2-Write reports pairwise beating
pointwise reward): `gspo --reward pairwise`.

The judge sees the reference first (response A) and the completion second (response B): the
deliberate positional disadvantage, since judges favour the first answer. The reward is 1 when
the completion wins, 0.5 on a tie, 0 on a loss, None (NaN to TRL, counted) when no valid
verdict comes back. The checks stored with the prompt's checklist are run in code on the
completion and mix in as in the checklist reward: the verdict less CHECK_WEIGHT for the share
of them it fails, so a win that breaks a requirement earns less than one that keeps it, yet
never less than a tie; the judge sees the checklist's dimensions only. The reference is the
prompt's y*, or, with a `ReferenceScheduler`, the prompt's current rung of its reference
ladder; a prompt is promoted when the judge prefers any of its completions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.conversation import render_conversation
from generation.errors import RedraftError
from generation.schemas import obj, one_of, text
from generation.structured import AnswerModel, ask, for_schema, system_user
from generation.types import ChatParams, Message
from rubrics.checklist import ChecklistInvalid, from_json
from rubrics.evaluate import render_checklist
from rubrics.templates import render
from training.data.think import split_think
from training.parallel import gather
from training.rewards.checklist import dimensions_only, stored_checks, with_checks
from training.rewards.judging import JudgedReward, JudgeLike, completion_text
from training.rewards.references import ReferenceScheduler

REASON_CHARS = 800
VALUES = {"A": 0.0, "B": 1.0, "tie": 0.5}

PAIRWISE_PROMPT = """Compare two responses to the target turn of this conversation.

# Conversation
{conversation}
{criteria}
# Response A
<response_a>
{a}
</response_a>

# Response B
<response_b>
{b}
</response_b>

Decide which response better serves the target turn{by_criteria}. Judge substance, not length
or position. Answer with a JSON object: "reason" (at most {reason_chars} characters, the
decisive differences) and "verdict": "A" if response A is better, "B" if response B is better,
"tie" only if neither is better."""


class Verdict(AnswerModel):
    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal["A", "B", "tie"]


VERDICT_SCHEMA: JsonSchema = obj({"reason": text(REASON_CHARS),
                                  "verdict": one_of(list(VALUES))})


def pairwise_messages(prompt: Sequence[Message], reference: str, completion: str,
                      checklist: Mapping[str, Any] | None) -> list[Message]:
    criteria, by_criteria = "", ""
    if checklist:
        try:
            criteria = "\n# Criteria\n" + render_checklist(
                from_json(dimensions_only(checklist))) + "\n"
            by_criteria = ", judged on the criteria"
        except ChecklistInvalid:
            pass
    return system_user(render("judge_system"), PAIRWISE_PROMPT.format(
        conversation=render_conversation(prompt), criteria=criteria, a=reference, b=completion,
        by_criteria=by_criteria, reason_chars=REASON_CHARS))


async def compare(judge: Backend, params: ChatParams, prompt: Sequence[Message], reference: str,
                  completion: str, checklist: Mapping[str, Any] | None,
                  retries: int = 2) -> float | None:
    """The completion's pairwise reward against `reference`: 1 win, 0.5 tie, 0 loss, None."""
    try:
        answer = await ask(judge, pairwise_messages(prompt, reference, completion, checklist),
                           for_schema(params), Verdict, lambda v: VALUES[v.verdict],
                           retries=retries, schema=VERDICT_SCHEMA)
    except RedraftError:
        return None
    return answer.value


class PairwiseReward(JudgedReward):
    """TRL reward function: one judge call per completion, bounded, on the judge's loop."""

    __name__ = "pairwise"

    def __init__(self, judge: JudgeLike, *, scheduler: ReferenceScheduler | None = None,
                 concurrency: int = 16, retries: int = 2, max_tokens: int = 1024) -> None:
        super().__init__(judge, concurrency=concurrency, retries=retries, max_tokens=max_tokens)
        self.scheduler = scheduler
        self.callbacks: list[Any] = []

    def references(self, ids: Sequence[str], columns: Mapping[str, Any]) -> list[str | None]:
        """The scheduler's current reference; y* for prompts it does not schedule (held out)."""
        given = list(columns.get("reference") or [None] * len(ids))
        if self.scheduler is None:
            return given
        return [self.scheduler.current(i) or y for i, y in zip(ids, given, strict=True)]

    async def _one(self, prompt: Any, answer: str, reference: str | None,
                   checklist: Any) -> float | None:
        if reference is None:
            return None
        if not answer.strip():
            return 0.0
        self.judge.calls += 1
        return await compare(self.judge.backend, self.params, prompt, reference, answer,
                             checklist, self.retries)

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 completion_ids: Any = None, **columns: Any) -> list[float | None]:
        ids = [str(i) for i in columns.get("id") or range(len(prompts))]
        answers = [split_think(completion_text(c))[1] for c in completions]
        references = self.references(ids, columns)
        checklists = columns.get("checklist") or [None] * len(prompts)
        verdicts = self.judge.run(self.bounded(self._one, prompts, answers, references,
                                               checklists))
        rewards = [v if v is None else with_checks(v, a, stored_checks(c))
                   for v, a, c in zip(verdicts, answers, checklists, strict=True)]
        self.tally(rewards, columns)
        if self.scheduler is not None:
            # The ladder climbs on the judge's verdict: checks are the policy's to keep.
            won = [i for i, v in zip(ids, verdicts, strict=True) if v == 1.0]
            if "trainer_state" in columns:
                # A training step: every process promotes the winners of the whole batch, so
                # the pointers stay one state on every rank (as on one process).
                won = [i for share in gather(won) for i in share]
            self.scheduler.promote(won)
            log_metric = columns.get("log_metric")
            if callable(log_metric):
                report = self.scheduler.report()
                log_metric("references/at_strongest", float(report["at_strongest"]))
                log_metric("references/promotions", float(report["promotions"]))
        return rewards

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scored": self.scored, "unscorable": self.unavailable}
        if self.scheduler is not None:
            out["references"] = self.scheduler.report()
        return out


def pairwise_reward(config: Any, *, judge: JudgeLike, **_: Any) -> PairwiseReward:
    """`--reward pairwise`: against y*, or the dynamic reference ladder (`--references`)."""
    scheduler = None
    callbacks: list[Any] = []
    if getattr(config, "references", "dynamic") == "dynamic":
        from training.data.dataset import read_rows
        from training.rewards.references import SchedulerCallback

        scheduler = ReferenceScheduler.from_rows(read_rows(config.data, "prompts", "train"))
        callbacks.append(SchedulerCallback(scheduler))
    reward = PairwiseReward(judge, scheduler=scheduler,
                            concurrency=getattr(config, "judge_concurrency", 16),
                            retries=getattr(config, "judge_retries", 2))
    reward.callbacks = callbacks
    return reward

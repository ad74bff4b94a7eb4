"""Process reward (R2-Write, Liu et al., "Reflection and Revision for Open-Ended Writing"):
`gspo --reward checklist+process` or `pairwise+process`, with `--alpha` (the paper's 0.25).

An LLM extracts the reflection segments of a completion's `<think>` part (each: the issue the
writer found, the revision planned). Each segment is judged on three +1/-1 aspects: the issue
is real in the draft, the revision matches the rubric, the final answer carries it out. A
segment scores +1 only if all three hold, else -1; R_p is the mean over segments. A completion
with no `<think>` part or no reflection in it gets R_p = -1: a trajectory that does not reflect
has no process to reward. With R_a the answer reward (checklist or pairwise):

    R_all = alpha * R_a + (1 - alpha) * R_p   if R_a > 0
    R_all = R_a                               otherwise
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.conversation import render_conversation
from generation.errors import RedraftError
from generation.schemas import array, obj, one_of, text
from generation.structured import AnswerInvalid, AnswerModel, ask, for_schema, system_user
from generation.types import ChatParams, Message
from rubrics.checklist import ChecklistInvalid, from_json
from rubrics.evaluate import render_checklist
from rubrics.templates import render
from training.data.think import split_think
from training.rewards.judging import JudgedReward, JudgeLike, completion_text

MAX_SEGMENTS = 8
FIELD_CHARS = 600

EXTRACT_PROMPT = """Below is a writer's private thinking while answering the target turn.
List its reflection segments in order: each place where the writer identifies a problem in
their text and plans a revision. For each give "issue" (the problem, at most {chars}
characters) and "revision" (the planned change, at most {chars} characters). At most {n}
segments; none if the thinking contains no reflection.

# Conversation
{conversation}

# Thinking
<thinking>
{think}
</thinking>"""

JUDGE_PROMPT = """A writer reflected on their draft and then wrote a final answer. Judge each
numbered reflection segment on three aspects, each +1 (holds) or -1 (does not):
- "issue_real": the issue is a real weakness of the draft for the target turn;
- "rubric_aligned": the planned revision moves the text toward the rubric's higher bands;
- "carried_out": the final answer actually carries out the planned revision.
Answer with {n} judgments, one per segment, in order.

# Conversation
{conversation}
{rubric}
# Thinking (draft and reflections)
<thinking>
{think}
</thinking>

# Segments
{segments}

# Final answer
<final>
{answer}
</final>"""


class Segment(AnswerModel):
    issue: str = Field(min_length=1, max_length=FIELD_CHARS)
    revision: str = Field(min_length=1, max_length=FIELD_CHARS)


class Segments(AnswerModel):
    segments: list[Segment] = Field(max_length=MAX_SEGMENTS)


class Aspects(AnswerModel):
    issue_real: Literal[1, -1]
    rubric_aligned: Literal[1, -1]
    carried_out: Literal[1, -1]

    @property
    def score(self) -> float:
        return 1.0 if self.issue_real == self.rubric_aligned == self.carried_out == 1 else -1.0


class Judgments(AnswerModel):
    judgments: list[Aspects]


SEGMENTS_SCHEMA: JsonSchema = obj({"segments": array(
    obj({"issue": text(FIELD_CHARS, 1), "revision": text(FIELD_CHARS, 1)}),
    max_items=MAX_SEGMENTS)})


def judgments_schema(n: int) -> JsonSchema:
    """Exactly n judgments, each aspect +1 or -1."""
    aspect = one_of([1, -1])
    return obj({"judgments": array(obj({"issue_real": aspect, "rubric_aligned": aspect,
                                        "carried_out": aspect}), min_items=n, max_items=n)})


@dataclass(frozen=True, slots=True)
class ProcessScore:
    r_p: float | None          # None: the judge gave no usable answer
    segments: int
    think_chars: int


def _rubric(checklist: Mapping[str, Any] | None) -> str:
    if not checklist:
        return ""
    try:
        return "\n# Rubric\n" + render_checklist(from_json(checklist)) + "\n"
    except ChecklistInvalid:
        return ""


def _exactly(n: int) -> Callable[[Judgments], list[float]]:
    def accept(out: Judgments) -> list[float]:
        if len(out.judgments) != n:
            raise AnswerInvalid(f"expected {n} judgments, one per segment; got "
                                f"{len(out.judgments)}")
        return [a.score for a in out.judgments]
    return accept


async def process_score(judge: Backend, params: ChatParams, prompt: Sequence[Message],
                        completion: str, checklist: Mapping[str, Any] | None,
                        retries: int = 2) -> ProcessScore:
    """R_p of one completion: extract the segments, judge them all in one call, average."""
    think, answer = split_think(completion)
    if not think:
        return ProcessScore(-1.0, 0, 0)
    params = for_schema(params)
    conversation = render_conversation(prompt)
    try:
        found = await ask(judge, system_user(render("judge_system"), EXTRACT_PROMPT.format(
            chars=FIELD_CHARS, n=MAX_SEGMENTS, conversation=conversation, think=think)),
            params, Segments, lambda s: s.segments, retries=retries,
            schema=SEGMENTS_SCHEMA)
        if found.value is None:
            return ProcessScore(None, 0, len(think))
        segments = found.value
        if not segments:
            return ProcessScore(-1.0, 0, len(think))
        listed = "\n".join(f"{i}. Issue: {s.issue}\n   Revision: {s.revision}"
                           for i, s in enumerate(segments, 1))
        judged = await ask(judge, system_user(render("judge_system"), JUDGE_PROMPT.format(
            n=len(segments), conversation=conversation, rubric=_rubric(checklist), think=think,
            segments=listed, answer=answer)), params, Judgments, _exactly(len(segments)),
            retries=retries, schema=judgments_schema(len(segments)))
    except RedraftError:
        return ProcessScore(None, 0, len(think))
    if judged.value is None:
        return ProcessScore(None, len(segments), len(think))
    return ProcessScore(sum(judged.value) / len(judged.value), len(segments), len(think))


def combine(r_a: float | None, r_p: float | None, alpha: float) -> float | None:
    """R_all = alpha R_a + (1 - alpha) R_p when R_a > 0, else R_a; None if either is missing."""
    if r_a is None:
        return None
    if r_a <= 0:
        return r_a
    return None if r_p is None else alpha * r_a + (1 - alpha) * r_p


def _answer_only(completion: Any) -> Any:
    """The completion with its <think> part removed, in the shape TRL gave it."""
    answer = split_think(completion_text(completion))[1]
    if isinstance(completion, list):
        return [{"role": "assistant", "content": answer}]
    return answer


class ProcessReward(JudgedReward):
    """TRL reward function: the answer reward on the final answers, combined with R_p."""

    def __init__(self, answer_reward: Callable[..., list[float | None]], judge: JudgeLike, *,
                 alpha: float = 0.25, concurrency: int = 16, retries: int = 2,
                 max_tokens: int = 2048) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        self.answer_reward = answer_reward
        self.__name__ = f"{getattr(answer_reward, '__name__', 'answer')}+process"
        super().__init__(judge, concurrency=concurrency, retries=retries, max_tokens=max_tokens)
        self.alpha = alpha
        self.segments = 0
        # The answer reward's extra GRPO settings and callbacks (the reference scheduler).
        self.config_overrides = dict(getattr(answer_reward, "config_overrides", {}) or {})
        self.callbacks = list(getattr(answer_reward, "callbacks", []) or [])

    async def _one(self, prompt: Any, text: str, checklist: Any) -> ProcessScore:
        self.judge.calls += 1
        return await process_score(self.judge.backend, self.params, prompt, text, checklist,
                                   self.retries)

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 completion_ids: Any = None, **columns: Any) -> list[float | None]:
        r_a = self.answer_reward(prompts, [_answer_only(c) for c in completions],
                                 completion_ids, **columns)
        checklists = columns.get("checklist") or [None] * len(prompts)
        scores = self.judge.run(self.bounded(
            self._one, prompts, [completion_text(c) for c in completions], checklists))
        rewards = [combine(a, s.r_p, self.alpha) for a, s in zip(r_a, scores, strict=True)]
        self.tally(rewards, columns)
        self.segments += sum(s.segments for s in scores)
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            known = [s.r_p for s in scores if s.r_p is not None]
            if known:
                log_metric("process/r_p", sum(known) / len(known))
            log_metric("process/segments", sum(s.segments for s in scores) / len(scores))
        return rewards

    def stats(self) -> dict[str, Any]:
        inner = self.answer_reward.stats() if hasattr(self.answer_reward, "stats") else {}
        return {"scored": self.scored, "unscorable": self.unavailable,
                "segments": self.segments, "answer": inner}


def process_reward(answer: Callable[..., Any]) -> Callable[..., ProcessReward]:
    """The factory of `<answer>+process`: the answer reward `answer` makes, combined with R_p."""

    def factory(config: Any, *, judge: JudgeLike, **collaborators: Any) -> ProcessReward:
        inner = answer(config, judge=judge, **collaborators)
        return ProcessReward(inner, judge, alpha=getattr(config, "alpha", 0.25),
                             concurrency=getattr(config, "judge_concurrency", 16),
                             retries=getattr(config, "judge_retries", 2))

    return factory

"""Scoring a text against a checklist with a judge backend.

`joint` asks for every dimension in one call; `per_dimension` asks one call per dimension,
in parallel under a semaphore, as WritingBench's judge does. Scores off the scale are
clamped onto it; a dimension still unscored after the retries gets its minimum and marks
the result degraded. Bad judge output never raises.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, ValidationError

from generation.base import Backend, JsonSchema
from generation.conversation import render_conversation
from generation.errors import InvalidRequest, UpstreamError
from generation.schemas import EVIDENCE_CHARS, integer, obj, text
from generation.structured import (
    RETRY,
    AnswerInvalid,
    AnswerModel,
    ask,
    for_schema,
    parse_json,
    system_user,
)
from generation.truncated import closed_prefixes
from generation.types import ChatParams, Message, Usage
from rubrics.budget import QUOTE, fitted
from rubrics.checklist import Band, Checklist, Dimension, DimensionScore, Evaluation, name_key
from rubrics.evidence import FLAG, quoted, retry_note
from rubrics.templates import render

Mode = Literal["joint", "per_dimension"]


class Judged(AnswerModel):
    evidence: str
    # A float on reading so that 7.5 or "8" is rounded rather than rejected.
    score: float = Field(allow_inf_nan=False)


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    evaluation: Evaluation
    usage: Usage
    calls: int
    degraded: bool
    checklist: Checklist
    error: str = ""  # why some dimensions went unscored: the last answer's fault or upstream error

    @property
    def total(self) -> float:
        return self.evaluation.total(self.checklist)

    @property
    def normalised(self) -> float:
        return self.evaluation.normalised(self.checklist)


def render_dimension(dim: Dimension) -> str:
    lines = [f"### {dim.name} (scale {dim.scale_min}-{dim.scale_max}, weight {dim.weight:g})",
             dim.description]
    lines.extend(f"- {b.low}-{b.high}: {b.description}" for b in dim.bands)
    return "\n".join(lines)


def without_bands(checklist: Checklist) -> Checklist:
    """The rubric with each dimension's bands cut to two short ones over the same scale: what
    a judge is shown when the full rubric does not fit the model's context."""
    def bare(dim: Dimension) -> Dimension:
        low, high = dim.scale_min, dim.scale_max
        mid = (low + high) // 2
        bands = (Band(low=low, high=mid, description="falls short of the description"),
                 Band(low=mid + 1, high=high, description="meets the description"))
        return dim.model_copy(update={"bands": bands})

    return checklist.model_copy(update={"dimensions": tuple(bare(d)
                                                            for d in checklist.dimensions)})


@lru_cache(maxsize=256)
def render_checklist(checklist: Checklist) -> str:
    """The rubric as every judge prompt shows it: rendered once per checklist (a loop sends it
    in every judge call, byte-identical for the upstream's prefix cache)."""
    return "\n".join(render_dimension(d) for d in checklist.dimensions)


def judge_messages(query_messages: Sequence[Message], checklist: Checklist,
                   task: str) -> list[Message]:
    """Every judge call of a loop opens with the same bytes — the judge's standing
    instructions, the rubric, the conversation — so an upstream's prefix cache reuses them;
    the task and the text it is about come last."""
    head = render("judge_head", checklist=render_checklist(checklist),
                  conversation=render_conversation(query_messages))
    return system_user(render("judge_system"), f"{head}\n{task}")


def judged_schema(dim: Dimension) -> JsonSchema:
    """Judged's schema with the score pinned to the dimension's integer scale, the evidence
    a sentence or two (`rubrics.budget.QUOTE`)."""
    return obj({"evidence": text(QUOTE),
                "score": integer(dim.scale_min, dim.scale_max)})


def joint_schema(dims: Sequence[Dimension]) -> JsonSchema:
    return obj({"scores": obj({d.name: judged_schema(d) for d in dims})})


def _evidence(text: str) -> str:
    return text.strip().strip("\"'“”「」").strip()[:EVIDENCE_CHARS]


def _read_joint(text: str, pending: Sequence[Dimension]) -> tuple[list[DimensionScore], str]:
    """The valid scores in a joint answer, and what to say about the rest."""
    try:
        data = parse_json(text)
    except AnswerInvalid as exc:
        # cut short by the token budget: the dimensions scored before the cut still count
        data = next(closed_prefixes(text), None)
        if data is None:
            return [], str(exc)
    scores: Any = data.get("scores") if isinstance(data, dict) else None
    if isinstance(scores, list):
        scores = {str(s.get("name")): s for s in scores if isinstance(s, dict)}
    if not isinstance(scores, dict):
        return [], "the answer has no 'scores' object"
    by_key = {name_key(str(k)): v for k, v in scores.items()}
    found = []
    for dim in pending:
        try:
            judged = Judged.model_validate(by_key.get(name_key(dim.name)))
        except ValidationError:
            continue
        found.append(dim.scored(judged.score, _evidence(judged.evidence)))
    scored = {s.name for s in found}
    missing = [d.name for d in pending if d.name not in scored]
    return found, "no valid evidence and integer score for: " + json.dumps(
        missing, ensure_ascii=False)


def _check_quotes(scored: list[DimensionScore], text: str,
                  held: dict[str, DimensionScore]) -> tuple[list[DimensionScore], list[str]]:
    """Scores whose evidence is not in `text` are held back to be re-asked once (their names
    come second); re-asked ones are kept, their evidence flagged."""
    kept, again = [], []
    for score in scored:
        if quoted(score.evidence, text):
            kept.append(score)
        elif score.name in held:
            kept.append(_flagged(score))
        else:
            held[score.name] = score
            again.append(score.name)
    return kept, again


def _flagged(score: DimensionScore) -> DimensionScore:
    return score.model_copy(update={"evidence": FLAG + score.evidence})


def flag_unquoted(evaluation: Evaluation, text: str) -> tuple[Evaluation, list[str]]:
    """The evaluation with every evidence that is not from `text` flagged, and their names."""
    names = [s.name for s in evaluation.scores if not quoted(s.evidence, text)]
    scores = tuple(_flagged(s) if s.name in names else s for s in evaluation.scores)
    return Evaluation(scores=scores), names


def _with(task: str, contrast: str) -> str:
    return f"{task.rstrip()}\n\n{contrast}" if contrast else task


async def _joint(judge: Backend, query: Sequence[Message], text: str, checklist: Checklist,
                 params: ChatParams, retries: int,
                 contrast: str = "") -> tuple[dict[str, DimensionScore], Usage, int, str]:
    pending = list(checklist.dimensions)
    found: dict[str, DimensionScore] = {}
    held: dict[str, DimensionScore] = {}  # scored without a quote, re-asked
    usage, calls, error = Usage(), 0, ""
    messages = judge_messages(query, checklist, _with(render(
        "judge_joint", scoring=render("judge_scoring").strip(), text=text), contrast))
    for _ in range(retries + 1):
        calls += 1
        try:
            call, schema = fitted(params, joint_schema(pending))
            completion = await judge.chat(messages, call, schema=schema)
        except UpstreamError as exc:
            error = f"upstream error: {exc}"
            continue
        usage += completion.usage
        scored, error = _read_joint(completion.text, pending)
        if completion.finish_reason == "length" and not scored:
            error = (f"the answer was cut short at its token budget "
                     f"({completion.usage.completion_tokens} tokens) before any dimension "
                     f"was complete; keep each evidence to a sentence")
        scored, again = _check_quotes(scored, text, held)
        if again:
            missing = [d.name for d in pending
                       if d.name not in again and all(d.name != s.name for s in scored)]
            error = "; ".join([*([error] if missing else []), retry_note(again)])
        found.update((s.name, s) for s in scored)
        pending = [d for d in pending if d.name not in found]
        if not pending:
            break
        messages = [*messages, {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": RETRY.format(error=error)}]
    for name, score in held.items():  # the re-ask never came back: the first answer, flagged
        found.setdefault(name, _flagged(score))
    return found, usage, calls, error if pending else ""


async def _per_dimension(judge: Backend, query: Sequence[Message], text: str,
                         checklist: Checklist, params: ChatParams, retries: int,
                         concurrency: int,
                         contrast: str = "") -> tuple[dict[str, DimensionScore], Usage, int, str]:
    semaphore = asyncio.Semaphore(concurrency)
    conversation = render_conversation(query)

    async def one(dim: Dimension) -> tuple[DimensionScore | None, Usage, int, str]:
        # One criterion per call, as WritingBench's judge sees it; the text comes before
        # it, so the calls for one text share everything up to the criterion as a prefix.
        messages = system_user(render("judge_system"), _with(render(
            "judge_dimension", conversation=conversation, text=text,
            criterion=render_dimension(dim), low=dim.scale_min, high=dim.scale_max), contrast))
        held: list[DimensionScore] = []  # scored without a quote: re-asked once

        def accept(judged: Judged) -> DimensionScore:
            score = dim.scored(judged.score, _evidence(judged.evidence))
            if quoted(score.evidence, text):
                return score
            if held:
                return _flagged(score)
            held.append(_flagged(score))
            raise AnswerInvalid(retry_note([dim.name]))

        async with semaphore:
            call, schema = fitted(params, judged_schema(dim))
            answer = await ask(judge, messages, call, Judged, accept,
                               retries=retries, schema=schema)
        value = answer.value if answer.value is not None else (held[0] if held else None)
        error = "" if value is not None else f"{dim.name}: {answer.error}"
        return value, answer.usage, answer.calls, error

    tasks = [asyncio.ensure_future(one(d)) for d in checklist.dimensions]
    try:
        results = await asyncio.gather(*tasks)
    except BaseException:
        # One failed upstream call fails the evaluation; the others' calls are not wanted.
        for task in tasks:
            task.cancel()
        raise
    found = {s.name: s for s, _, _, _ in results if s is not None}
    usage = sum((u for _, u, _, _ in results), Usage())
    errors = "; ".join(e for _, _, _, e in results if e)
    return found, usage, sum(c for _, _, c, _ in results), errors


async def evaluate(judge_backend: Backend, query_messages: Sequence[Message], text: str,
                   checklist: Checklist, params: ChatParams, *, mode: Mode = "joint",
                   retries: int = 2, concurrency: int = 8,
                   contrast: str = "") -> EvaluationResult:
    """Score `text`, the answer to the last user turn of `query_messages`, on `checklist`.
    `contrast`, when given, is added after the task (a judgement asked again with what
    changed since an earlier version)."""
    if mode not in ("joint", "per_dimension"):
        raise InvalidRequest(f"unknown evaluation mode {mode!r}", param="reflection.evaluation")
    if retries < 0 or concurrency < 1:
        raise InvalidRequest(f"bad evaluation bounds retries={retries} concurrency={concurrency}")
    params = for_schema(params)
    if mode == "joint":
        found, usage, calls, error = await _joint(judge_backend, query_messages, text,
                                                  checklist, params, retries, contrast)
    else:
        found, usage, calls, error = await _per_dimension(
            judge_backend, query_messages, text, checklist, params, retries, concurrency, contrast)
    scores = tuple(found.get(d.name) or d.scored(d.scale_min) for d in checklist.dimensions)
    evaluation = Evaluation(scores=scores)
    degraded = len(found) < len(checklist.dimensions)
    return EvaluationResult(evaluation, usage, calls, degraded, checklist,
                            error if degraded else "")

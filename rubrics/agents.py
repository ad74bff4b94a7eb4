"""The checklist K(q) = A_sel(q, A_ax(q, A_open(q))): three Grounded-Theory coding agents.

Each agent is one schema-constrained call. `mode="fused"` asks for all three codings in one
call, for the latency budget (the cold critical path has room for one checklist call).
Agents write band descriptions only; the score ranges follow from the fixed step, so they
are contiguous and cover the scale by construction.

Checks (requirements code verifies, `rubrics.checks`) ride in the call that writes the
rubric (selective coding, or the fused call), so they cost no extra call: the deterministic
pre-pass runs first, the agent adds what it finds, and only agent checks the pre-pass also
found or whose quote occurs in the request are kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import Field

from generation.base import Backend, JsonSchema
from generation.conversation import detect_language, message_text, render_conversation, target_text
from generation.errors import InvalidRequest
from generation.schemas import (
    LINE_CHARS,
    array,
    clip,
    distinct_names,
    obj,
    one_of,
    text,
)
from generation.structured import AnswerInvalid, AnswerModel, ask, for_schema, system_user
from generation.types import ChatParams, Message, Usage
from rubrics.budget import NAME, REASON, SENTENCE, fitted
from rubrics.checklist import ANY, Checklist, Dimension, Limits, name_key
from rubrics.checks.extract import checks_schema, from_agent, kinds_prompt, merge
from rubrics.checks.model import Check
from rubrics.checks.prepass import prepass
from rubrics.packs import PackLibrary
from rubrics.repair import prompt_runs, repair_checklist, specific_bands
from rubrics.templates import fixed_text, render

log = logging.getLogger(__name__)

Mode = Literal["three_agent", "fused"]
MIN_BANDS, MAX_BANDS = 3, 5
M = TypeVar("M", bound=AnswerModel)


ASPECTS = ("task_goal", "genre", "audience", "style", "format", "content_risk", "other")
MAX_CANDIDATES, MAX_MERGED = 24, 8


class Candidate(AnswerModel):
    name: str
    aspect: str = Field(description=", ".join(ASPECTS))
    reason: str


class OpenCoding(AnswerModel):
    candidates: list[Candidate]


class AxialDimension(AnswerModel):
    name: str
    description: str
    rationale: str
    merged_from: list[str]


class AxialCoding(AnswerModel):
    dimensions: list[AxialDimension]


class RubricDimension(AnswerModel):
    name: str
    description: str
    rationale: str
    bands: list[str] = Field(description="band descriptions, lowest to highest")


class SelectiveCoding(AnswerModel):
    dimensions: list[RubricDimension]
    # flattened checks (rubrics.checks.extract); read leniently, each one kept or dropped
    checks: list[dict[str, Any]] = Field(default_factory=list)


class FusedCoding(AnswerModel):
    candidates: list[Candidate]
    dimensions: list[RubricDimension]
    checks: list[dict[str, Any]] = Field(default_factory=list)


def _candidate_schema() -> JsonSchema:
    return obj({"name": text(NAME, 1), "aspect": one_of(ASPECTS), "reason": text(REASON)})


def _rubric_schema(name: JsonSchema) -> JsonSchema:
    return obj({"name": name, "description": text(SENTENCE), "rationale": text(SENTENCE),
                "bands": array(text(REASON, 1), MIN_BANDS, MAX_BANDS)})


@dataclass(frozen=True, slots=True)
class BuiltChecklist:
    checklist: Checklist
    usage: Usage
    calls: int
    degraded: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class _Task:
    conversation: str
    language: str | None
    n_min: int
    n_max: int
    step: int
    request: str = ""                 # what an agent's check quote must occur in
    found: tuple[Check, ...] = ()     # the pre-pass's checks
    spare: tuple[Dimension, ...] = ()  # the generic pack's dimensions, to top up with

    @property
    def limits(self) -> Limits:
        return Limits(self.n_min, self.n_max, MIN_BANDS, MAX_BANDS)

    def prompt(self, name: str, **values: Any) -> list[Message]:
        language = render("language_zh" if self.language == "zh" else "language_any").strip()
        user = render(name, conversation=self.conversation, language_instruction=language,
                      n_min=self.n_min, n_max=self.n_max, step=self.step,
                      min_bands=MIN_BANDS, max_bands=MAX_BANDS, check_kinds=kinds_prompt(),
                      **values)
        return system_user(render("coder_system"), user)

    def open_schema(self) -> JsonSchema:
        return obj({"candidates": array(_candidate_schema(), self.n_min, MAX_CANDIDATES)})

    def axial_schema(self, candidates: Sequence[Candidate]) -> JsonSchema:
        dim = obj({"name": text(NAME, 1), "description": text(SENTENCE),
                   "rationale": text(SENTENCE),
                   "merged_from": array(one_of([c.name for c in candidates]), 0, MAX_MERGED)})
        return obj({"dimensions": array(dim, self.n_min, self.n_max)})

    def selective_schema(self, dims: Sequence[AxialDimension]) -> JsonSchema:
        rubric = _rubric_schema(one_of([d.name for d in dims]))
        return obj({"dimensions": array(rubric, len(dims), len(dims)),
                    "checks": checks_schema()})

    def fused_schema(self) -> JsonSchema:
        # In one call the candidates only lead into the dimensions: a small model fills an
        # array to its bound, and 24 candidates spent SmolLM2's whole budget before them.
        return obj({"candidates": array(_candidate_schema(), 0, self.n_max),
                    "dimensions": array(_rubric_schema(text(NAME, 1)), self.n_min,
                                        self.n_max),
                    "checks": checks_schema()})

    def checks(self, items: Sequence[dict[str, Any]]) -> tuple[Check, ...]:
        """The pre-pass's checks merged with the agent's that the request supports."""
        agent = [c for c in (from_agent(i, self.request, self.found) for i in items) if c]
        return merge(self.found, agent)

    def checklist(self, dims: Sequence[RubricDimension],
                  checks: Sequence[dict[str, Any]] = ()) -> Checklist:
        """The rubric with ranges from the fixed step: band k covers (k-1)*step+1 .. k*step.

        Names are made distinct, and blank, generic, repeated or prompt-copied bands and
        repeated rationales rewritten from their dimension: what no schema can require is
        repaired here rather than retried. So is what an upstream without constrained
        decoding leaves short: a dimension with only its lowest and highest band gets the
        levels between them written from its description, and fewer dimensions than asked
        are topped up with the generic pack's (a dimension with one band is dropped)."""
        names = distinct_names([d.name for d in dims])
        raw = {"dimensions": [{
            "name": name, "description": clip(d.description, LINE_CHARS),
            "rationale": clip(d.rationale, LINE_CHARS),
            "bands": [{"low": k * self.step + 1, "high": (k + 1) * self.step,
                       "description": clip(band, LINE_CHARS)}
                      for k, band in enumerate(_between(d.bands))],
        } for name, d in zip(names, dims, strict=True) if len(d.bands) >= 2]}
        specific_bands(raw["dimensions"], _prompt_runs())
        raw["dimensions"] += self._top_up(raw["dimensions"])
        built = repair_checklist(raw, limits=self.limits, source="generated",
                                 language=self.language)
        return built.model_copy(update={"checks": self.checks(checks)})

    def _top_up(self, dims: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Generic pack dimensions the agents' `dims` lack, up to the fewest asked for."""
        if not dims or len(dims) >= self.n_min:
            return []
        have = {name_key(d["name"]) for d in dims}
        extra = [d for d in self.spare if name_key(d.name) not in have][:self.n_min - len(dims)]
        log.info("checklist topped up with %d generic dimensions (%s): the agents wrote %d",
                 len(extra), ", ".join(d.name for d in extra), len(dims))
        return [d.model_dump(mode="json") for d in extra]


def _between(bands: Sequence[str]) -> list[str]:
    """Bands padded to MIN_BANDS with blank levels between the lowest and the highest (which
    `specific_bands` then writes from the dimension's description)."""
    missing = MIN_BANDS - len(bands)
    return [*bands[:-1], *[""] * missing, bands[-1]] if missing > 0 and bands else list(bands)


@cache
def _prompt_runs() -> frozenset[tuple[str, ...]]:
    return prompt_runs(fixed_text("coder_system", "open_coding", "axial_coding",
                                  "selective_coding", "fused_coding"))


def _distinct(items: Sequence[M], least: int, what: str) -> list[M]:
    """Items with blank or repeated names renamed (see `distinct_names`); fewer than `least`
    of them (an upstream that ignored the schema's minItems) is worth a retry."""
    if len(items) < least:
        raise AnswerInvalid(f"only {len(items)} {what}; at least {least} are needed")
    names = distinct_names([i.name for i in items])
    return [i.model_copy(update={"name": n}) for i, n in zip(items, names, strict=True)]


def _matched(axial: Sequence[AxialDimension],
             rubrics: Sequence[RubricDimension]) -> list[RubricDimension]:
    """One rubric per axial dimension, under its name: a rubric naming a dimension already
    covered (or none of them) serves the next dimension left without one."""
    wanted = {name_key(a.name) for a in axial}
    by_key: dict[str, RubricDimension] = {}
    spare = []
    for rubric in rubrics:
        key = name_key(rubric.name)
        if key in wanted and key not in by_key:
            by_key[key] = rubric
        else:
            spare.append(rubric)
    out = []
    for dim in axial:
        rubric = by_key.get(name_key(dim.name)) or (spare.pop(0) if spare else None)
        if rubric is not None:
            out.append(RubricDimension(
                name=dim.name, description=rubric.description.strip() or dim.description,
                rationale=rubric.rationale.strip() or dim.rationale, bands=rubric.bands))
    return out


def _dump(items: Sequence[AnswerModel]) -> str:
    return json.dumps([i.model_dump() for i in items], ensure_ascii=False, indent=1)


async def _three_agent(backend: Backend, params: ChatParams, task: _Task,
                       retries: int) -> tuple[Checklist | None, Usage, int, str | None]:
    call, schema = fitted(params, task.open_schema())
    opened = await ask(backend, task.prompt("open_coding"), call,
                       OpenCoding, lambda a: _distinct(a.candidates, task.n_min, "candidates"),
                       retries=retries, schema=schema)
    usage, calls = opened.usage, opened.calls
    if opened.value is None:
        return None, usage, calls, f"open coding: {opened.error}"
    call, schema = fitted(params, task.axial_schema(opened.value))
    axial = await ask(backend, task.prompt("axial_coding", candidates=_dump(opened.value)),
                      call, AxialCoding,
                      lambda a: _distinct(a.dimensions, task.n_min, "dimensions")[:task.n_max],
                      retries=retries, schema=schema)
    usage, calls = usage + axial.usage, calls + axial.calls
    if axial.value is None:
        return None, usage, calls, f"axial coding: {axial.error}"
    dims = axial.value
    call, schema = fitted(params, task.selective_schema(dims))
    selective = await ask(backend, task.prompt("selective_coding", dimensions=_dump(dims)),
                          call, SelectiveCoding,
                          lambda a: task.checklist(_matched(dims, a.dimensions), a.checks),
                          retries=retries, schema=schema)
    usage, calls = usage + selective.usage, calls + selective.calls
    error = None if selective.value else f"selective coding: {selective.error}"
    return selective.value, usage, calls, error


async def _fused(backend: Backend, params: ChatParams, task: _Task,
                 retries: int) -> tuple[Checklist | None, Usage, int, str | None]:
    call, schema = fitted(params, task.fused_schema())
    answer = await ask(backend, task.prompt("fused_coding"), call,
                       FusedCoding, lambda a: task.checklist(a.dimensions, a.checks),
                       retries=retries, schema=schema)
    error = None if answer.value else f"fused coding: {answer.error}"
    return answer.value, answer.usage, answer.calls, error


AGENT_CALLS: dict[str, tuple[str, ...]] = {
    "three_agent": ("open_coding", "axial_coding", "selective_coding"),
    "fused": ("fused_coding",),
}


def agent_instructions(mode: Mode) -> tuple[str, ...]:
    """Each agent call's own instructions (system and task, placeholders left out), one per
    call a checklist of `mode` takes: what a forecast of its cost adds to the request."""
    return tuple(fixed_text("coder_system", name) for name in AGENT_CALLS[mode])


async def build_checklist(backend: Backend, query_messages: Sequence[Message],
                          params: ChatParams, *, mode: Mode = "three_agent", n_min: int = 4,
                          n_max: int = 8, step: int = 2, retries: int = 2,
                          packs: PackLibrary | None = None) -> BuiltChecklist:
    """A checklist for the last user turn of `query_messages`, in that turn's language.

    Answers that stay invalid after `retries` retries give the generic pack checklist with
    `degraded=True`; bad model output never raises. `params` are used for every agent call
    without n, tools, response_format, stop and logprobs.
    """
    if mode not in ("three_agent", "fused"):
        raise InvalidRequest(f"unknown checklist mode {mode!r}", param="mode")
    if not 1 <= n_min <= n_max <= ANY.max_dimensions or step < 1 or retries < 0:
        raise InvalidRequest(f"bad checklist bounds n_min={n_min} n_max={n_max} step={step} "
                             f"retries={retries}")
    target = target_text(query_messages)
    # The pre-pass reads the standing instructions and the target turn (earlier user turns
    # asked for earlier answers); an agent's quote may come from any turn it was shown.
    standing = [message_text(m) for m in query_messages
                if m.get("role") in ("system", "developer")]
    request = "\n".join(message_text(m) for m in query_messages
                        if m.get("role") in ("system", "developer", "user"))
    # ~10 microseconds a character: a long request is read off the event loop
    found = await asyncio.to_thread(prepass, "\n".join([*standing, target]))
    packs = packs or PackLibrary()
    language = detect_language(target)
    spare = packs.generic(language).dimensions
    task = _Task(render_conversation(query_messages), language, n_min, n_max,
                 step, request=request, found=found, spare=spare)
    run = _fused if mode == "fused" else _three_agent
    checklist, usage, calls, error = await run(backend, for_schema(params), task, retries)
    if checklist is not None:
        return BuiltChecklist(checklist, usage, calls, degraded=False)
    log.warning("checklist generation degraded to the generic pack: %s", error)
    fallback = packs.generic(task.language)
    # the pre-pass needs no model: its checks hold even when the agents failed
    fallback = fallback.model_copy(update={"checks": task.found})
    return BuiltChecklist(fallback, usage, calls, degraded=True, error=error)

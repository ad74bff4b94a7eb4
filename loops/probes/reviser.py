"""Whether a writer can revise: a probe of drafts that miss one requirement in a known way.

Under `evaluation: auto` a request whose requirements code can verify is scored in code, and a
draft that misses one is sent back to the writer for a revision. A writer that cannot carry a
measured request out ("It has 25 words; it must have at least 60") only adds a revision's
tokens to the answer: on SmolLM2-135M the README's request cost 3.4 times a direct answer
for a revision that moved nothing. So `auto` asks for revisions only once the writer has
fixed such misses: each of `PROBE_CASES` is a request the pre-pass reads checks from, with a
draft that fails exactly one of them and that no exact change in code meets (a length, a
count of sentences or bullets, a keyword, a forbidden word, a postscript). The writer is
asked for each revision exactly as one round of the loop asks it under `checks` (`revise`),
and the revision fixes the case when it meets every check (the failed one, and those the
draft met), does not loop, stays on the request's topic and repeats no sentence to meet a
count. It passes when it fixes at least `PASS_SHARE` of the cases. Like the judge's
probe (`loops.judges.calibration`) it runs once per writer model, its result is kept in a file
beside the database, and its line goes into `/ready`, the start-up log and the trace of every
loop that did without a revision.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generation.base import Backend
from generation.errors import RedraftError
from generation.types import ChatParams, Completion, Message, Usage
from loops.answer import looping, padded, unlooped
from loops.judges.requirements import stated_checks, summary_of
from loops.probes.status import ProbeStatus, verdict
from loops.reflection import with_checks
from loops.rewrite import answer_anew, revision_request, rewrite, varied
from loops.trace import Reflection
from rubrics.checks import Check, conform, run_checks
from rubrics.topic import off_topic

log = logging.getLogger(__name__)

PROBE_VERSION = 1
# Measured at start-up (`/ready`, docs/api.md "The reviser's probe"): SmolLM2-135M-Instruct
# fixes 1 of the 10 cases (on the retry sampled at 0.8), Qwen2.5-Coder-1.5B-Instruct
# (Q4_K_M, whose revisions raise the prompt pass rate of `bench.checks_pass`) 4. The midpoint,
# 2.5, rounds up to 3 of 10: SmolLM2 two fixes short of it, the 1.5B one over.
PASS_SHARE = 0.3
# cases revised at once: the local engine decodes up to 4 sequences in one batched step, so
# the probe costs about what its longest revisions do; a one-slot upstream queues them
CONCURRENCY = 4
# Every case's revision is short (the longest asks for 60 words): a writer that runs on past
# this is not revising.
MAX_TOKENS = 320


@dataclass(frozen=True, slots=True)
class ProbeCase:
    """A request, a draft that fails exactly one of the checks the pre-pass reads in it, and
    a revision that meets them all (proof that the case can be fixed)."""

    request: str
    draft: str
    fixed: str

    @property
    def query(self) -> list[Message]:
        return [{"role": "user", "content": self.request}]

    @property
    def checks(self) -> tuple[Check, ...]:
        return stated_checks(self.query)


PROBE_CASES: tuple[ProbeCase, ...] = (
    ProbeCase(
        "Write a short note inviting the team to a picnic on Saturday. Use at least 60 words.",
        "Hi team, we are having a picnic on Saturday at noon in Riverside Park. Bring a "
        "blanket and a dish to share. See you there!",
        "Hi team, we are having a picnic on Saturday at noon in Riverside Park, by the big oak "
        "near the pond. Bring a blanket, a dish to share and anyone you would like to come "
        "along; drinks and sandwiches are on us. If it rains we will move to the café next "
        "door. Please reply by Thursday so we know how much food to bring. See you there!"),
    ProbeCase(
        'Describe a lighthouse at night in at most 40 words. Include the word "beacon".',
        "The old lighthouse stands alone on the black cliff above the restless sea. Every few "
        "seconds its beacon sweeps across the water, a long white arm of light that touches "
        "the waves, the rocks and the sleeping fishing boats in the harbour. Gulls rest on "
        "the rail, the wind hums in the glass, and the keeper drinks his tea while the ships "
        "pass safely by.",
        "The lighthouse stands alone on the black cliff. Every few seconds its beacon sweeps "
        "the restless sea, touching the waves, the rocks and the sleeping boats, while the "
        "keeper drinks his tea and the ships pass safely by."),
    ProbeCase(
        'Write a short ad for a bakery. Include the word "sourdough".',
        "Fresh bread every morning at Corner Bakery! Our crusty loaves, buttery croissants and "
        "cinnamon rolls come out of the oven at seven. Stop by on your way to work and taste "
        "the difference.",
        "Fresh bread every morning at Corner Bakery! Our crusty sourdough, buttery croissants "
        "and cinnamon rolls come out of the oven at seven. Stop by on your way to work and "
        "taste the difference."),
    ProbeCase(
        'Describe autumn in a city park without using the word "leaves".',
        "In autumn the city park turns gold and red. Leaves drift down onto the paths, "
        "children kick through the piles, and the air smells of rain and roasted chestnuts. "
        "By five o'clock the lamps come on and the benches are empty.",
        "In autumn the city park turns gold and red. Foliage drifts down onto the paths, "
        "children kick through the piles, and the air smells of rain and roasted chestnuts. "
        "By five o'clock the lamps come on and the benches are empty."),
    ProbeCase(
        "Explain in exactly 3 sentences why people keep cats as pets.",
        "Cats are affectionate without being demanding. They keep themselves clean. They need "
        "no walks, so they suit people with long working days. Their purring is calming. "
        "Many owners also value their help with mice.",
        "Cats are affectionate without being demanding, and they keep themselves clean. They "
        "need no walks, so they suit people with long working days. Their purring is calming, "
        "and many owners also value their help with mice."),
    ProbeCase(
        "Give exactly 4 bullet points of tips for a first camping trip.",
        "- Practise pitching the tent at home before your first camping trip.\n"
        "- Pack layers: nights outdoors are colder than you expect.\n"
        "- Bring a headlamp and spare batteries.",
        "- Practise pitching the tent at home before your first camping trip.\n"
        "- Pack layers: nights outdoors are colder than you expect.\n"
        "- Bring a headlamp and spare batteries.\n"
        "- Plan simple meals that need one pot and little washing up."),
    ProbeCase(
        "Write a thank-you note to a neighbour who watered my plants. Use the word \"garden\" "
        "at least 3 times.",
        "Dear Maria, thank you so much for watering my plants while I was away. The tomatoes "
        "are thriving and the roses came through the heatwave, which is all your doing. "
        "Please come over for dinner next week so I can thank you properly. The garden has "
        "never looked better.",
        "Dear Maria, thank you so much for watering my garden while I was away. The tomatoes "
        "are thriving and the roses came through the heatwave, which is all your doing. "
        "Please come over for dinner in the garden next week so I can thank you properly. "
        "The garden has never looked better."),
    ProbeCase(
        "Write a short letter to a friend about my new job. End it with a postscript "
        "starting with P.S.",
        "Dear Sam, I have news: I start at the city library on Monday as an assistant "
        "librarian. The hours are good, the team is friendly, and I can walk to work. I will "
        "tell you everything over coffee soon. Love, Alex",
        "Dear Sam, I have news: I start at the city library on Monday as an assistant "
        "librarian. The hours are good, the team is friendly, and I can walk to work. I will "
        "tell you everything over coffee soon. Love, Alex\n\nP.S. I can get you a library "
        "card with no waiting list."),
    ProbeCase(
        "Describe your favourite breakfast in at least 50 words. Do not use the words "
        "\"delicious\" or \"tasty\".",
        "My favourite breakfast is a bowl of warm porridge made with oats and milk, topped "
        "with sliced banana, a spoon of honey and a handful of walnuts. It is delicious on a "
        "cold morning, keeps me full until lunch, and takes five minutes to make while the "
        "kettle boils for a pot of strong black tea.",
        "My favourite breakfast is a bowl of warm porridge made with oats and milk, topped "
        "with sliced banana, a spoon of honey and a handful of walnuts. It is comforting on a "
        "cold morning, keeps me full until lunch, and takes five minutes to make while the "
        "kettle boils for a pot of strong black tea."),
    ProbeCase(
        "Write a product description for a desk lamp in fewer than 50 words.",
        "Meet the Lumen desk lamp: a slim aluminium arm that bends wherever you need light, a "
        "warm LED that never flickers, and a touch dimmer with five steps from reading glow "
        "to full brightness. Its weighted base keeps it steady on any desk, a USB port charges "
        "your phone, and it uses less power than a night light.",
        "Meet the Lumen desk lamp: a slim aluminium arm that bends wherever you need light, a "
        "warm LED that never flickers and a five-step touch dimmer. Its weighted base keeps it "
        "steady, and a USB port charges your phone."),
)


def fixes(case: ProbeCase, revision: str) -> bool:
    """Does `revision` fix `case`: every check met, no loop, on the request's topic, and no
    sentence said twice that the draft said once (a count met by repetition)?"""
    checks = case.checks
    return (all(o.passed for o in run_checks(revision, checks)) and not looping(revision)
            and not off_topic(revision, case.request, checks)
            and not padded(revision, case.draft))


async def revise(writer: Backend, case: ProbeCase, params: ChatParams,
                 ) -> tuple[str, Usage]:
    """The writer's revision of the case's draft, asked as one round of the loop asks it
    under `checks` (`ReflectionLoop._child`): the measured failed check first and the checks
    met to keep; a revision that gives the draft back asked once more, as a new answer told
    the missed check, sampled apart (`varied`); each answer with a looping tail cut and the
    exact changes made. Its tokens, both asks together."""
    checks = case.checks
    outcomes = run_checks(case.draft, checks)
    # what `loops.judges.requirements.ChecksAssessor` reflects, with the failed check as an
    # item (`with_checks`), as the controller's round builds it
    critique = with_checks(Reflection((), summary_of(outcomes)), outcomes)
    text, completion = await rewrite(writer, case.query, case.draft,
                                     revision_request(critique, [], outcomes), params)
    text, usage = _kept(text, completion, checks), completion.usage
    if text.strip() == case.draft.strip():
        text, completion = await answer_anew(writer, case.query, outcomes, varied(params, 1))
        text, usage = _kept(text, completion, checks), usage + completion.usage
    return text, usage


def _kept(text: str, completion: Completion, checks: Sequence[Check]) -> str:
    """What the loop keeps of a reviser's answer: a looping tail cut, the exact changes made."""
    text, _ = unlooped(text, completion.finish_reason)
    return conform(text, checks)[0]


@dataclass(frozen=True, slots=True)
class ReviserProbe:
    """What the probe found for one writer model."""

    model: str
    fixed: int
    cases: int
    tokens: int
    seconds: float
    version: int = PROBE_VERSION
    error: str = ""

    @property
    def usable(self) -> bool:
        return not self.error and self.fixed >= PASS_SHARE * self.cases

    def figures(self) -> dict[str, int]:
        return {"fixed": self.fixed, "cases": self.cases}

    def line(self) -> str:
        return verdict("reviser", self.model, self.error, self.usable,
                       f"fixed {self.fixed} of {self.cases} known misses", PASS_SHARE)


async def probe_reviser(writer: Backend, params: ChatParams, model: str,
                        concurrency: int = CONCURRENCY) -> ReviserProbe:
    """Ask `writer` for a revision of every probe case once, greedily, `concurrency` cases in
    flight; how many it fixed (each case's revision and verdict are logged at DEBUG)."""
    started = time.monotonic()
    asked = params.with_(temperature=0.0, max_tokens=MAX_TOKENS, n=1)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: ProbeCase) -> tuple[str, Usage]:
        async with gate:
            return await revise(writer, case, asked)

    answers = await asyncio.gather(*(one(case) for case in PROBE_CASES), return_exceptions=True)
    fixed = tokens = 0
    for case, answer in zip(PROBE_CASES, answers, strict=True):
        if isinstance(answer, RedraftError):
            return ReviserProbe(model, fixed, len(PROBE_CASES), tokens,
                                time.monotonic() - started, error=answer.message)
        if isinstance(answer, BaseException):
            raise answer
        text, usage = answer
        tokens += usage.total_tokens
        fixed += (done := fixes(case, text))
        log.debug("reviser probe %s %s: %r -> %r", model, "fixed" if done else "missed",
                  case.request, text)
    return ReviserProbe(model, fixed, len(PROBE_CASES), tokens, time.monotonic() - started)


class ReviserStatus(ProbeStatus[ReviserProbe]):
    """The writer's probe result as a reviser, once known: kept in `path` so that each writer
    model is probed once; `None` until the probe has run."""

    def __init__(self, writer: Backend, params: ChatParams, model: str,
                 path: Path | None = None) -> None:
        super().__init__("reviser", model, ReviserProbe,
                         lambda: probe_reviser(writer, params, model), PROBE_VERSION, path)

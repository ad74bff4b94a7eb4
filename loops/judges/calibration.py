"""Whether a judge can judge: a probe of pairs whose better text is known by construction.

A judge that cannot tell a text from the same text cut short, looping, or answering another
request only adds noise and tokens to a loop (SmolLM2-135M scores every text alike). So under
`evaluation: auto` the judge is asked only once it has ordered such pairs: each of
`PROBE_ANSWERS` (a request and a good answer) against its degraded twins, one call per pair
("which answers the request better, A or B?"), the better text shown first in half of them so
that a judge always answering "A" orders half. It passes when it orders at least `PASS_SHARE`
of the pairs. The probe runs once per judge model (its result is kept in a file beside the
database) and its line goes into `/ready`, the start-up log and the trace of every loop that
needed a judge.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from generation.base import Backend
from generation.errors import RedraftError
from generation.structured import AnswerModel, ask, for_schema
from generation.types import ChatParams
from loops.probes.status import ProbeStatus, verdict
from loops.prompting import template

PROBE_VERSION = 1
PASS_SHARE = 0.8


class Verdict(AnswerModel):
    better: Literal["A", "B"]

# (request, a good answer): short, so the probe costs a few thousand tokens
PROBE_ANSWERS: tuple[tuple[str, str], ...] = (
    ("Write a short note inviting the team to a picnic on Saturday.",
     "Hi all, we are having a team picnic this Saturday at noon in Riverside Park, by the big "
     "oak near the pond. Bring a blanket and something to share; drinks and sandwiches are on "
     "us. Partners and kids are welcome. If it rains we will move to the café next door. "
     "Reply by Thursday so we know how much food to bring. See you there!"),
    ("Explain in a paragraph why the sky is blue.",
     "Sunlight holds every colour. When it passes through the air, the small gas molecules "
     "scatter short wavelengths far more than long ones, so blue light is thrown across the "
     "whole sky while red and yellow mostly travel straight on. Looking anywhere away from the "
     "sun, we see that scattered blue. At sunset the light crosses much more air, the blue is "
     "scattered away before it reaches us, and the sky turns orange and red."),
    ("Give three tips for keeping houseplants alive.",
     "1. Water by touch, not by calendar: push a finger into the soil and water only when the "
     "top few centimetres are dry.\n2. Match the plant to the light: ferns and pothos cope "
     "with a dim corner, while cacti and herbs need a bright window.\n3. Use pots with "
     "drainage holes so roots never sit in water, and empty the saucer after watering."),
    ("Write a two-sentence product description for a steel water bottle.",
     "This double-walled steel bottle keeps water cold for a full day and coffee hot until "
     "the afternoon. It is light enough for a backpack, tough enough for the trail, and its "
     "leak-proof lid means it can ride in your bag next to your laptop."),
    ("Write a short thank-you message to a neighbour who watered my garden.",
     "Dear Maria, thank you so much for watering the garden while we were away. The tomatoes "
     "are thriving and the roses came through the heatwave without a single brown leaf, which "
     "is entirely your doing. Please come over for dinner next week so we can thank you "
     "properly, and help yourself to as many tomatoes as you like."),
)


def _cut(answer: str) -> str:
    words = answer.split()
    return " ".join(words[:max(4, len(words) // 5)])


def _looping(answer: str) -> str:
    first = answer.split(". ")[0].rstrip(".") + "."
    return " ".join([first] * 8)


def _unrelated(index: int) -> Callable[[str], str]:
    def swap(answer: str) -> str:
        return PROBE_ANSWERS[(index + 2) % len(PROBE_ANSWERS)][1]
    return swap


def probe_pairs() -> list[tuple[str, str, str, str]]:
    """(request, better, worse, how it was made worse), for every answer and degradation."""
    pairs = []
    for index, (request, answer) in enumerate(PROBE_ANSWERS):
        for name, worse in (("cut short", _cut), ("looping", _looping),
                            ("off the request", _unrelated(index))):
            pairs.append((request, answer, worse(answer), name))
    return pairs


@dataclass(frozen=True, slots=True)
class Calibration:
    """What the probe found for one judge model."""

    model: str
    ordered: int
    pairs: int
    tokens: int
    seconds: float
    version: int = PROBE_VERSION
    error: str = ""

    @property
    def usable(self) -> bool:
        return not self.error and self.ordered >= PASS_SHARE * self.pairs

    def figures(self) -> dict[str, int]:
        return {"ordered": self.ordered, "pairs": self.pairs}

    def line(self) -> str:
        return verdict("judge", self.model, self.error, self.usable,
                       f"ordered {self.ordered} of {self.pairs} known pairs", PASS_SHARE)


async def calibrate(judge: Backend, params: ChatParams, model: str) -> Calibration:
    """Ask `judge` every probe pair once; what it got right."""
    started, ordered, tokens = time.monotonic(), 0, 0
    pairs = probe_pairs()
    try:
        for i, (request, better, worse, _) in enumerate(pairs):
            first, second, right = (better, worse, "A") if i % 2 == 0 else (worse, better, "B")
            messages = [{"role": "user", "content": template("judge_probe").substitute(
                request=request, a=first, b=second)}]
            verdict = await ask(judge, messages, for_schema(params).with_(max_tokens=16),
                                Verdict, lambda v: v.better, retries=1)
            tokens += verdict.usage.total_tokens
            ordered += verdict.value == right
    except RedraftError as exc:
        return Calibration(model, ordered, len(pairs), tokens, time.monotonic() - started,
                           error=exc.message)
    return Calibration(model, ordered, len(pairs), tokens, time.monotonic() - started)


class JudgeStatus(ProbeStatus[Calibration]):
    """The judge's probe result, once known: kept in `path` so that each judge model is
    probed once; `None` until the probe has run."""

    def __init__(self, judge: Backend, params: ChatParams, model: str,
                 path: Path | None = None) -> None:
        super().__init__("judge", model, Calibration, lambda: calibrate(judge, params, model),
                         PROBE_VERSION, path)

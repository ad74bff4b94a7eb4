"""The length band of the checks reward: a completion far shorter or longer than the prompt's
reference answer earns a share of its checks' reward.

Many checks are easier to meet by writing less: a short text has fewer commas, fewer
paragraphs to count and fewer sentences to get wrong. Trained on the pass rate alone, a policy
learns to halve its answers (SmolLM2-135M, GSPO at lr 3e-5: 74 → 36 words in 40 steps while no
commas rose). So a prompt row may carry `reference_words`, the length of an answer to it that
sets the scale (the base model's own draft, as recorded), and a completion outside
[floor x reference, ceiling x reference] words has its reward multiplied by how far inside
it would have to move: words / (floor x reference) below the band, (ceiling x reference) /
words above it. A prompt whose checks state a length (words, characters, sentences) has no
band: its checks set the length. A row without a reference, or a floor of 0 and a ceiling of
0, leaves the reward as it is.

An answer cut at its token limit is not a finished answer, and a policy paid for what the
first T tokens of a ramble pass learns to write to the limit: GSPO's samples reached it from
about step 45, and the greedy answers that loop rose with them. So a completion whose tokens
reach the limit earns `CutGuard.factor` of its reward: half by default. Nothing at all
(SmolLM2-135M, lr 3e-5) halved the greedy answers' length in 40 steps, the way a reward
without the length band did; 1 turns the guard off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rubrics.checks import Check
from rubrics.checks.kinds import count_words

REFERENCE_WORDS = "reference_words"
# kinds whose checks fix the answer's length themselves
LENGTH_KINDS = frozenset({"word_count", "char_count", "sentence_count"})


@dataclass(frozen=True, slots=True)
class LengthBand:
    floor: float = 0.7      # 0: no lower bound
    ceiling: float = 1.3    # 0: no upper bound

    def scale(self, text: str, reference: Any, checks: Sequence[Check]) -> float:
        """The factor in (0, 1] on the reward of `text`; 1 inside the band or without one."""
        if not isinstance(reference, int | float) or reference <= 0:
            return 1.0
        if any(c.kind in LENGTH_KINDS for c in checks):
            return 1.0
        words = count_words(text)
        low, high = self.floor * reference, self.ceiling * reference
        if self.floor and words < low:
            return max(words, 1) / low
        if self.ceiling and words > high:
            return high / words
        return 1.0


@dataclass(frozen=True, slots=True)
class CutGuard:
    limit: int | None = None   # the completion token limit; None: no guard
    factor: float = 0.5        # the share of its reward a cut completion keeps

    def scale(self, ids: Any) -> float:
        """The factor on the reward of a completion of token ids `ids`; 1 unless it is cut."""
        if self.limit is None or ids is None or len(ids) < self.limit:
            return 1.0
        return self.factor

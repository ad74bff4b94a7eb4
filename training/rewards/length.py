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

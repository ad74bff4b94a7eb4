"""A generation stuck repeating itself is cut where the repetition starts.

A small model decoding greedily falls into exact cycles: its title line forty times, the same
sentence until the token limit. Such a tail is periodic: for some period p, every token equals
the one p tokens before it. Over a run of the last tokens that is so, the first period is the
text's own and the rest repeats it; once the repeated run covers two whole periods (the unit
three times in a row) and the unit with its repeats spans MIN_SPAN tokens or more, the tail is
a loop, and what is kept ends after the first period.

A refrain or a chorus sung twice, a heading repeated between sections, a list whose items share
their label: none is three identical units in a row spanning MIN_SPAN tokens, so none is cut.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

MIN_SPAN = 48      # tokens the unit and its repeats cover before the tail counts as a loop
MAX_PERIOD = 256   # the longest repeated unit looked for, in tokens
MIN_COPIES = 3     # the unit this many times in a row


class RepeatGuard:
    """Fed one token at a time; says when the tail loops and how many tokens repeat."""

    def __init__(self, min_span: int = MIN_SPAN, max_period: int = MAX_PERIOD) -> None:
        self.min_span = min_span
        self.max_period = max_period
        self.tokens: list[Hashable] = []
        # runs[p - 1]: how many of the last tokens each equal the token p before them
        self.runs = [0] * max_period

    def feed(self, token: Hashable) -> int | None:
        """The number of trailing tokens that repeat the unit before them, once the tail
        loops; None while it does not."""
        tokens, runs = self.tokens, self.runs
        tokens.append(token)
        n = len(tokens)
        found = None
        for p in range(1, min(self.max_period, n - 1) + 1):
            if tokens[n - 1 - p] == token:
                run = runs[p - 1] + 1
                runs[p - 1] = run
                if found is None and _loops(run, p, self.min_span):
                    found = run
            else:
                runs[p - 1] = 0
        return found


def _loops(run: int, period: int, min_span: int) -> bool:
    return run >= (MIN_COPIES - 1) * period and run + period >= min_span


def repeated_tail(tokens: Sequence[Hashable], min_span: int = MIN_SPAN,
                  max_period: int = MAX_PERIOD) -> int:
    """How many trailing tokens of a finished sequence repeat the unit before them (0 when
    its tail does not loop); the longest such run over every period."""
    return _longest_run(tokens, min_span, max_period)[0]


def _longest_run(tokens: Sequence[Hashable], min_span: int = MIN_SPAN,
                 max_period: int = MAX_PERIOD) -> tuple[int, int]:
    """(run, period) of the longest looping tail; (0, 0) when there is none."""
    n = len(tokens)
    best = (0, 0)
    for p in range(1, min(max_period, n - 1) + 1):
        run = 0
        while run < n - p and tokens[n - 1 - run] == tokens[n - 1 - run - p]:
            run += 1
        if _loops(run, p, min_span) and run > best[0]:
            best = (run, p)
    return best


_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|\w+|[^\w\s]")


_ENDS = frozenset(".!?。！？")


def cut_repetition(text: str) -> tuple[str, bool]:
    """`text` with a looping tail cut after its first unit (trailing space dropped), and
    whether it was cut. Tokens here are words, CJK characters and punctuation marks; the cut
    moves forward within the unit to the first end of a sentence or a line, so the unit kept
    is whole ("It is a task." rather than "task. It")."""
    spans = [m.span() for m in _WORD.finditer(text)]
    words = [text[a:b].lower() for a, b in spans]
    run, period = _longest_run(words)
    if not run:
        return text, False
    keep = len(words) - run
    for j in range(keep, min(keep + period, len(words))):
        if words[j - 1] in _ENDS or "\n" in text[spans[j - 1][1]:spans[j][0]]:
            keep = j
            break
    return text[:spans[keep - 1][1]].rstrip(), True

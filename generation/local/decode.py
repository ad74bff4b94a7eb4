"""One sequence's decoding state in the local backend: sampling (per-request `torch.Generator`,
so seeded requests stay reproducible when several run at once; `torch.manual_seed` is global),
penalties, the JSON constraint, exact token counts, incremental text with stop strings held
back until they can no longer match, and the repetition guard (`generation.local.repeats`).

The model's forward passes are not here: `generation.local.engine` runs them, for every
sequence in flight at once, and hands each `Sequence` its row of logits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from generation.local.repeats import RepeatGuard
from generation.types import REPETITION


class Constraint(Protocol):
    """Restricts which tokens may come next (e.g. to JSON matching a schema)."""

    reserve: int  # tokens left at which closing mode begins (0: never)

    def mask(self, logits: Any, closing: bool = False) -> None:
        """Set the logits (shape [vocab]) of disallowed tokens to -inf, in place; `closing`:
        few tokens are left, so favour the tokens that finish the text soonest."""

    def consume(self, token: int) -> None: ...

    @property
    def done(self) -> bool:
        """True when nothing but end-of-sequence may follow."""
        ...


@dataclass(frozen=True, slots=True)
class DecodeOptions:
    max_tokens: int
    temperature: float | None = None  # None or 0: greedy
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    cut_repeats: bool = True  # end a decode whose tail repeats itself (`RepeatGuard`)


@dataclass(frozen=True, slots=True)
class Finished:
    """The last event of a decode: why it ended and how many tokens it generated."""

    reason: str  # "stop" | "length" | "cancelled" | "repetition"
    completion_tokens: int
    # "repetition": the tail repeated itself; the text up to this many characters is the
    # answer and the rest repeats it (a caller holding the whole text drops the rest)
    keep_chars: int | None = None


class Sequence:
    """What one request decodes, token by token: `take` a row of logits, get the token to
    feed next (None once finished). Events (text deltas, then one `Finished`) go to `emit`."""

    def __init__(self, tokenizer: Any, vocab_width: int, eos_ids: frozenset[int],
                 prompt_ids: list[int], options: DecodeOptions, emit: Callable[[Any], None],
                 *, constraint: Constraint | None = None,
                 cancelled: Callable[[], bool] = lambda: False) -> None:
        import torch

        self.torch = torch
        self.prompt_ids = prompt_ids
        self.options = options
        self.emit = emit
        self.constraint = constraint
        self.cancelled = cancelled
        self.eos_ids = eos_ids
        self.generator = torch.Generator()
        if options.seed is not None:
            self.generator.manual_seed(options.seed)
        else:
            self.generator.seed()
        self.counts = torch.zeros(vocab_width) if _penalised(options) else None
        self.text = _Detokenizer(tokenizer)
        self.stops = _StopScanner(options.stop)
        # A constrained answer must finish its JSON: its own grammar ends it.
        self.repeats = RepeatGuard() if options.cut_repeats and constraint is None else None
        self.produced = 0
        self.emitted = 0       # characters emitted so far
        self.marks: list[int] = []  # characters emitted once each token was in
        self.done = False

    def take(self, logits: Any) -> int | None:
        """The next token given this step's logits [vocab]; None when the sequence ended (its
        `Finished` already emitted)."""
        if self.done:
            return None
        if self.cancelled():
            return self._finish("cancelled")
        options, torch = self.options, self.torch
        logits = logits.float()
        if self.counts is not None:
            logits = logits - options.frequency_penalty * self.counts
            logits = logits - options.presence_penalty * (self.counts > 0).float()
        if self.constraint is not None:
            left = options.max_tokens - self.produced
            self.constraint.mask(logits, closing=left <= self.constraint.reserve)
        token = _choose(torch, logits, options, self.generator)
        self.produced += 1
        if self.counts is not None:
            self.counts[token] += 1
        if token in self.eos_ids:
            return self._finish("stop")
        if self.constraint is not None:
            self.constraint.consume(token)
        visible, hit = self.stops.feed(self.text.push(token))
        if visible:
            self.emit(visible)
            self.emitted += len(visible)
        self.marks.append(self.emitted)
        if hit:
            return self._finish("stop", flushed=True)
        if self.repeats is not None and (repeated := self.repeats.feed(token)) is not None:
            kept = self.produced - repeated  # the tokens before the repeats
            self.emit(Finished(REPETITION, self.produced,
                               self.marks[kept - 1] if kept > 0 else 0))
            self.done = True
            return None
        if self.constraint is not None and self.constraint.done:
            return self._finish("stop")
        if self.produced >= options.max_tokens:
            return self._finish("length")
        return token

    def _finish(self, reason: str, flushed: bool = False) -> None:
        if not flushed and reason != "cancelled":
            visible, hit = self.stops.feed(self.text.flush())
            visible += "" if hit else self.stops.flush()
            if visible:
                self.emit(visible)
            reason = "stop" if hit else reason
        self.emit(Finished(reason, self.produced))
        self.done = True
        return None


def _penalised(options: DecodeOptions) -> bool:
    return bool(options.presence_penalty or options.frequency_penalty)


def _choose(torch: Any, logits: Any, options: DecodeOptions, generator: Any) -> int:
    if not options.temperature:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / options.temperature, dim=-1)
    if options.top_p is not None and options.top_p < 1.0:
        sorted_probs, order = probs.sort(descending=True)
        # Keep the smallest head whose mass reaches top_p (always at least one token).
        outside = sorted_probs.cumsum(-1) - sorted_probs >= options.top_p
        sorted_probs[outside] = 0.0
        pick = torch.multinomial(sorted_probs, 1, generator=generator)
        return int(order[pick])
    return int(torch.multinomial(probs, 1, generator=generator))


class _Detokenizer:
    """Incremental decoding that never splits a multi-byte character or drops a leading space.

    Decodes a short window [prefix, now) and emits what it adds over [prefix, read): windowed
    so each step costs O(1) tokens, with a prefix so tokenizers see word boundaries.
    """

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._ids: list[int] = []
        self._prefix = 0
        self._read = 0

    def _text(self, ids: list[int]) -> str:
        return self._tokenizer.decode(ids, skip_special_tokens=True)

    def push(self, token: int) -> str:
        self._ids.append(token)
        before = self._text(self._ids[self._prefix:self._read])
        after = self._text(self._ids[self._prefix:])
        if len(after) > len(before) and not after.endswith("\ufffd"):
            self._prefix, self._read = self._read, len(self._ids)
            return after[len(before):]
        return ""

    def flush(self) -> str:
        before = self._text(self._ids[self._prefix:self._read])
        after = self._text(self._ids[self._prefix:])
        self._prefix = self._read = len(self._ids)
        return after[len(before):] if after.startswith(before) else ""


class _StopScanner:
    """Cuts text at the first stop string, holding back any tail that may begin one."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = tuple(s for s in stops if s)
        self._pending = ""

    def feed(self, text: str) -> tuple[str, bool]:
        """(text safe to show, whether a stop string was found)."""
        if not self._stops:
            return text, False
        buffer = self._pending + text
        hits = [i for i in (buffer.find(s) for s in self._stops) if i >= 0]
        if hits:
            self._pending = ""
            return buffer[:min(hits)], True
        hold = max((_overlap(buffer, s) for s in self._stops), default=0)
        self._pending = buffer[len(buffer) - hold:] if hold else ""
        return buffer[:len(buffer) - hold], False

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        return pending


def _overlap(text: str, stop: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `stop`."""
    for size in range(min(len(text), len(stop) - 1), 0, -1):
        if stop.startswith(text[-size:]):
            return size
    return 0

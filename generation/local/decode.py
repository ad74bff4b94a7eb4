"""The token-by-token decoding loop of the local backend (blocking: run it in a worker thread).

A hand-written loop rather than `model.generate`: it gives a per-request `torch.Generator`
(seeded requests stay reproducible when several run at once; `torch.manual_seed` is global),
a cancel check before every forward pass, exact token counts, and incremental text with stop
strings held back until they can no longer match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from generation.local.model import LoadedModel


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


@dataclass(frozen=True, slots=True)
class Finished:
    """The last event of a decode: why it ended and how many tokens it generated."""

    reason: str  # "stop" | "length" | "cancelled"
    completion_tokens: int


def decode(
    loaded: LoadedModel,
    prompt_ids: list[int],
    options: DecodeOptions,
    *,
    constraint: Constraint | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[str | Finished]:
    """Yield text deltas as tokens are produced, then one `Finished`."""
    import torch

    device = loaded.device
    generator = torch.Generator(device=device)
    if options.seed is not None:
        generator.manual_seed(options.seed)
    else:
        generator.seed()
    counts = torch.zeros(loaded.vocab_width, device=device) if _penalised(options) else None
    text = _Detokenizer(loaded.tokenizer)
    stops = _StopScanner(options.stop)
    inputs = torch.tensor([prompt_ids], device=device)
    past: Any = None
    produced = 0
    reason = "length"
    with torch.inference_mode():
        while produced < options.max_tokens:
            if cancelled():
                yield Finished("cancelled", produced)
                return
            out = loaded.model(input_ids=inputs, past_key_values=past, use_cache=True,
                               **loaded.forward_kwargs)
            past = out.past_key_values
            logits = out.logits[0, -1, :].float()  # [vocab]
            if counts is not None:
                logits -= options.frequency_penalty * counts
                logits -= options.presence_penalty * (counts > 0).float()
            if constraint is not None:
                left = options.max_tokens - produced
                constraint.mask(logits, closing=left <= constraint.reserve)
            token = _choose(torch, logits, options, generator)
            produced += 1
            if counts is not None:
                counts[token] += 1
            if token in loaded.eos_ids:
                reason = "stop"
                break
            if constraint is not None:
                constraint.consume(token)
            visible, hit = stops.feed(text.push(token))
            if visible:
                yield visible
            if hit:
                yield Finished("stop", produced)
                return
            if constraint is not None and constraint.done:
                reason = "stop"
                break
            inputs = torch.tensor([[token]], device=device)
    visible, hit = stops.feed(text.flush())
    visible += "" if hit else stops.flush()
    if visible:
        yield visible
    yield Finished("stop" if hit else reason, produced)


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

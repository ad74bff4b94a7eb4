"""JSON documents closed from an answer cut short: what a model wrote before its token budget ran
out (or before it lost the thread), kept up to its last complete element.

A small model under a grammar that does not cap array lengths may fill an array to its budget
and stop inside an element. Everything before that element is a well-formed answer of fewer
items; a retry would cost a whole call and often ends the same way. Each candidate ends where
an element of an array or an object has just closed, or after a complete element of an array,
and gets the brackets still open; the caller validates them, longest first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

_CLOSE = {"{": "}", "[": "]"}


def _cuts(text: str) -> list[tuple[int, str]]:
    """(end, closers) for each place the document may be cut: after a container that closed
    inside another, or before a comma in an array (its element before the comma complete)."""
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in _CLOSE:
            stack.append(ch)
        elif ch in "}]":
            if not stack or _CLOSE[stack.pop()] != ch:
                break  # not JSON from here on
            if not stack:
                return []  # the document closed: nothing was cut short
            cuts.append((i + 1, "".join(_CLOSE[c] for c in reversed(stack))))
        elif ch == "," and stack and stack[-1] == "[":
            cuts.append((i, "".join(_CLOSE[c] for c in reversed(stack))))
    return cuts


def closed_prefixes(text: str, limit: int = 8) -> Iterator[Any]:
    """Up to `limit` parsed documents made from `text`'s opening object cut short, longest
    first (nothing when it holds no object that was left open)."""
    start = text.find("{")
    if start < 0:
        return
    body = text[start:]
    tried = 0
    for end, closers in reversed(_cuts(body)):
        if tried >= limit:
            return
        tried += 1
        try:
            yield json.loads(body[:end] + closers, strict=False)
        except ValueError:
            continue

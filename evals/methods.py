"""The rows of Writer-R1's Tables 3-6 as `reflection` options, and the sweeps over T and tau."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evals.queries import EvalQuery, UsageError

METHODS = ("direct", "holistic", "mrpo", "mrpo-human")
LABELS = {"direct": "Direct answering", "holistic": "LLM-as-a-Judge (holistic)",
          "mrpo": "MRPO (generated checklist)", "mrpo-human": "MRPO (human-curated criteria)"}


@dataclass(frozen=True, slots=True)
class Variant:
    """One method at one (max_rounds, threshold) point; `direct` has neither."""

    method: str
    max_rounds: int | None = None
    threshold: float | None = None

    @property
    def key(self) -> str:
        if self.method == "direct":
            return "direct"
        return f"{self.method} T={self.max_rounds} tau={self.threshold:g}"

    def reflection(self, query: EvalQuery) -> dict[str, Any]:
        """The request's `reflection` object for `query`."""
        if self.method == "direct":
            return {"enabled": False}
        out: dict[str, Any] = {"max_rounds": self.max_rounds, "threshold": self.threshold}
        if self.method == "holistic":
            out["evaluation"] = "holistic"
            return out
        out["evaluation"] = "joint"  # the paper's MRPO: the checklist judge, whatever the default
        if self.method == "mrpo-human":
            out["checklist"] = query.ref
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "method": self.method, "max_rounds": self.max_rounds,
                "threshold": self.threshold}


def parse_list(text: str, kind: type, flag: str) -> list[Any]:
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{flag} takes a comma-separated list of {kind.__name__}s, "
                         f"not {text!r}") from None
    if not values:
        raise UsageError(f"{flag} is empty")
    return values


def variants(methods: Sequence[str], max_rounds: Sequence[int],
             thresholds: Sequence[float]) -> list[Variant]:
    """Every method crossed with every (T, tau); `direct` once. Bounds as the server's."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise UsageError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    if any(not 0 <= r <= 10 for r in max_rounds):
        raise UsageError("--max-rounds values must be within 0..10")
    if any(not 0 <= t <= 1 for t in thresholds):
        raise UsageError("--threshold values must be within 0..1")
    out: list[Variant] = []
    for method in dict.fromkeys(methods):
        if method == "direct":
            out.append(Variant("direct"))
            continue
        out.extend(Variant(method, r, t) for r in dict.fromkeys(max_rounds)
                   for t in dict.fromkeys(thresholds))
    return out

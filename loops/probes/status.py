"""A probe's result for one model, once known: run in the background, kept in a JSON file
(one entry per model, with the probe's version) so that each model is probed once, and said
in one line for `/ready`, the start-up log and the trace of a loop that did without it."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

log = logging.getLogger(__name__)


class Probed(Protocol):
    """What a probe found: a frozen dataclass with these fields and a verdict."""

    model: str
    tokens: int
    seconds: float
    version: int
    error: str

    @property
    def usable(self) -> bool: ...

    def line(self) -> str: ...

    def figures(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=Probed)


def verdict(role: str, model: str, error: str, usable: bool, found: str,
            share: float) -> str:
    """The one line a probe's result is said in: `found` is what the model did ("fixed 4 of
    10 known misses"), `share` the part of the cases it needed."""
    if error:
        return f"{role} {model}: not used — its probe failed ({error})"
    return (f"{role} {model}: {'used' if usable else 'not used'} — it {found} "
            f"(needs {share:.0%})")


class ProbeStatus(Generic[R]):
    """What the probe of `role` (judge, reviser) found for `model`: `None` until it has run,
    or read from `path` when an earlier run of the same `version` kept it there. `found`
    builds a result from its kept fields; `probe` runs the probe."""

    def __init__(self, role: str, model: str, found: Callable[..., R],
                 probe: Callable[[], Awaitable[R]], version: int,
                 path: Path | None = None) -> None:
        self.role = role
        self.model = model
        self.path = path
        self._found = found
        self._probe = probe
        self._version = version
        self.result: R | None = self._stored()

    @property
    def usable(self) -> bool:
        return self.result is not None and self.result.usable

    def line(self) -> str:
        if self.result is None:
            return f"{self.role} {self.model}: not used yet — its probe has not finished"
        return self.result.line()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model, "usable": self.usable, "summary": self.line()}
        if self.result is not None:
            out.update(self.result.figures(), tokens=self.result.tokens,
                       seconds=round(self.result.seconds, 2))
        return out

    async def run(self) -> R:
        """Probe now unless a result for this model is kept; a probe that failed (its
        upstream did) is not kept, so the next start tries again."""
        if self.result is None:
            self.result = await self._probe()
            log.info("%s (%d tokens, %.1f s)", self.result.line(), self.result.tokens,
                     self.result.seconds)
            if not self.result.error:
                self._keep(self.result)
        return self.result

    def _stored(self) -> R | None:
        if self.path is None or not self.path.exists():
            return None
        try:
            kept = json.loads(self.path.read_text("utf-8")).get(self.model)
            found = self._found(**kept) if isinstance(kept, dict) else None
        except (OSError, ValueError, TypeError):
            return None
        return found if found is not None and found.version == self._version else None

    def _keep(self, result: R) -> None:
        if self.path is None:
            return
        try:
            kept = json.loads(self.path.read_text("utf-8")) if self.path.exists() else {}
        except (OSError, ValueError):
            kept = {}
        kept[self.model] = asdict(result)  # type: ignore[call-overload]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(kept, indent=1), "utf-8")
        tmp.replace(self.path)

"""A check: a requirement of the request that code can verify on the text, with no judge.

A check names a kind from the registry (`rubrics.checks.kinds.KINDS`) and that kind's typed
parameters; `quote` holds the words of the request it came from, so a check the request does
not support can be dropped. Running a check gives a `CheckOutcome` (`rubrics.checks.base`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rubrics.checks.kinds import checked_params

CheckSource = Literal["prepass", "agent", "pack", "user"]


class Check(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = Field(min_length=1, max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)
    quote: str = Field(default="", max_length=400)
    source: CheckSource = "prepass"

    @model_validator(mode="after")
    def _known(self) -> Check:
        """The kind is in the registry and the params keep its schema (nullable ones filled,
        so one requirement has one key)."""
        filled = checked_params(self.kind, self.params)
        if filled != self.params:
            object.__setattr__(self, "params", filled)
        return self

    def __hash__(self) -> int:
        # params is a dict; a checklist (hashed by the rubric render cache) must stay hashable
        return hash((self.key(), self.quote, self.source))

    def key(self) -> tuple[str, str]:
        """Two checks with the same kind and parameters are the same requirement."""
        return self.kind, json.dumps(self.params, sort_keys=True, ensure_ascii=False)

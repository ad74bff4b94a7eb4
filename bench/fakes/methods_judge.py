"""A fake judge for the writing-RL methods' calls, over the fake writer responder.

It answers the pairwise verdict, segment extraction and aspect judgment schemas
deterministically, plays a model that thinks before it answers when the requested model name
contains "thinks", and hands every other call (checklist scoring, drafts) to
`fake_writer.WriterResponder`. Used by `bench.reward_cost` and the trainer's method tests.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from bench.fakes.writer import WriterResponder

THINK = ("<think>A plain draft.\n\nMy draft lacks a date; I will add Friday.\n\n"
         "A plain draft, on Friday.</think>\nA plain draft, on Friday.")


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    j = text.find(end, i + len(start))
    return text[i + len(start):j].strip() if 0 <= i < j else ""


class MethodsResponder:
    """`responder(request_body, choice_index)`: the reply's content, or None (default)."""

    def __init__(self, verdict: str = "B") -> None:
        self.writer = WriterResponder()
        self.verdict = verdict          # what every pairwise comparison answers
        self.counts: Counter[str] = Counter()

    def reset(self) -> None:
        self.counts.clear()
        self.writer.reset()

    def __call__(self, req: dict[str, Any], index: int = 0) -> str | None:
        fmt = req.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        props = set(schema.get("properties") or ())
        prompt = next((m.get("content") or "" for m in req.get("messages", [])
                       if m.get("role") == "user"), "")
        if props == {"reason", "verdict"}:
            self.counts["pairwise"] += 1
            return json.dumps({"reason": "the decisive difference", "verdict": self.verdict})
        if props == {"segments"}:
            # Every paragraph of the thinking between the first (the draft) and the last (the
            # revision) is a reflection.
            self.counts["segments"] += 1
            parts = _between(prompt, "<thinking>", "</thinking>").split("\n\n")[1:-1]
            return json.dumps({"segments": [{"issue": p[:600], "revision": p[:600]}
                                            for p in parts if p.strip()][:8]})
        if props == {"judgments"}:
            self.counts["judgments"] += 1
            n = schema["properties"]["judgments"]["minItems"]
            done = 1 if "Friday" in _between(prompt, "<final>", "</final>") else -1
            return json.dumps({"judgments": [
                {"issue_real": 1, "rubric_aligned": 1, "carried_out": done}] * n})
        if not fmt and "thinks" in str(req.get("model")):
            self.counts["think"] += 1
            return THINK
        return self.writer(req, index)

"""Reflection-enriched trajectories for SFT (R2-Write, Liu et al., "Reflection and Revision
for Open-Ended Writing"): `export --format think`.

A loop becomes one assistant turn:

    <think>
    draft
    reflection 1, in the writer's own voice
    revision 1
    ...
    </think>
    best answer

The trajectory is the chain of candidates that led to the best text y* (parent links, the
draft first). Each reflection the loop stored (a judge's diagnosis: dimension, evidence,
objective, actions) is rewritten as the writer's own first-person thinking, by an
OpenAI-compatible model when one is configured (`--voice-url`), else by a plain template.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from generation.base import Backend
from generation.errors import RedraftError
from generation.types import ChatParams

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

VOICE_SYSTEM = ("You rewrite an editor's critique of a draft as the writer's own private "
                "thinking while revising: first person, present tense, plain prose, no lists, "
                "no headings. Keep every concrete problem and every planned change; add "
                "nothing new. Answer with the rewritten thinking only.")
VOICE_USER = "The writing task:\n{task}\n\nThe critique of my current draft:\n{critique}"
MEMORY_THOUGHT = ("Before going further, I recall what worked on similar tasks before and "
                  "revise the draft with it.")

Candidate = Mapping[str, Any]


def trajectory(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates from the draft to the best-scored one, following parent links.

    The best is the one the loop returned (marked `answer`: its selection weighs checks);
    for rows exported before the mark, the highest score (earliest on ties, as the loop keeps
    its best-so-far); unscored candidates never win. A broken parent chain stops at the break.
    """
    by_position = {c["position"]: c for c in candidates}
    scored = [c for c in candidates if c.get("score") is not None]
    if not scored:
        return [c for c in candidates if c.get("kind") == "draft"][:1]
    best = next((c for c in scored if c.get("answer")), None) or \
        max(scored, key=lambda c: (c["score"], -c["position"]))
    path, seen = [best], {best["position"]}
    while (parent := path[-1].get("parent")) is not None and parent in by_position \
            and parent not in seen:
        seen.add(parent)
        path.append(by_position[parent])
    return path[::-1]


def critique_text(reflection: Mapping[str, Any]) -> str:
    """A stored reflection as plain lines, the input of the voice rewrite."""
    lines = [str(reflection.get("summary") or "").strip()]
    for item in reflection.get("items") or ():
        actions = "; ".join(str(a) for a in item.get("actions") or ())
        lines.append(f"- {item.get('dimension')}: {item.get('evidence', '')} "
                     f"Objective: {item.get('objective', '')} Actions: {actions}")
    return "\n".join(line for line in lines if line)


def _clause(text: Any) -> str:
    """A rubric phrase as the middle of a sentence: no final stop, a lower-case first word
    (unless it is an acronym such as "CTA")."""
    text = str(text or "").strip().rstrip(".")
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        text = text[0].lower() + text[1:]
    return text


def template_voice(reflection: Mapping[str, Any] | None) -> str:
    """The writer-voice rewrite without a model: each item as a first-person sentence."""
    if not reflection:
        return MEMORY_THOUGHT
    parts = []
    for item in reflection.get("items") or ():
        evidence = str(item.get("evidence") or "").strip()
        seen = f' Where I wrote "{evidence}", it falls short.' if evidence else ""
        actions = "; ".join(_clause(a) for a in item.get("actions") or ())
        parts.append(f"My draft is weak on {item.get('dimension')}.{seen} "
                     f"I want to {_clause(item.get('objective'))}, so I will {actions}.")
    return " ".join(parts) or str(reflection.get("summary") or MEMORY_THOUGHT)


class Voice:
    """Rewrites reflections in the writer's voice with a model; the template when it fails.

    `fallbacks` counts the reflections that fell back to the template, for the manifest.
    """

    def __init__(self, backend: Backend | None, params: ChatParams | None = None,
                 concurrency: int = 8) -> None:
        self.backend = backend
        self.params = params or ChatParams(temperature=0.3, max_tokens=512)
        self._semaphore = asyncio.Semaphore(concurrency)
        self.calls = 0
        self.fallbacks = 0

    async def thought(self, task: str, reflection: Mapping[str, Any] | None) -> str:
        if self.backend is None or not reflection:
            return template_voice(reflection)
        messages = [{"role": "system", "content": VOICE_SYSTEM},
                    {"role": "user", "content": VOICE_USER.format(
                        task=task, critique=critique_text(reflection))}]
        async with self._semaphore:
            self.calls += 1
            try:
                text = (await self.backend.chat(messages, self.params)).text.strip()
            except RedraftError:
                text = ""
        if not text or THINK_OPEN in text or THINK_CLOSE in text:
            self.fallbacks += 1
            return template_voice(reflection)
        return text


def _task(prompt: Sequence[Mapping[str, Any]]) -> str:
    users = [m for m in prompt if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    return content if isinstance(content, str) else str(content)


async def think_text(prompt: Sequence[Mapping[str, Any]], candidates: Sequence[Candidate],
                     voice: Voice) -> str:
    """The R2-Write completion for one loop: <think> draft, reflections, revisions </think> y*."""
    path = trajectory(candidates)
    if not path:
        raise ValueError("a loop without a draft has no trajectory")
    thoughts = await asyncio.gather(*(voice.thought(_task(prompt), c.get("reflection"))
                                      for c in path[1:]))
    steps = [path[0]["text"].strip()]
    for thought, cand in zip(thoughts, path[1:], strict=True):
        steps += [thought.strip(), cand["text"].strip()]
    think = "\n\n".join(steps)
    return f"{THINK_OPEN}\n{think}\n{THINK_CLOSE}\n\n" + path[-1]["text"].strip()


def split_think(text: str) -> tuple[str | None, str]:
    """(the <think> part or None, the final answer after it)."""
    start, end = text.find(THINK_OPEN), text.find(THINK_CLOSE)
    if start < 0 or end < start:
        return None, text.strip()
    return text[start + len(THINK_OPEN):end].strip(), text[end + len(THINK_CLOSE):].strip()

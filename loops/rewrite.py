"""Rewrite: y' ~ Psi(q, y, g) — the whole revised text and nothing else."""

from __future__ import annotations

from collections.abc import Sequence

from llm.base import Backend
from llm.conversation import message_text, target_text
from llm.types import ChatParams, Completion, Message
from loops.answer import clean_answer
from loops.prompting import Attempt, language_rule, render_history, template
from loops.trace import Reflection


def render_reflection(reflection: Reflection) -> str:
    lines = [reflection.summary] if reflection.summary else []
    for item in reflection.items:
        lines.append(f"- {item.dimension}: {item.objective}")
        if item.evidence:
            lines.append(f"  evidence: \"{item.evidence}\"")
        lines.extend(f"  * {action}" for action in item.actions)
    return "\n".join(lines)


def revision_messages(query: Sequence[Message], text: str, request: str) -> list[Message]:
    """The reviser's standing instructions, the conversation, the current text as the
    assistant's answer, then the revision request.

    Ordered for an upstream's prefix cache: everything up to the current text repeats
    byte for byte in every rewrite of a loop; only the text and the request change. The
    instructions join the request's own system prompt (one system message, first: some chat
    templates accept no other)."""
    system = template("rewrite_system").substitute(
        language_rule=language_rule(target_text(query))).strip()
    turns = list(query)
    if turns and turns[0].get("role") == "system":
        first = turns.pop(0)
        own = message_text(first)
        system = f"{system}\n\n{own}" if own else system
    return [{"role": "system", "content": system}, *turns,
            {"role": "assistant", "content": text}, {"role": "user", "content": request}]


async def rewrite(backend: Backend, query: Sequence[Message], text: str, reflection: Reflection,
                  params: ChatParams, history: list[Attempt]) -> tuple[str, Completion]:
    request = template("rewrite").substitute(reflection=render_reflection(reflection),
                                             history=render_history(history))
    completion = await backend.chat(revision_messages(query, text, request), params.with_(n=1))
    return clean_answer(completion.text, text.lstrip().startswith("```")), completion

"""Rewrite: y' ~ Psi(q, y, g) — the whole revised text and nothing else."""

from __future__ import annotations

from collections.abc import Sequence

from generation.base import Backend
from generation.conversation import last_user_index, message_text, target_text
from generation.types import ChatParams, Completion, Message
from loops.answer import clean_answer
from loops.prompting import Attempt, language_rule, render_history, template
from loops.reflection import CHECK_PREFIX
from loops.trace import Reflection
from rubrics.checks import CheckOutcome
from rubrics.checks.counts import count_words

UNCHANGED_NOTE = ("Your last revision gave the draft back word for word. This time change it: "
                  "carry out each point above in the text itself.")


# Sampling for a candidate that must differ from the greedy one: a second candidate of a
# round, or the retry of a rewrite that gave its text back. Asked again at temperature 0, a
# model answers what it answered (k greedy candidates are k copies).
VARIED_TEMPERATURE = 0.8


def varied(params: ChatParams, index: int) -> ChatParams:
    """The sampling of a round's `index`-th ask: the request's own for the first; every later
    one at least VARIED_TEMPERATURE, with its own seed (the request's, or 0, plus `index`) so
    that a run repeats where the upstream honours seeds."""
    if index == 0:
        return params
    return params.with_(temperature=max(params.temperature or 0.0, VARIED_TEMPERATURE),
                        seed=(params.seed or 0) + index)


def render_reflection(reflection: Reflection, *, checks_apart: bool = False) -> str:
    """The reflection as the reviser reads it; with `checks_apart`, without the items of
    failed checks (`render_requirements` states those on their own)."""
    lines = [reflection.summary] if reflection.summary else []
    for item in reflection.items:
        if checks_apart and item.dimension.startswith(CHECK_PREFIX):
            continue
        lines.append(f"- {item.dimension}: {item.objective}")
        if item.evidence:
            lines.append(f"  evidence: \"{item.evidence}\"")
        lines.extend(f"  * {action}" for action in item.actions)
    return "\n".join(lines)


def render_requirements(outcomes: Sequence[CheckOutcome]) -> str:
    """The checks the current text fails, as measured facts with their targets, first and
    apart from the judge's items, and the ones it passes as things to keep; empty when it
    fails none. A short, measured request ("It has 67 words; it must have at most 49") is
    what a small reviser carries out; buried among the judge's items it is copied past."""
    failed = [o for o in outcomes if not o.passed]
    if not failed:
        return ""
    points = [f"- It has {o.measured}; it must have {o.target}." + (f" {o.action}" if o.action
                                                                   else "") for o in failed]
    kept = [o.target for o in outcomes if o.passed]
    if kept:
        points.append(f"Keep what it already meets: {'; '.join(kept)}.")
    return template("requirements").substitute(points="\n".join(points)).rstrip() + "\n\n"


def revision_messages(query: Sequence[Message], text: str, request: str) -> list[Message]:
    """The reviser's standing instructions, the conversation up to the last user turn, then
    one user turn that quotes that turn's request, the current text as the draft, and the
    revision request (`rewrite_frame`).

    The draft is quoted rather than given as the assistant's own answer: asked to "revise
    the answer above", a 1.5B model gave its answer back word for word in most rounds, and
    quoted with the request it carried out the measured changes (`bench.checks_pass`). The
    order suits an upstream's prefix cache: everything up to the current text repeats byte
    for byte in every rewrite of a loop. The instructions join the request's own system
    prompt (one system message, first: some chat templates accept no other)."""
    system = template("rewrite_system").substitute(
        language_rule=language_rule(target_text(query))).strip()
    turns = list(query)
    if turns and turns[0].get("role") == "system":
        first = turns.pop(0)
        own = message_text(first)
        system = f"{system}\n\n{own}" if own else system
    last = last_user_index(turns)
    if last is not None:
        turns.pop(last)
    frame = template("rewrite_frame").substitute(request=target_text(query).strip(),
                                                 text=text.strip(), task=request.strip())
    return [{"role": "system", "content": system}, *turns, {"role": "user", "content": frame}]


def render_cut(text: str) -> str:
    """For a text the length limit cut off: rewritten at the same limit, a text as long is cut
    again (a 1.5B reviser copied such drafts, cut where they were), so the new one must be
    shorter, in words a reviser can act on."""
    words = count_words(text)
    note = template("cut_note").substitute(words=words, limit=max(1, words * 3 // 5))
    return f"{note.strip()}\n\n"


def revision_request(reflection: Reflection, history: list[Attempt],
                     checks: Sequence[CheckOutcome] = (), cut_text: str | None = None) -> str:
    """What the reviser is asked: that the text was cut off when `cut_text` is given (the
    text the length limit cut, `render_cut`), the failed checks (`render_requirements`),
    then the judge's reflection and the earlier rounds, each only when there is one. Under
    the `checks` evaluation the reflection only restates the failed checks and is left out."""
    requirements = (render_cut(cut_text) if cut_text else "") + render_requirements(checks)
    judged = any(not i.dimension.startswith(CHECK_PREFIX) for i in reflection.items)
    said = render_reflection(reflection, checks_apart=bool(requirements)) \
        if judged or not requirements else ""
    return template("rewrite").substitute(
        requirements=requirements,
        reflection=f"What to change:\n{said}\n\n" if said.strip() else "",
        history=f"Earlier rounds:\n{render_history(history)}\n\n" if history else "")


def anew_messages(query: Sequence[Message], checks: Sequence[CheckOutcome]) -> list[Message]:
    """The conversation with its last user turn asked again, the requirements an earlier
    answer missed stated after it, and no earlier answer to copy: a 1.5B reviser shown its
    draft gave it back word for word even when told twice to change it, and asked anew it
    writes a new text. Only the failed checks are said (measured, with their targets)."""
    missed = "\n".join(f"- it had {o.measured}; the request asks for {o.target}."
                       for o in checks if not o.passed)
    turns, target = list(query), target_text(query)
    asked = {"role": "user", "content": template("answer_anew").substitute(
        request=target.strip(), missed=missed, language_rule=language_rule(target))}
    last = last_user_index(turns)
    if last is None:
        return [*turns, asked]
    return [*turns[:last], asked, *turns[last + 1:]]


async def answer_anew(backend: Backend, query: Sequence[Message],
                      checks: Sequence[CheckOutcome], params: ChatParams,
                      ) -> tuple[str, Completion]:
    """A new answer to the request with the checks an earlier answer failed stated
    (`anew_messages`)."""
    completion = await backend.chat(anew_messages(query, checks), params.with_(n=1))
    return clean_answer(completion.text), completion


async def rewrite(backend: Backend, query: Sequence[Message], text: str, request: str,
                  params: ChatParams) -> tuple[str, Completion]:
    """The revised text, asked with `request` (`revision_request`)."""
    completion = await backend.chat(revision_messages(query, text, request), params.with_(n=1))
    return clean_answer(completion.text, text.lstrip().startswith("```")), completion

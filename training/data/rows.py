"""One recorded loop → the rows of the exported dataset (docs/trainer-reference.md, export).

A loop's prompt is its request's conversation; y* is its best-scored candidate, y0 its draft.
Loops that teach nothing are left out with a reason: `errored`, `degraded` (the loop fell
back), `passthrough` (no loop ran: reflection off, no candidates or no checklist) or
`filtered` (no scored text, or below --min-final-score), `dropped_task` (y* passes its
checks by dropping the task: empty, looping, or off the request's topic, the checks reward's
guard, `training.rewards.task`; imitating it teaches a model to loop) or `cut_off` (y* was
written by a call that stopped at the request's token limit: its last sentence is cut, and
whatever code added after it, a closing phrase or a quote, follows a broken text; imitating
it teaches a model to run out of tokens before it ends).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from generation.conversation import message_text, normalised_conversation
from loops.record import ANSWER_KEY, CUT_KEY, answer_of
from store import CandidateRecord, LoopRecord
from training.rewards.checklist import stored_checks
from training.rewards.task import drops_task, request_text

Counter = Callable[[str], int]
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
MESSAGE_OVERHEAD = 4  # template tokens around each turn, roughly


def conversation(record: LoopRecord) -> list[dict[str, str]]:
    """The request's messages as plain {role, content} text turns."""
    messages = record.request.get("messages") or []
    return [{"role": ROLES[m["role"]], "content": message_text(m)}
            for m in messages if isinstance(m, dict) and m.get("role") in ROLES]


def query_id(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(normalised_conversation(messages).encode()).hexdigest()


def best(record: LoopRecord) -> CandidateRecord | None:
    """y*: the candidate the loop returned (its selection weighs checks and shrunk rewrites,
    `loops.answer`); for older loops the highest-scored, the earliest on a tie."""
    top = answer_of(record.candidates)
    return top if top is not None and top.total_score is not None else None


def cut_off(record: LoopRecord, candidate: CandidateRecord) -> bool:
    """Did the call that wrote `candidate` stop at the token limit: marked so when recorded,
    or (loops recorded before the mark) it used every completion token the request allowed."""
    if (candidate.scores or {}).get(CUT_KEY):
        return True
    limit = (record.request.get("max_completion_tokens") or record.request.get("max_tokens")
             or record.request.get("max_output_tokens"))
    used = (candidate.usage or {}).get("completion_tokens")
    return isinstance(limit, int) and isinstance(used, int) and used >= limit


def draft(record: LoopRecord) -> CandidateRecord | None:
    drafts = [c for c in record.candidates if c.kind == "draft"]
    return min(drafts, key=lambda c: c.position) if drafts else None


def same_text(a: str, b: str) -> bool:
    """Two candidate texts that say the same: equal once outer whitespace is gone."""
    return a.strip() == b.strip()


def gained(record: LoopRecord) -> bool:
    """Did the loop improve on its draft: its answer y* is another text than the draft y0
    and scored higher. A loop whose answer has the draft's text gained nothing, whatever its
    scores say (a re-judged or held score can differ for the same words)."""
    top, first = best(record), draft(record)
    if top is None or first is None or first.total_score is None:
        return False
    return not same_text(top.text, first.text) and top.total_score > first.total_score


def left_out(record: LoopRecord, min_final_score: float, *,
             task_guard: bool = True) -> str | None:
    """Why the loop gives no rows, or None when it does."""
    if record.error:
        return "errored"
    if record.stop_reason == "degraded":
        return "degraded"
    reflection = record.request.get("reflection")
    disabled = isinstance(reflection, dict) and reflection.get("enabled") is False
    if disabled or not record.candidates or not record.checklist or not conversation(record):
        return "passthrough"
    top = best(record)
    if top is None or top.total_score < min_final_score:  # type: ignore[operator]
        return "filtered"
    if task_guard and drops_task(top.text, request_text(conversation(record)),
                                 stored_checks(record.checklist)) is not None:
        return "dropped_task"
    if task_guard and cut_off(record, top):
        return "cut_off"
    return None


def char_counter(text: str) -> int:
    return max(1, len(text) // 4)


def truncate(messages: list[dict[str, str]], limit: int,
             count: Counter) -> tuple[list[dict[str, str]], bool]:
    """Fit `messages` into `limit` tokens: drop the oldest non-system turns before the last,
    then cut the end off the last turn. True when anything was cut."""
    out = [dict(m) for m in messages]

    def size() -> int:
        return sum(count(m["content"]) + MESSAGE_OVERHEAD for m in out)

    cut = False
    while size() > limit:
        older = [i for i, m in enumerate(out[:-1]) if m["role"] != "system"]
        if not older:
            break
        del out[older[0]]
        cut = True
    while size() > limit and out[-1]["content"]:
        text = out[-1]["content"]
        over = size() - limit
        keep = max(0, len(text) - max(1, len(text) * over // max(1, count(text))))
        out[-1]["content"] = text[:keep]
        cut = True
    return out, cut


def candidate_row(c: CandidateRecord) -> dict[str, Any]:
    """One candidate of a prompt row; `answer` marks the one the loop returned (y*)."""
    return {"position": c.position, "round": c.round, "kind": c.kind, "text": c.text,
            "score": c.total_score, "parent": c.parent_position, "reflection": c.reflection,
            "answer": bool((c.scores or {}).get(ANSWER_KEY))}


def rows_of(record: LoopRecord, *, max_prompt_tokens: int, count: Counter,
            min_gain: float) -> dict[str, Any]:
    """{"id", "sft", "prompt", "pair" (or None), "truncated", "gained"} for a loop that
    `left_out` keeps."""
    messages = conversation(record)
    qid = query_id(messages)
    top, first = best(record), draft(record)
    assert top is not None and top.total_score is not None
    chosen = [{"role": "assistant", "content": top.text}]
    sft = {"id": qid, "loop_id": record.id, "prompt": messages, "completion": chosen,
           "score": top.total_score}
    short, truncated = truncate(messages, max_prompt_tokens, count)
    prompt = {"id": qid, "loop_id": record.id, "prompt": short, "checklist": record.checklist,
              "reference": top.text, "reference_score": top.total_score,
              "candidates": [candidate_row(c) for c in
                             sorted(record.candidates, key=lambda c: c.position)]}
    pair = None
    # y* over y0 only where the answer is another text than the draft (the same words are no
    # preference, whatever the two scores say), scored at least min_gain higher
    if (first is not None and first.total_score is not None and first.position != top.position
            and not same_text(top.text, first.text)
            and top.total_score - first.total_score >= min_gain):
        pair = {"id": qid, "loop_id": record.id, "prompt": messages, "chosen": chosen,
                "rejected": [{"role": "assistant", "content": first.text}],
                "chosen_score": top.total_score, "rejected_score": first.total_score}
    return {"id": qid, "score": top.total_score, "sft": sft, "prompt": prompt, "pair": pair,
            "truncated": truncated, "gained": gained(record)}

"""Whether a completion drops the task: the guard of the checks reward.

The checks reward pays the share of the prompt's stated requirements a completion meets, and
many of them are met by saying nothing: an empty text has no commas, no capitals and fewer
than 80 words; "Start small." opens with "Start small". Trained on that alone, a policy
learns to stop writing. So a completion that drops the task earns nothing, whatever checks it
passes. Code can tell three ways of dropping it:

- `empty`: no words at all;
- `looping`: the text repeats itself to its token limit (`loops.answer.looping`);
- `off_task`: it shares no content word with the task, that is with the request once the
  words that state its requirements (the checks' quotes) are taken out. Words match on their
  first PREFIX letters ("invite" and "invitation"); a request in Chinese or Japanese matches
  on pairs of its characters. When a check asks for another language, or the task has no
  content word left to match, this test is not made.

A text on the task that uses none of its words is rare in a short answer, and the cost of
such a miss is one completion's reward, while a reward that pays for silence undoes the
training.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from loops.answer import looping
from rubrics.checks import Check

PREFIX = 5
MIN_LETTERS = 3  # "dog", "sea", "car" name a task's topic
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
# English words of three letters or more that say nothing of a task's topic
STOPWORDS = frozenset("""
the and for but not nor you your yours all any can has had have was were are its our ours out
who whom how why what when where which while with within without one two may own per via yet
she her him his they them their there these those this that than then also into onto from
about above after again against among been before being below between both could does doing
down during each every further having here just least less more most much must only other
over same should some such through under until very would write reply response text words
word using use give make please short long brief include including something someone like
sure get got let say said see way new now off too few answer answers request requirement
requirements following
""".split())


def _content(text: str) -> set[str]:
    return {w.lower()[:PREFIX] for w in _WORD.findall(text)
            if len(w) >= MIN_LETTERS and w.lower() not in STOPWORDS and not _CJK.search(w)}


def _pairs(text: str) -> set[str]:
    return {run[i:i + 2] for run in _CJK.findall(text) for i in range(len(run) - 1)}


def task_text(request: str, checks: Iterable[Check]) -> str:
    """The request without the words that state its requirements."""
    for check in checks:
        if check.quote:
            request = request.replace(check.quote, " ")
    return request


def drops_task(text: str, request: str, checks: Sequence[Check]) -> str | None:
    """Why `text` drops the task of `request` ("empty", "looping", "off_task"), or None."""
    if not _WORD.search(text):
        return "empty"
    if looping(text):
        return "looping"
    if any(c.kind == "language" for c in checks):
        return None
    task = task_text(request, checks)
    wanted_pairs = _pairs(task)
    if wanted_pairs:
        return None if wanted_pairs & _pairs(text) else "off_task"
    wanted = _content(task)
    if not wanted:
        return None
    return None if wanted & _content(text) else "off_task"


def request_text(prompt: Any) -> str:
    """The last user turn of a TRL prompt (a string or a list of chat messages)."""
    if isinstance(prompt, str):
        return prompt
    turns = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    content = turns[-1].get("content") if turns else ""
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")

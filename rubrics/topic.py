"""Whether a text is on its request's topic: it shares a content word with the task, that is
with the request once the words that state its requirements (the checks' quotes) are taken
out. Words match on their first PREFIX letters ("invite" and "invitation"); a request in
Chinese or Japanese matches on pairs of its characters. When a check asks for another
language, or the task has no content word left to match, the text counts as on topic.

The loop flags a rewrite that leaves the topic its parent kept (a 135M reviser met "2
paragraphs split by ***" with a text about parasitic wasps for a request about a garden);
the checks reward pays nothing for a completion off its task (`training.rewards.task`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

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


def has_words(text: str) -> bool:
    return _WORD.search(text) is not None


def off_topic(text: str, request: str, checks: Sequence[Check]) -> bool:
    """Does `text` share no content word (no character pair, for Chinese or Japanese) with
    the task of `request`?"""
    if any(c.kind == "language" for c in checks):
        return False
    task = task_text(request, checks)
    wanted_pairs = _pairs(task)
    if wanted_pairs:
        return not wanted_pairs & _pairs(text)
    wanted = _content(task)
    return bool(wanted) and not wanted & _content(text)

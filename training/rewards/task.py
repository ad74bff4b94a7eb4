"""Whether a completion drops the task: the guard of the checks reward.

The checks reward pays the share of the prompt's stated requirements a completion meets, and
many of them are met by saying nothing: an empty text has no commas, no capitals and fewer
than 80 words; "Start small." opens with "Start small". Trained on that alone, a policy
learns to stop writing. So a completion that drops the task earns nothing, whatever checks it
passes. Code can tell four ways of dropping it:

- `empty`: no words at all;
- `looping`: the text repeats itself to its token limit (`loops.answer.looping`);
- `off_task`: it shares no content word with the task, that is with the request once the
  words that state its requirements (the checks' quotes) are taken out. Words match on their
  first PREFIX letters ("invite" and "invitation"); a request in Chinese or Japanese matches
  on pairs of its characters. When a check asks for another language, or the task has no
  content word left to match, this test is not made;
- `refused`: it declines the task in a refusal's own words ("As a chatbot, I don't have the
  capability to...", "I'm sorry, but I can't...", "I am unable to write..."). Such a text
  can be on the topic and pass every check, and SFT on it teaches the model to decline.
  Only refusal constructions count: "I'm sorry for the delay" or "I cannot wait" in a letter
  are the task done.

A text on the task that uses none of its words is rare in a short answer, and the cost of
such a miss is one completion's reward, while a reward that pays for silence undoes the
training.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loops.answer import looping
from rubrics.checks import Check
from rubrics.topic import has_words, off_topic

_DO = r"(write|create|compose|draft|generate|produce|provide|assist|fulfil+|comply)"
_REFUSAL = re.compile(
    r"\bas an? ((helpful|friendly|virtual|digital) )?(ai|a\.i\.|artificial intelligence|chatbot|"
    r"(large )?language model|text-based (ai|assistant|model))"
    r"( language model| assistant| model| chatbot)?,? i\b"
    r"|\bi(?:'m| am) sorry,? but i (can ?not|can't|won't|am unable|'m unable|am not able)\b"
    rf"|\bi (can ?not|can't|won't|am unable to|am not able to) {_DO}\b"
    rf"|\bi(?:'m| am) (unable|not able) to {_DO}\b"
    r"|\bi (do not|don't) have the capabilit(y|ies)\b"
    rf"|\bi (do not|don't) have the (ability|capacity) to {_DO}\b"
    r"|\b(unable|not able) to (fulfil+|comply with|assist with|help with) (this|that|your)\b"
    r"|\bi(?:'m| am) sorry for (the|any) confusion,? but as an?\b"
    rf"|\bi(?:'m| am) not (equipped|designed|programmed) to {_DO}\b",
    re.IGNORECASE)


def refuses(text: str) -> bool:
    """Whether `text` declines its task in a refusal's words (straight or curly apostrophes)."""
    return _REFUSAL.search(text.replace("\u2019", "'")) is not None


def drops_task(text: str, request: str, checks: Sequence[Check]) -> str | None:
    """Why `text` drops the task of `request` ("empty", "looping", "refused", "off_task"),
    or None."""
    if not has_words(text):
        return "empty"
    if looping(text):
        return "looping"
    if refuses(text):
        return "refused"
    return "off_task" if off_topic(text, request, checks) else None


def request_text(prompt: Any) -> str:
    """The last user turn of a TRL prompt (a string or a list of chat messages)."""
    if isinstance(prompt, str):
        return prompt
    turns = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    content = turns[-1].get("content") if turns else ""
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")

"""Reading a chat conversation the way the rubric agents and judges need it, and the prompt
templates their calls are written from.

The query is the whole conversation; the checklist targets its last user turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from string import Template
from typing import Any

from generation.types import Message

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def _cjk_share(text: str) -> float:
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def detect_language(text: str) -> str | None:
    """'zh' when the request is written in CJK script, 'en' when in ASCII letters, else None.

    Requests often paste long English material around a short Chinese instruction (or quote
    English names in a Chinese one), so the instruction's usual places, the first and last
    hundred characters, weigh as much as the overall share.
    """
    text = text.strip()
    if _cjk_share(text) >= 0.1 or max(_cjk_share(text[:100]), _cjk_share(text[-100:])) >= 0.25:
        return "zh"
    latin = len(_LATIN.findall(text))
    if latin and latin * 2 >= sum(1 for c in text if c.isalpha()):
        return "en"
    return None


def message_text(message: Message) -> str:
    """The text of a message, whether its content is a string or a list of parts."""
    content: Any = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def last_user_index(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def target_text(messages: Sequence[Message]) -> str:
    """The turn the checklist is for: the last user turn, or everything when there is none."""
    i = last_user_index(messages)
    if i is None:
        return "\n".join(message_text(m) for m in messages)
    return message_text(messages[i])


def render_conversation(messages: Sequence[Message]) -> str:
    """The conversation as tagged turns, the last user turn marked as the target."""
    target = last_user_index(messages)
    turns = []
    for i, message in enumerate(messages):
        text = message_text(message).strip()
        if not text:
            continue
        role = str(message.get("role", "user"))
        mark = ' target="true"' if i == target else ""
        turns.append(f'<turn role="{role}"{mark}>\n{text}\n</turn>')
    return "\n".join(turns)


def normalised_conversation(messages: Sequence[Message]) -> str:
    """Role and text of every turn with whitespace collapsed: what makes two queries 'the same'."""
    return "\n".join(f"{m.get('role', '')}: {' '.join(message_text(m).split())}"
                     for m in messages)


@cache
def prompt_template(package: str, name: str) -> Template:
    """`<package>/prompts/<name>.txt`, read once: package files never change while the
    process runs. string.Template ($name) rather than str.format because the prompts show
    JSON, whose braces str.format would read as fields."""
    return Template(files(package).joinpath("prompts", f"{name}.txt").read_text("utf-8"))


def render_prompt(package: str, name: str, **values: object) -> str:
    """The template filled in; a missing value raises KeyError rather than leaking `$name`."""
    return prompt_template(package, name).substitute(values)

"""Requests through a running redraft with the official `openai` client, a few in flight at
once, each answer appended to a JSON-lines file as it comes, so that an interrupted stage
continues where it stopped (the rows already there are not asked again).

A row: {"key", "text", "prompt_tokens", "completion_tokens", "total_tokens" (every hidden
call of the request, as its `usage` counts them), "seconds" (the request's wall time),
"reflection" (the loop's summary, or null), "error" (null, or why no answer came back)}.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

API_KEY = "flywheel"  # the server binds to 127.0.0.1 with no API keys: any key is accepted
TIMEOUT = 3600.0


@dataclass(frozen=True, slots=True)
class Ask:
    """One request: its row key, the user's message, and the `reflection` object (None: the
    loop off, one plain call)."""

    key: str
    query: str
    reflection: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def read_rows(path: Path) -> dict[str, dict[str, Any]]:
    """The rows of a JSON-lines answer file by key; a torn last line (a killed run) is
    dropped."""
    rows: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return rows
    for line in path.read_text("utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        rows[row["key"]] = row
    return rows


def _row(ask: Ask, reply: Any, seconds: float) -> dict[str, Any]:
    usage = reply.usage
    extra = reply.model_extra or {}
    return {"key": ask.key, "text": reply.choices[0].message.content or "",
            "finish_reason": reply.choices[0].finish_reason,
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "total_tokens": usage.total_tokens if usage else 0,
            "seconds": round(seconds, 3), "reflection": extra.get("reflection"), "error": None}


async def _one(client: Any, model: str, ask: Ask, temperature: float,
               max_tokens: int) -> dict[str, Any]:
    import openai

    body: dict[str, Any] = {"reflection": ask.reflection or {"enabled": False}, **ask.extra}
    started = time.monotonic()
    try:
        reply = await client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": ask.query}],
            temperature=temperature, max_tokens=max_tokens, extra_body=body)
    except openai.APIError as exc:
        return {"key": ask.key, "text": "", "finish_reason": None, "prompt_tokens": 0,
                "completion_tokens": 0, "total_tokens": 0,
                "seconds": round(time.monotonic() - started, 3), "reflection": None,
                "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    return _row(ask, reply, time.monotonic() - started)


async def _ask_all(base_url: str, model: str, asks: Sequence[Ask], out: Path, *,
                   temperature: float, max_tokens: int, concurrency: int,
                   desc: str) -> None:
    from openai import AsyncOpenAI

    semaphore = asyncio.Semaphore(concurrency)
    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=TIMEOUT)

    async def bounded(ask: Ask) -> dict[str, Any]:
        async with semaphore:
            return await _one(client, model, ask, temperature, max_tokens)

    try:
        with out.open("a", encoding="utf-8") as sink, \
                tqdm(total=len(asks), desc=desc, unit="answer") as bar:
            for done in asyncio.as_completed([bounded(a) for a in asks]):
                row = await done
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                bar.update()
    finally:
        await client.close()


def ask_all(base_url: str, model: str, asks: Sequence[Ask], out: Path, *, temperature: float,
            max_tokens: int, concurrency: int, desc: str) -> dict[str, dict[str, Any]]:
    """Ask what `out` does not hold yet; returns every row of `out` by key."""
    done = read_rows(out)
    todo = [a for a in asks if a.key not in done]
    if todo:
        if out.is_file():  # drop a torn last line before appending after it
            out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                   for r in done.values()), "utf-8")
        asyncio.run(_ask_all(base_url, model, todo, out, temperature=temperature,
                             max_tokens=max_tokens, concurrency=concurrency, desc=desc))
    return read_rows(out)

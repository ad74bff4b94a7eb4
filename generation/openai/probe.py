"""Which structured-output form an upstream keeps, found by asking it: each form of
PROBE_ORDER in turn gets one small request whose answer shows whether the form held (the
answer parses, has exactly the required keys, keeps its enum; bounds are checked after
parsing whatever the form)."""

from __future__ import annotations

import time
from typing import Any

import aiohttp
import orjson

from generation.openai.dialects import (
    PROBE_MAX_TOKENS,
    PROBE_MESSAGES,
    PROBE_ORDER,
    PROBE_SCHEMA,
    Dialect,
    dialect,
    loosen,
    shape,
)
from generation.openai.wire import probe_outcome


async def probe(session: aiohttp.ClientSession, url: str, model: str, engine: str | None,
                deadline: float, seen: dict[str, str]) -> Dialect | None:
    """The first form of PROBE_ORDER whose answer keeps what the form guarantees; `none` when
    every one is refused, not supported or broken; None when the upstream stops answering.
    What each form did goes into `seen` (cleared first), for /health: chosen, refused (HTTP
    status), not supported (the server dropped the field), broke the schema (how), not tried."""
    seen.clear()
    for form in PROBE_ORDER:
        left = deadline - time.monotonic()
        if left <= 0:
            seen[form] = "not tried: the probe ran out of time"
            return None
        outcome = await try_form(session, url, model, dialect(form, engine), left)
        seen[form] = outcome
        if outcome == "ok":
            seen[form] = "chosen"
            for later in PROBE_ORDER[PROBE_ORDER.index(form) + 1:]:
                seen[later] = f"not tried: {form} was chosen first"
            return dialect(form, engine)
        if outcome.startswith("no answer"):
            return None
    return dialect("none", engine)


async def try_form(session: aiohttp.ClientSession, url: str, model: str, spoken: Dialect,
                   seconds: float) -> str:
    """What one probe request in `spoken`'s form came back as (`probe_outcome`)."""
    body: dict[str, Any] = {"model": model, "messages": list(PROBE_MESSAGES),
                            "max_tokens": PROBE_MAX_TOKENS, "temperature": 0}
    shape(body, spoken.form, loosen(PROBE_SCHEMA, spoken.rules))
    try:
        async with session.post(url + "/chat/completions", data=orjson.dumps(body),
                                timeout=aiohttp.ClientTimeout(total=seconds)) as resp:
            raw = await resp.read()
            status = resp.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        return f"no answer ({type(exc).__name__})"
    return probe_outcome(status, raw, model)

"""A closed-loop HTTP load generator for chat completions or the Responses API: N workers,
fixed duration.

Run as its own process (`python -m bench.harness.loadgen`) so it never shares an event loop, or a
GIL, with what it measures. Each worker sends POST /chat/completions (or, with `--api
responses`, the same request as POST /responses) back to back over a pooled keep-alive
connection; a request counts when it finishes inside the measured window
(after the warm-up), so throughput has no bias at the window's edges. It prints one JSON
line: requests/s, latency percentiles, errors, and its own CPU use (near 1.0 means the
generator, not the target, set the pace).

    python -m bench.harness.loadgen --url http://127.0.0.1:8000/v1 --concurrency 32 --duration 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

# A short, realistic chat request: a system prompt, one user turn, a token cap.
_MESSAGES = [
    {"role": "system", "content": "You are a concise assistant for a marketing team."},
    {"role": "user", "content": "Write a two-sentence product blurb for a solar-powered "
                                "bike light that charges in four hours."},
]


APIS = ("chat", "responses")
# What a good answer holds: a plain body's key, and a stream's last event.
_ANSWERED = {"chat": (b'"choices"', b"[DONE]"),
             "responses": (b'"output"', b"event: response.completed")}


def request_body(model: str, stream: bool, api: str = "chat") -> bytes:
    if api == "responses":  # the same request: the system prompt as instructions
        body: dict[str, Any] = {"model": model, "instructions": _MESSAGES[0]["content"],
                                "input": _MESSAGES[1]["content"], "max_output_tokens": 64,
                                "temperature": 0.7}
        if stream:
            body["stream"] = True
        return orjson.dumps(body)
    body = {"model": model, "messages": _MESSAGES, "max_tokens": 64, "temperature": 0.7}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return orjson.dumps(body)


def chat_url(base: str) -> str:
    """`base` is an OpenAI base URL (…/v1) or already the chat completions URL."""
    return api_url(base, "chat")


def api_url(base: str, api: str) -> str:
    """The route of `api` under an OpenAI base URL (…/v1), or `base` if it already is it."""
    path = "/chat/completions" if api == "chat" else "/responses"
    base = base.rstrip("/")
    return base if base.endswith(path) else base + path


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


@dataclass
class _Tally:
    start: float  # measurement window, perf_counter seconds
    end: float
    latencies: list[float] = field(default_factory=list)  # seconds, window requests only
    first_bytes: list[float] = field(default_factory=list)  # streams: time to first chunk
    errors: int = 0
    answered: int = 0  # every good answer, warm-up included: divides the target's CPU time
    first_error: str | None = None

    def error(self, what: str) -> None:
        if self.start <= time.perf_counter() <= self.end:
            self.errors += 1
            self.first_error = self.first_error or what


async def _worker(session: aiohttp.ClientSession, url: str, body: bytes,
                  headers: dict[str, str], stream: bool, tally: _Tally,
                  answered: tuple[bytes, bytes]) -> None:
    perf = time.perf_counter
    plain_mark, stream_end = answered
    while True:
        t0 = perf()
        if t0 >= tally.end:
            return
        try:
            async with session.post(url, data=body, headers=headers) as resp:
                if stream:
                    first = None
                    tail = b""
                    ended = False
                    async for data in resp.content.iter_any():
                        if first is None:
                            first = perf()
                        window = tail + data
                        ended = ended or stream_end in window
                        tail = window[-64:]
                    ok = resp.status == 200 and ended
                else:
                    data = await resp.read()
                    ok = resp.status == 200 and plain_mark in data
                t1 = perf()
            if not ok:
                tally.error(f"HTTP {resp.status}")
                continue
            tally.answered += 1
            if tally.start <= t1 <= tally.end:
                tally.latencies.append(t1 - t0)
                if stream and first is not None:
                    tally.first_bytes.append(first - t0)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            tally.error(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(0.01)  # a dead target must not turn this into a busy loop


async def run_load(url: str, *, concurrency: int, duration: float, warmup: float,
                   stream: bool = False, model: str = "fake-model",
                   api_key: str | None = None, request_timeout: float = 30.0,
                   api: str = "chat") -> dict[str, Any]:
    """Drive `url` (an OpenAI base URL) and return the figures of the measured window."""
    headers = {"content-type": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0, force_close=False,
                                     enable_cleanup_closed=False, ttl_dns_cache=None)
    body = request_body(model, stream, api)
    cpu0 = time.process_time()
    now = time.perf_counter()
    tally = _Tally(start=now + warmup, end=now + warmup + duration)
    async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=request_timeout),
            skip_auto_headers=("User-Agent", "Accept-Encoding"), auto_decompress=False) as s:
        await asyncio.gather(*(_worker(s, api_url(url, api), body, headers, stream, tally,
                                       _ANSWERED[api])
                               for _ in range(concurrency)))
    wall = time.perf_counter() - now
    lat = sorted(tally.latencies)
    out: dict[str, Any] = {
        "rps": round(len(lat) / duration, 1),
        "p50_ms": round(percentile(lat, 50) * 1000, 3),
        "p99_ms": round(percentile(lat, 99) * 1000, 3),
        "errors": tally.errors,
        "requests": len(lat),
        "answered": tally.answered,
        "loadgen_cpu": round((time.process_time() - cpu0) / wall, 2),
    }
    if stream:
        out["ttfb_p50_ms"] = round(percentile(sorted(tally.first_bytes), 50) * 1000, 3)
    if tally.first_error:
        out["first_error"] = tally.first_error
    return out


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.harness.loadgen", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="OpenAI base URL (…/v1)")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--duration", type=float, default=5.0, help="measured seconds")
    p.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds first")
    p.add_argument("--stream", action="store_true")
    p.add_argument("--model", default="fake-model")
    p.add_argument("--api-key")
    p.add_argument("--api", choices=APIS, default="chat", help="the route to drive")
    args = p.parse_args(argv)
    with asyncio.Runner(loop_factory=_new_loop) as runner:
        figures = runner.run(run_load(args.url, concurrency=args.concurrency,
                                      duration=args.duration, warmup=args.warmup,
                                      stream=args.stream, model=args.model,
                                      api_key=args.api_key, api=args.api))
    sys.stdout.write(json.dumps(figures) + "\n")


if __name__ == "__main__":
    main()

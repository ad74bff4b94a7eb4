"""Soak: does redraft's memory stay flat under sustained mixed load?

Starts the fake upstream (`--responder writer`, `--latency` seconds per call) and redraft on
its embedded defaults (SQLite, in-process caches, memory bank on with the bundled MiniLM),
each in its own process, then runs `--concurrency` clients back to back for `--duration`
seconds. Each request is, by `--mix`, a one-round loop (`loop`), a streamed request (`stream`,
alternately a streamed one-round loop and a streamed passthrough, usage chunk included) or a
plain passthrough (the rest); every loop query is new, so per-query state cannot hide in a
cache hit. It samples redraft's RSS and open file descriptors every `--sample-every` seconds
and prints one JSON line: requests by kind, errors by kind (`http_<status>`, `stream_error`
for an error event inside a 200 stream, or the transport exception's name), the samples, and
the RSS slope and growth over the last half of the run (a least-squares line, so one
collection or allocator hiccup does not decide it).

    python -m bench.soak --duration 600 --concurrency 64 --mix loop=0.25,stream=0.125
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

from bench.fakes.upstream import run_subprocess
from bench.harness.loop_server import redraft_process, wait_ready

TARGETS = {"errors": 0, "rss_growth_last_half_pct": 5.0}
ONE_ROUND = {"max_rounds": 1}
ADMIN_KEY = f"soak-admin-{uuid.uuid4().hex}"  # reads the bank's figures; user calls stay open
_TOPICS = ("a bike shop's spring update", "a library's new opening hours",
           "a bakery's gluten-free range", "a clinic's online booking",
           "a gym's winter classes", "a cinema's student discount",
           "a garden centre's plant swap", "a hotel's late check-out")


def log(message: str) -> None:
    print(f"[bench.soak] {message}", file=sys.stderr, flush=True)


def parse_mix(text: str) -> dict[str, float]:
    """`loop=0.25,stream=0.125` -> fractions; the remainder is plain passthrough."""
    mix = {"loop": 0.0, "stream": 0.0}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in mix:
            raise argparse.ArgumentTypeError(f"unknown kind {name!r} (loop, stream)")
        try:
            mix[name] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: {value!r} is not a number") from None
    if any(v < 0 for v in mix.values()) or sum(mix.values()) > 1:
        raise argparse.ArgumentTypeError("fractions must be >= 0 and sum to at most 1")
    return mix


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise OSError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def trend(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares (slope per second, growth % across the span) of (t, value) samples."""
    if len(samples) < 2:
        return 0.0, 0.0
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mv = sum(v for _, v in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    slope = sum((t - mt) * (v - mv) for t, v in samples) / var if var else 0.0
    t0, t1 = samples[0][0], samples[-1][0]
    start = mv + slope * (t0 - mt)
    return slope, (100.0 * slope * (t1 - t0) / start if start > 0 else 0.0)


class Soak:
    def __init__(self, http: aiohttp.ClientSession, base: str, mix: dict[str, float],
                 seed: int) -> None:
        self.http, self.url, self.mix = http, f"{base}/v1/chat/completions", mix
        self.rng = random.Random(seed)
        self.requests: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.first_errors: dict[str, str] = {}
        self.seq = 0
        self.loops = 0  # answered loops, streamed ones included

    def body(self) -> tuple[str, dict[str, Any]]:
        self.seq += 1
        roll = self.rng.random()
        kind = ("loop" if roll < self.mix["loop"] else
                "stream" if roll < self.mix["loop"] + self.mix["stream"] else "plain")
        topic = _TOPICS[self.seq % len(_TOPICS)]
        text = f"Write a short, friendly announcement of {topic} (notice {self.seq})."
        body: dict[str, Any] = {"model": "fake-model", "max_tokens": 200,
                                "messages": [{"role": "user", "content": text}]}
        looped = kind == "loop" or (kind == "stream" and self.seq % 2 == 0)
        body["reflection"] = ONE_ROUND if looped else {"enabled": False}
        if kind == "stream":
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        return kind, body

    def _error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        self.first_errors.setdefault(kind, detail[:300])

    async def one(self) -> None:
        kind, body = self.body()
        try:
            async with self.http.post(self.url, json=body) as resp:
                data = await resp.read()
                if resp.status != 200:
                    self._error(f"http_{resp.status}", data.decode(errors="replace"))
                elif kind == "stream" and (b'data: {"error"' in data
                                           or not data.rstrip().endswith(b"data: [DONE]")):
                    self._error("stream_error", data[-300:].decode(errors="replace"))
                elif kind != "stream" and b'"choices"' not in data:
                    self._error("bad_body", data.decode(errors="replace"))
                else:
                    self.requests[kind] += 1
                    self.loops += body["reflection"] is ONE_ROUND
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            self._error(type(exc).__name__, str(exc))
            await asyncio.sleep(0.05)  # a dead server must not become a busy loop


async def _sample(pid: int, stop: float, every: float, t0: float,
                  rss: list[tuple[float, float]], fds: list[tuple[float, int]]) -> None:
    while True:
        now = time.monotonic()
        with contextlib.suppress(OSError):
            rss.append((round(now - t0, 1), round(rss_mb(pid), 1)))
            fds.append((round(now - t0, 1), open_fds(pid)))
        if now >= stop:
            return
        await asyncio.sleep(min(every, max(stop - now, 0.0)))


async def soak(base: str, proc: subprocess.Popen, args: argparse.Namespace
               ) -> dict[str, Any]:
    pid = proc.pid
    timeout = aiohttp.ClientTimeout(total=args.request_timeout)
    connector = aiohttp.TCPConnector(limit=args.concurrency)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as http:
        await wait_ready(http, base, proc, seconds=120, path="/ready")
        warm = Soak(http, base, parse_mix("loop=0.5,stream=0.5"), seed=args.seed + 1)
        await asyncio.gather(*(warm.one() for _ in range(min(args.concurrency, 16))))
        # Unmeasured warm-up at full load: caches, allocator arenas and the remembering
        # backlog settle before the samples whose trend is judged (its errors still count).
        warmup = Soak(http, base, args.mix, seed=args.seed + 2)
        warm_stop = time.monotonic() + args.warmup

        async def warm_client() -> None:
            while time.monotonic() < warm_stop:
                await warmup.one()

        await asyncio.gather(*(warm_client() for _ in range(args.concurrency)))
        run = Soak(http, base, args.mix, seed=args.seed)
        skipped0, learned0 = await _remember_skipped(http, base), await _remembered(http, base)
        rss: list[tuple[float, float]] = []
        fds: list[tuple[float, int]] = []
        t0 = time.monotonic()
        stop = t0 + args.duration

        async def client() -> None:
            while time.monotonic() < stop:
                await run.one()

        load0 = os.getloadavg()[0]
        sampler = asyncio.ensure_future(_sample(pid, stop, args.sample_every, t0, rss, fds))
        await asyncio.gather(*(client() for _ in range(args.concurrency)))
        await sampler
        wall = time.monotonic() - t0
        shed = await _remember_skipped(http, base)
        learned = await _remembered(http, base)
        drained = await _drained(http, base, args.drain)
        stored, folded = await _bank_counts(http, base) or (None, None)
    half = [s for s in rss if s[0] >= args.duration / 2]
    slope, growth = trend(half)
    fd_values = [v for _, v in fds]
    fd_slope, _ = trend([(t, float(v)) for t, v in fds if t >= args.duration / 2])
    total = sum(run.requests.values())
    out: dict[str, Any] = {
        "bench": "soak", "duration_s": args.duration, "concurrency": args.concurrency,
        "mix": args.mix, "upstream_latency_s": args.latency,
        "requests": total, "requests_by_kind": dict(run.requests),
        "rps": round(total / wall, 1), "errors": sum((run.errors + warmup.errors).values()),
        "errors_by_kind": dict(run.errors + warmup.errors),
        "first_errors": run.first_errors or warmup.first_errors,
        "warmup_s": args.warmup, "warmup_requests": sum(warmup.requests.values()),
        "rss_mb": rss, "rss_mb_first": rss[0][1] if rss else None,
        "rss_mb_last": rss[-1][1] if rss else None,
        "rss_slope_mb_per_min_last_half": round(slope * 60, 3),
        "rss_growth_last_half_pct": round(growth, 2),
        "open_fds": fds, "open_fds_min": min(fd_values, default=None),
        "open_fds_max": max(fd_values, default=None),
        "open_fds_slope_per_min_last_half": round(fd_slope * 60, 2),
        "loops": run.loops, "remember_skipped": _minus(shed, skipped0),
        "remember_skipped_share": _share(_minus(shed, skipped0), run.loops),
        # loops remembered during the run: new experiences plus near duplicates folded in
        "remembered": _minus(learned, learned0),
        "remembered_per_s": _rate(_minus(learned, learned0), wall),
        "remembered_after_drain": _minus(drained, learned0), "drain_s": args.drain,
        "experiences_stored": stored, "duplicates_folded": folded,
        "cpus": os.cpu_count(), "loadavg_start": round(load0, 2),
        "loadavg_end": round(os.getloadavg()[0], 2), "targets": TARGETS,
    }
    out["met"] = {"errors": out["errors"] == TARGETS["errors"],
                  "rss_growth_last_half_pct": growth < TARGETS["rss_growth_last_half_pct"]}
    return out


async def _remember_skipped(http: aiohttp.ClientSession, base: str) -> int | None:
    """Loops answered but not remembered because remembering was at its cap (/metrics)."""
    try:
        async with http.get(f"{base}/metrics") as resp:
            text = await resp.text()
    except aiohttp.ClientError:
        return None
    for line in text.splitlines():
        if line.startswith('redraft_errors_total{type="remember_skipped"}'):
            return int(float(line.split()[-1]))
    return 0


async def _remembered(http: aiohttp.ClientSession, base: str) -> int | None:
    """Loops remembered so far: experiences stored plus near duplicates folded into them."""
    counts = await _bank_counts(http, base)
    return None if counts is None else sum(counts)


async def _bank_counts(http: aiohttp.ClientSession, base: str) -> tuple[int, int] | None:
    """(experiences stored, near duplicates folded into them), from the admin export."""
    try:
        async with http.get(f"{base}/admin/memories/export",
                            headers={"Authorization": f"Bearer {ADMIN_KEY}"}) as resp:
            if resp.status != 200:
                return None
            lines = (await resp.read()).splitlines()
    except aiohttp.ClientError:
        return None
    rows = [json.loads(line) for line in lines if line.strip()]
    return len(rows), sum(int(r.get("merged_count", 0)) for r in rows)


async def _drained(http: aiohttp.ClientSession, base: str, seconds: float) -> int | None:
    """Loops remembered once the backlog is done (no change for 2 s) or `seconds` passed."""
    deadline, last = time.monotonic() + seconds, await _remembered(http, base)
    while time.monotonic() < deadline:
        await asyncio.sleep(2.0)
        now = await _remembered(http, base)
        if now == last:
            break
        last = now
    return last


def _minus(after: int | None, before: int | None) -> int | None:
    return None if after is None or before is None else after - before


def _share(part: int | None, whole: int) -> float | None:
    return None if part is None or not whole else round(part / whole, 3)


def _rate(count: int | None, seconds: float) -> float | None:
    return None if count is None else round(count / seconds, 2)


def run(args: argparse.Namespace) -> dict[str, Any]:
    fake_args = ["--draft-score", "0.5", "--score-step", "0.2"]
    with run_subprocess(latency=args.latency, responder="writer", args=fake_args) as fake, \
            tempfile.TemporaryDirectory(prefix="redraft-soak-") as data_dir, \
            redraft_process(fake.base_url, data_dir, args.server_cmd,
                            {"REDRAFT_ADMIN_KEY": ADMIN_KEY, "REDRAFT_BACKEND": "openai",
                             **dict(e.split("=", 1) for e in args.env)},
                            log_path=args.log, inherit_settings=False) as (base, proc):
        log(f"redraft pid {proc.pid} at {base}; fake upstream pid {fake.proc.pid}; "
            f"{args.concurrency} clients for {args.duration:g} s")
        try:
            return asyncio.run(asyncio.wait_for(soak(base, proc, args),
                                                args.warmup + args.duration + 300))
        finally:
            if proc.poll() is not None:
                log("redraft died: " + Path(args.log or Path(data_dir) / "redraft.log"
                                            ).read_text()[-2000:])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=600.0, help="measured seconds")
    p.add_argument("--warmup", type=float, default=0.0,
                   help="unmeasured seconds of the same load first (RSS settles in ~1 min)")
    p.add_argument("--concurrency", type=int, default=64, help="clients, each back to back")
    p.add_argument("--mix", type=parse_mix, default=parse_mix("loop=0.25,stream=0.125"),
                   help="fractions of loop and streamed requests; the rest is passthrough")
    p.add_argument("--latency", type=float, default=0.02, help="upstream seconds per call")
    p.add_argument("--sample-every", type=float, default=5.0, help="RSS/fd sampling period")
    p.add_argument("--request-timeout", type=float, default=120.0)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--drain", type=float, default=30.0,
                   help="at most this many seconds after the run for remembering to finish")
    p.add_argument("--server-cmd", default="",
                   help="command that replaces `python -m app` (e.g. under tracemalloc)")
    p.add_argument("--log", help="keep redraft's log (stderr) in this file")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="extra environment for redraft (repeatable), "
                        "e.g. REDRAFT_MEMORY_ENABLED=false")
    args = p.parse_args(argv)
    if any("=" not in e for e in args.env):
        p.error("--env takes NAME=VALUE")
    if args.duration <= 0 or args.concurrency < 1 or args.warmup < 0:
        p.error("--duration must be > 0, --warmup >= 0 and --concurrency >= 1")
    try:
        result = run(args)
    except RuntimeError as exc:
        log(f"failed: {exc}")
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

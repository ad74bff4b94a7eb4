"""The loop against real llama.cpp servers: for each server (llama-cpp-python's, llama.cpp's own
`llama-server`) and each model, start the server, let redraft's start-up probe choose the
structured-output form, run N reflection loops on short requests, and measure whether the
structured calls decode as fast as plain ones on the same server. One JSON line.

    python -m bench.peers --llama-cpp-python ~/.cache/redraft-dev/llama-venv/bin/python \\
        --llama-server ~/.cache/redraft-dev/llamacpp/.../build/bin/llama-server \\
        --model smollm2=/path/smollm2.gguf --model qwen1.5b=/path/qwen.gguf --loops 10

Per pair: the probe's choice and what it saw per form, loops run and degraded (with their
causes), hidden calls and tokens per loop, and the decoding rate of structured against plain
calls: three structured calls the loops made are streamed again as redraft sends them and
without any schema (same messages, same max_tokens, temperature 0), and the rate is the tokens
after the first over the seconds after the first (prompt processing left out). The requests
are the short instruction-following ones of `bench.checks_pass`. `--force-failure` adds one
loop whose judge times out after a second, to show what a degraded loop reports.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.checks_extraction import load
from bench.checks_pass import DATA
from generation.openai import OpenAIBackend
from generation.openai.dialects import loosen, shape
from generation.supervisor import stop_process
from generation.types import ChatParams
from loops.checklists import ChecklistProvider
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from rubrics.cache import MemoryChecklistCache
from rubrics.packs import PackLibrary
from store import Store

STREAMED = 3  # structured calls replayed per pair, with and without the schema


class Recording:
    """A backend wrapper that keeps every structured call (messages, params, schema)."""

    def __init__(self, inner: OpenAIBackend) -> None:
        self.inner = inner
        self.structured: list[tuple[list, ChatParams, dict]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def chat(self, messages, params, schema=None):  # type: ignore[no-untyped-def]
        if schema is not None:
            self.structured.append((list(messages), params, schema))
        return await self.inner.chat(messages, params, schema=schema)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command(kind: str, program: str, gguf: str, alias: str, port: int, threads: int,
                   context: int) -> list[str]:
    if kind == "llama-cpp-python":
        return [program, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", alias,
                "--n_ctx", str(context), "--n_threads", str(threads), "--host", "127.0.0.1",
                "--port", str(port)]
    return [program, "-m", gguf, "--alias", alias, "-c", str(context), "-t", str(threads),
            "--host", "127.0.0.1", "--port", str(port), "--parallel", "1"]


def start_server(command: list[str]) -> subprocess.Popen[bytes]:
    """The server, its output in a temporary log file (kept when it fails to come up)."""
    log = tempfile.NamedTemporaryFile("w+b", suffix=".log", delete=False)
    print(f"starting {' '.join(command)} (log {log.name})", file=sys.stderr, flush=True)
    return subprocess.Popen(command, stdout=log, stderr=log)


async def wait_ready(url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            try:
                async with session.get(url + "/models",
                                       timeout=aiohttp.ClientTimeout(total=5)) as resp:
                    if resp.status == 200:
                        return
            except (aiohttp.ClientError, TimeoutError):
                pass
            await asyncio.sleep(1)
    raise TimeoutError(f"{url} did not come up in {seconds:g} s")


async def stream_rate(url: str, body: dict[str, Any]) -> tuple[int, float]:
    """(tokens, tokens per second after the first) of one streamed completion."""
    body = {**body, "stream": True}
    first = last = None
    count = 0
    async with aiohttp.ClientSession() as session, session.post(
            url + "/chat/completions", json=body,
            timeout=aiohttp.ClientTimeout(total=1200)) as resp:
        resp.raise_for_status()
        async for raw in resp.content:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            try:
                chunk = json.loads(line[5:])
            except ValueError:
                continue
            delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
            if delta.get("content"):
                count += 1
                last = time.monotonic()
                first = first or last
    if count < 2 or first is None or last is None or last <= first:
        return count, 0.0
    return count, (count - 1) / (last - first)


async def decode_rates(url: str, backend: OpenAIBackend,
                       calls: list[tuple[list, ChatParams, dict]]) -> dict[str, Any]:
    """Structured calls streamed as redraft sends them, and plain (no schema)."""
    spoken = backend._dialect  # the form the probe chose (None: undecided, sent as json_schema)
    rows = []
    for messages, params, schema in calls[:STREAMED]:
        base = {"model": backend.model, "messages": messages, "temperature": 0,
                "max_tokens": params.max_tokens or 512}
        constrained = dict(base)
        if spoken is not None:
            shape(constrained, spoken.form, loosen(schema, spoken.rules))
        n_s, rate_s = await stream_rate(url, constrained)
        n_p, rate_p = await stream_rate(url, base)
        rows.append({"structured_tokens": n_s, "structured_tps": round(rate_s, 2),
                     "plain_tokens": n_p, "plain_tps": round(rate_p, 2)})
    structured = statistics.median(r["structured_tps"] for r in rows) if rows else None
    plain = statistics.median(r["plain_tps"] for r in rows) if rows else None
    return {"calls": rows, "structured_tps": structured, "plain_tps": plain,
            "ratio": round(structured / plain, 3) if structured and plain else None}


async def run_pair(kind: str, program: str, alias: str, gguf: str,
                   args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    proc = start_server(server_command(kind, program, gguf, alias, port, args.threads,
                                       args.context))
    started = time.monotonic()
    try:
        await wait_ready(url, 600)
        inner = OpenAIBackend([url], model=alias, structured="auto", timeout=args.timeout,
                              structured_probe_timeout=300)
        await inner.start()
        backend = Recording(inner)
        status = inner.structured_status()
        params = ChatParams(model=alias, temperature=0.0, max_tokens=args.max_tokens)
        judge = ChatParams(model=alias, temperature=0.0, max_tokens=args.judge_max_tokens)
        rows = await _loops(backend, params, judge, args)
        if args.force_failure:
            rows.append(await _forced_failure(url, alias, params, judge, args))
        rates = await decode_rates(url, inner, backend.structured)
        await inner.aclose()
    finally:
        stop_process(proc, timeout=30)
    loops = [r for r in rows if not r.get("forced")]
    return {"server": kind, "model": alias, "probe": status.get("probe"),
            "chosen": (status.get("dialect") or {}).get("form"),
            "loops": len(loops), "degraded": sum(bool(r["degradations"]) for r in loops),
            "stopped_degraded": sum(r["stop"] == "degraded" for r in loops),
            "causes": [r["degradations"] for r in rows if r["degradations"]],
            "calls": round(statistics.mean(r["calls"] for r in loops), 2),
            "tokens": round(statistics.mean(r["tokens"] for r in loops), 1),
            "seconds": round(statistics.mean(r["seconds"] for r in loops), 1),
            "decode": rates, "wall_seconds": round(time.monotonic() - started, 1)}


async def _loops(backend: Any, params: ChatParams, judge: ChatParams,
                 args: argparse.Namespace) -> list[dict[str, Any]]:
    requests = [r for r in load(args.data) if r["checks"]][:args.loops]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        try:
            provider = ChecklistProvider(backend, judge, PackLibrary(), MemoryChecklistCache(),
                                         store.checklists, retries=1)
            loop = ReflectionLoop(backend, backend, provider, judge_params=judge, retries=1)
            options = LoopOptions(max_rounds=args.max_rounds, memory=False,
                                  checklist_mode=args.checklist_mode)
            for item in requests:
                rows.append(await _one(loop, item["query"], params, options))
                print(json.dumps({"request": item["id"], **rows[-1]}), file=sys.stderr,
                      flush=True)
        finally:
            await store.close()
    return rows


async def _one(loop: ReflectionLoop, query: str, params: ChatParams,
               options: LoopOptions) -> dict[str, Any]:
    began = time.monotonic()
    trace = await loop.run([{"role": "user", "content": query}], params, options,
                           namespace="bench")
    return {"stop": trace.stop_reason, "calls": trace.ledger.total_calls,
            "tokens": trace.ledger.total.total_tokens,
            "seconds": round(time.monotonic() - began, 1),
            "degradations": [d.as_dict() for d in trace.degradations]}


async def _forced_failure(url: str, alias: str, params: ChatParams, judge: ChatParams,
                          args: argparse.Namespace) -> dict[str, Any]:
    """One loop whose judge gives up after a second: what a degraded loop reports."""
    writer = OpenAIBackend([url], model=alias, structured="auto", timeout=args.timeout)
    impatient = OpenAIBackend([url], model=alias, structured="auto", timeout=1.0, retries=0)
    await writer.start()
    await impatient.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = await Store.open(f"sqlite+aiosqlite:///{Path(tmp) / 'forced.db'}")
            try:
                provider = ChecklistProvider(impatient, judge, PackLibrary(),
                                             MemoryChecklistCache(), store.checklists,
                                             retries=0)
                loop = ReflectionLoop(writer, impatient, provider, judge_params=judge,
                                      retries=0)
                options = LoopOptions(max_rounds=1, memory=False,
                                      checklist_mode=args.checklist_mode)
                row = await _one(loop, "Write a haiku about rain in all lowercase letters.",
                                 params, options)
            finally:
                await store.close()
    finally:
        await writer.aclose()
        await impatient.aclose()
    print(json.dumps({"forced_failure": row}), file=sys.stderr, flush=True)
    return {**row, "forced": True}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    servers = [(k, p) for k, p in (("llama-cpp-python", args.llama_cpp_python),
                                   ("llama-server", args.llama_server)) if p]
    pairs = []
    for alias, gguf in (m.split("=", 1) for m in args.model):
        for kind, program in servers:
            pairs.append(await run_pair(kind, program, alias, gguf, args))
    return {"bench": "peers", "loops_per_pair": args.loops, "max_tokens": args.max_tokens,
            "judge_max_tokens": args.judge_max_tokens, "max_rounds": args.max_rounds,
            "checklist_mode": args.checklist_mode, "threads": args.threads, "pairs": pairs}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-cpp-python", help="python of a venv with llama_cpp.server")
    parser.add_argument("--llama-server", help="llama.cpp's llama-server executable")
    parser.add_argument("--model", action="append", default=[], metavar="ALIAS=GGUF")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--loops", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--judge-max-tokens", type=int, default=512)
    parser.add_argument("--max-rounds", type=int, default=1)
    parser.add_argument("--checklist-mode", default="fused", choices=("three_agent", "fused"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--timeout", type=float, default=900.0, help="per upstream call")
    parser.add_argument("--force-failure", action="store_true")
    args = parser.parse_args(argv)
    if not args.model or not (args.llama_cpp_python or args.llama_server):
        parser.exit(2, "bench.peers: give --model ALIAS=GGUF and at least one server\n")
    if any("=" not in m for m in args.model):
        parser.exit(2, "bench.peers: --model takes ALIAS=GGUF\n")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()

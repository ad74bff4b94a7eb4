"""The parts of the loop benchmarks that talk to the processes: redraft serving on a free
port, and a client that runs loops through its API and reads the fake upstream's counters."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp

from bench.fakes.upstream import FakeProcess
from generation.supervisor import stop_process

REPO = Path(__file__).resolve().parents[2]
_CHAT = ("/v1/chat/completions", "/chat/completions")


def log(message: str) -> None:
    print(f"[bench.loop] {message}", file=sys.stderr, flush=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def redraft_process(upstream: str, data_dir: str, command: str = "",
                    env: dict[str, str] | None = None, *, log_path: str | Path | None = None,
                    inherit_settings: bool = True) -> Iterator[tuple[str, subprocess.Popen]]:
    """redraft serving on a free port, its stderr in `log_path` (default: the data dir);
    yields (base URL, process). `command` replaces `python -m app` (e.g. to run the server
    under a profiler); `inherit_settings=False` drops the caller's REDRAFT_* variables."""
    port = _free_port()
    argv = shlex.split(command) if command else [sys.executable, "-m", "app"]
    base_env = {k: v for k, v in os.environ.items()
                if inherit_settings or not k.startswith("REDRAFT_")}
    full_env = {**base_env, "REDRAFT_UPSTREAM_URL": upstream, "REDRAFT_DATA_DIR": data_dir,
                "REDRAFT_LOG_LEVEL": "WARNING", "REDRAFT_MODEL": "fake-model",
                # a fake judge or writer would pass or fail a probe by its script, not its skill
                "REDRAFT_REFLECTION_JUDGE_PROBE": "false",
                "REDRAFT_REFLECTION_REVISER_PROBE": "false", **(env or {})}
    with open(log_path or Path(data_dir) / "redraft.log", "wb") as errors:
        proc = subprocess.Popen([*argv, "serve", "--port", str(port)],
                                cwd=REPO, env=full_env, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            yield f"http://127.0.0.1:{port}", proc
        finally:
            stop_process(proc, timeout=30)


async def wait_ready(http: aiohttp.ClientSession, base: str, proc: subprocess.Popen,
                     seconds: float = 60, path: str = "/health") -> None:
    """Until `path` answers 200; fails early when the server exits."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redraft exited with {proc.returncode} (see its redraft.log)")
        with contextlib.suppress(aiohttp.ClientError):
            async with http.get(f"{base}{path}") as resp:
                if resp.status == 200:
                    return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"redraft did not answer {path} in time")


class Bench:
    def __init__(self, http: aiohttp.ClientSession, base: str, fake: FakeProcess,
                 pid: int) -> None:
        self.http, self.base, self.fake, self.pid = http, base, fake, pid
        self.fake_root = fake.base_url.removesuffix("/v1")
        self.run_id = uuid.uuid4().hex[:8]
        self.seq = 0

    def query(self) -> str:
        """A query no earlier loop has seen, so its checklist is generated (cold)."""
        self.seq += 1
        return (f"Write a short announcement of the spring update (edition {self.run_id}-"
                f"{self.seq}) for the customers of a small bike shop, in a friendly tone.")

    async def control(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        async with self.http.post(f"{self.fake_root}/_fake/{path}", json=payload or {}) as resp:
            return await resp.json()

    async def stats(self) -> tuple[int, dict[str, int]]:
        async with self.http.get(f"{self.fake_root}/_fake/stats") as resp:
            data = await resp.json()
        return (sum(data["requests"].get(p, 0) for p in _CHAT),
                data.get("calls_by_kind") or {})

    async def latency(self, seconds: float) -> None:
        await self.control("config", {"latency": seconds})

    async def loop(self, query: str, reflection: dict[str, Any] | None = None,
                   ) -> tuple[float, dict[str, Any]]:
        body: dict[str, Any] = {"model": "fake-model",
                                "messages": [{"role": "user", "content": query}]}
        if reflection is not None:
            body["reflection"] = reflection
        t0 = time.perf_counter()
        async with self.http.post(f"{self.base}/v1/chat/completions", json=body) as resp:
            data = await resp.json()
            if resp.status != 200:
                raise RuntimeError(f"redraft answered {resp.status}: {data}")
        return time.perf_counter() - t0, data

    async def counted(self, query: str, reflection: dict[str, Any]) -> dict[str, Any]:
        """One loop alone: its time, the upstream calls it made, and what they were."""
        before, kinds0 = await self.stats()
        seconds, data = await self.loop(query, reflection)
        after, kinds1 = await self.stats()
        info = data.get("reflection") or {}
        recalled = (info.get("trace") or {}).get("experiences") or {}
        return {"seconds": seconds, "calls": after - before, "rounds": info.get("rounds"),
                "selected": len(recalled.get("selected") or ()),
                "stop_reason": info.get("stop_reason"), "source": info.get("checklist_source"),
                "kinds": {k: v - kinds0.get(k, 0) for k, v in kinds1.items()
                          if v - kinds0.get(k, 0)}}

    def cpu_seconds(self, pid: int | None = None) -> float:
        """A process's user + system CPU time so far (redraft's by default)."""
        stat = Path(f"/proc/{pid or self.pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

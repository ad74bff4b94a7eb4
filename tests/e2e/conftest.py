"""End-to-end fixtures: the fake upstream and redraft, each in its own subprocess.

Processes are session-scoped (starting one costs about a second) and always terminated in
teardown. A test that injects faults takes the function-scoped `fake`, which clears the
faults and counters left by the test before it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI

from generation.supervisor import stop_process

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "e2e-user-key"
OTHER_KEY = "e2e-other-key"
ADMIN_KEY = "e2e-admin-key"
THIRD_KEY = "e2e-third-key"  # only the limited server knows it
MODEL = "fake-model"
MAX_BODY_BYTES = 64 * 1024
UPSTREAM_RETRIES = 2
UPSTREAM_TIMEOUT = 10.0

# The fake keeps the last chat bodies it received but has no route to read them; this
# launcher adds a read-only `GET /_fake/bodies` and otherwise runs the fake's own main().
_LAUNCHER = """
import sys
import orjson
import bench.fakes.upstream as fake

class Recording(fake.FakeUpstream):
    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/_fake/bodies":
            data = orjson.dumps(list(self.bodies))
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": data})
            return
        await super().__call__(scope, receive, send)

fake.FakeUpstream = Recording
fake.main(sys.argv[1:])
"""


class Fake:
    """The fake OpenAI upstream in a subprocess, driven over its `/_fake/...` control routes."""

    def __init__(self, *args: str) -> None:
        cmd = [sys.executable, "-c", _LAUNCHER, "--host", "127.0.0.1", "--port", "0",
               "--log-level", "critical", *args]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            raise RuntimeError(f"fake upstream exited with {self.proc.wait()}")
        self.root = f"http://127.0.0.1:{json.loads(line)['port']}"
        self.base_url = self.root + "/v1"
        self.http = httpx.Client(base_url=self.root + "/_fake", timeout=5)

    def control(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        if payload is None and path in ("stats", "bodies"):
            resp = self.http.get("/" + path)
        else:
            resp = self.http.post("/" + path, json=payload or {})
        resp.raise_for_status()
        return resp.json()

    def reset(self) -> None:
        # A request an earlier test left behind (a 504 redraft gave up on, a dropped stream)
        # would otherwise end after the reset and take the in-flight count below zero.
        self.wait_for(lambda s: s["in_flight"] <= 0, seconds=10)
        self.control("reset")
        self.control("config", {"latency": 0, "chunk_delay": 0})

    def fail(self, status: int, times: int = 1, **kw: Any) -> None:
        self.control("faults", {"kind": "fail", "status": status, "times": times, **kw})

    def hang(self, times: int = 1) -> None:
        self.control("faults", {"kind": "hang", "times": times})

    def drop(self, times: int = 1, after_chunks: int = 2) -> None:
        self.control("faults", {"kind": "drop", "times": times, "after_chunks": after_chunks})

    def stats(self) -> dict[str, Any]:
        return self.control("stats")

    def bodies(self) -> list[dict[str, Any]]:
        return self.control("bodies")

    def chat_requests(self) -> int:
        requests = self.stats()["requests"]
        return requests.get("/v1/chat/completions", 0) + requests.get("/chat/completions", 0)

    def wait_for(self, predicate: Any, seconds: float = 5.0) -> dict[str, Any]:
        """Poll the stats until `predicate(stats)` holds; the last stats either way."""
        deadline = time.monotonic() + seconds
        while True:
            stats = self.stats()
            if predicate(stats) or time.monotonic() > deadline:
                return stats
            time.sleep(0.02)

    def close(self) -> None:
        self.http.close()
        stop_process(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`python -m app serve` in a subprocess with its own data dir and `REDRAFT_*` settings."""

    def __init__(self, upstream: Fake, data_dir: Path, **settings: str) -> None:
        self.port = _free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDRAFT_")}
        env.update({
            "REDRAFT_UPSTREAM_URL": upstream.base_url,
            "REDRAFT_DATA_DIR": str(data_dir),
            "REDRAFT_MODEL": MODEL,
            "REDRAFT_API_KEYS": f"{API_KEY},other:{OTHER_KEY}",  # two namespaces
            "REDRAFT_ADMIN_KEY": ADMIN_KEY,
            "REDRAFT_LOG_LEVEL": "WARNING",
            "REDRAFT_SERVER_GRACEFUL_TIMEOUT": "1",
            "REDRAFT_SERVER_MAX_BODY_BYTES": str(MAX_BODY_BYTES),
            "REDRAFT_UPSTREAM_RETRIES": str(UPSTREAM_RETRIES),
            "REDRAFT_UPSTREAM_BACKOFF": "0.01",
            "REDRAFT_UPSTREAM_TIMEOUT": str(UPSTREAM_TIMEOUT),
            # a fake judge's and writer's replies are the tests' own: no probe takes them first
            "REDRAFT_REFLECTION_JUDGE_PROBE": "false",
            "REDRAFT_REFLECTION_REVISER_PROBE": "false",
            # the judged loop's wiring is what these tests are about: no budget relative to a
            # fake's one-line, millisecond draft stops it before its first judgement (that
            # forecast is tested in tests/unit/test_loops_auto.py)
            "REDRAFT_REFLECTION_TOKEN_BUDGET_RATIO": "0",
            "REDRAFT_REFLECTION_TIME_BUDGET_RATIO": "0",
        })
        env.update({f"REDRAFT_{k.upper()}": v for k, v in settings.items()})
        self.log = data_dir / "server.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        self._wait_healthy()

    def _wait_healthy(self, seconds: float = 90.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if httpx.get(self.root + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        tail = self.log.read_text(errors="replace")[-3000:]
        stop_process(self.proc)
        raise RuntimeError(f"redraft did not become healthy; log:\n{tail}")

    def client(self, api_key: str = API_KEY, **kw: Any) -> OpenAI:
        kw.setdefault("timeout", 20)
        return OpenAI(base_url=self.base_url, api_key=api_key, max_retries=0, **kw)

    def close(self) -> None:
        stop_process(self.proc)


def sse_lines(server: Server, body: dict[str, Any], api_key: str = API_KEY) -> list[str]:
    """POST a streamed chat request with plain httpx; every non-empty line of the response."""
    headers = {"Authorization": f"Bearer {api_key}"}
    with httpx.stream("POST", server.base_url + "/chat/completions", json=body,
                      headers=headers, timeout=30) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("text/event-stream")
        return [line for line in resp.iter_lines() if line]


def data_events(lines: list[str]) -> list[Any]:
    """The `data:` payloads of SSE lines, decoded (the final `[DONE]` kept as a string)."""
    out: list[Any] = []
    for line in lines:
        if line.startswith("data: "):
            payload = line.removeprefix("data: ")
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


# -- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def fake_process() -> Iterator[Fake]:
    fake = Fake()
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def fake(fake_process: Fake) -> Fake:
    """The shared plain fake, with faults and counters cleared."""
    fake_process.reset()
    return fake_process


@pytest.fixture(scope="session")
def passthrough(fake_process: Fake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """redraft with the loop off: requests go straight to the fake."""
    server = Server(fake_process, tmp_path_factory.mktemp("passthrough"),
                    reflection_enabled="false")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def limited(fake_process: Fake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """redraft with tiny per-key limits (2 requests a minute, 1 in flight), 1 s upstream timeout."""
    server = Server(fake_process, tmp_path_factory.mktemp("limited"),
                    reflection_enabled="false", api_rate_limit="2", api_concurrency="1",
                    upstream_timeout="1", api_keys=f"{API_KEY},{OTHER_KEY},{THIRD_KEY}")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def client(passthrough: Server) -> Iterator[OpenAI]:
    with passthrough.client() as c:
        yield c


@pytest.fixture(scope="session")
def writer_process() -> Iterator[Fake]:
    """A fake whose `writer` responder answers the loop's hidden calls like a competent model."""
    fake = Fake("--responder", "writer")
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def writer(writer_process: Fake) -> Fake:
    writer_process.reset()
    return writer_process


@pytest.fixture(scope="session")
def looping(writer_process: Fake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """redraft with the reflection loop on (server defaults) in front of the writer fake.

    The memory bank is off here: these tests check Algorithm 1's shapes, which experiences
    left by earlier tests would change. tests/e2e/test_e2e_memory.py has its own server."""
    server = Server(writer_process, tmp_path_factory.mktemp("looping"), memory_enabled="false")
    try:
        yield server
    finally:
        server.close()

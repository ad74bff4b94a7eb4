"""`redraft serve` on SmolLM2 in a subprocess, for the real-model trainer tests: it records the
loops the trainer learns from (reflection on) and is the judge of GSPO's checklist reward
(its structured calls ask for JSON, which the server passes straight to the model).

One torch thread (the trainer in the test process gets the other core) and a small token cap
on every call the loop makes, so a loop costs seconds on a CPU.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from generation.supervisor import stop_process

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedraftOnModel:
    """`python -m app serve` on the local backend with `model_dir`, its data (SQLite loops) in
    `data_dir`; `call_tokens` caps every generation the loop makes (its judge and agents)."""

    def __init__(self, model_dir: Path, data_dir: Path, *, call_tokens: int,
                 startup_seconds: float = 180.0) -> None:
        self.port = _free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        self.data_dir = data_dir
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDRAFT_")}
        env.update({
            "REDRAFT_MODEL": str(model_dir),
            "REDRAFT_BACKEND": "local",
            "REDRAFT_DATA_DIR": str(data_dir),
            "REDRAFT_LOCAL_DEVICE": "cpu",
            "REDRAFT_LOCAL_THREADS": "1",
            "REDRAFT_LOCAL_MAX_NEW_TOKENS": str(call_tokens),
            "REDRAFT_JUDGE_MAX_TOKENS": str(call_tokens),
            "REDRAFT_MEMORY_ENABLED": "false",
            "REDRAFT_LOG_LEVEL": "WARNING",
            "REDRAFT_SERVER_GRACEFUL_TIMEOUT": "1",
        })
        self.log = data_dir / "server.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.http = httpx.Client(base_url=self.root, timeout=600)
        try:
            self._wait_ready(startup_seconds)
            (self.model,) = [m["id"] for m in self.http.get("/v1/models").json()["data"]]
        except BaseException:
            self.close()
            raise

    def _wait_ready(self, seconds: float) -> None:
        """Until /ready answers 200 (the model is loaded); fails early when the server exits."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if self.http.get("/ready", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"redraft on the real model did not become ready; log:\n"
                           f"{self.log.read_text(errors='replace')[-3000:]}")

    def chat(self, prompt: str, **extra: Any) -> dict[str, Any]:
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], **extra}
        r = self.http.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        return r.json()

    @property
    def database_url(self) -> str:
        return f"sqlite+aiosqlite:///{self.data_dir / 'redraft.db'}"

    def close(self) -> None:
        self.http.close()
        stop_process(self.proc, timeout=15)

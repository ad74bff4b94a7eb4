"""`redraft serve` on one model, in a subprocess, as a user runs it: the flywheel records its
loops through it and evaluates each model through it. The trainer never imports `app`; it
starts the server's command line and speaks to it over HTTP.

The server runs the local backend on the model folder with its own data directory (its SQLite
store of loops, its log), memory off (a fresh bank recalls nothing in a run of this size and
would add an embedding model), no loop time budget (a loop ends by its rounds, not by a slow
machine), and the fused checklist agent for the requests whose checks it cannot read (the
loop then falls back to the judge; one agent call instead of three).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from llm.local.model import ModelLoadError
from llm.local.source import cached_folder, locate
from training.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 600.0
LOG = "server.log"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def model_folder(model: str | None, cache: Path) -> Path:
    """The Hugging Face folder of `--model`: a folder as it is; a .gguf file, or the embedded
    default when none is given, converted once into `cache` (as the server converts it)."""
    from llm.local.source import DEFAULT_MODEL

    if model is not None and not Path(model).expanduser().exists():
        raise UsageError(f"--model {model}: no such folder or .gguf file")
    try:
        source = locate(model or DEFAULT_MODEL)
    except ModelLoadError as exc:
        raise UsageError(f"--model: {exc}") from None
    if source.kind == "folder":
        return Path(source.location).resolve()
    try:
        return cached_folder(Path(source.location), cache).resolve()
    except ModelLoadError as exc:
        raise UsageError(f"--model: {exc}") from None


class Server:
    """`python -m app serve` on `model` with `data_dir`; a context manager that waits for
    /ready on entry and stops the process on exit. `base_url` ends in /v1."""

    def __init__(self, model: Path, data_dir: Path, *, concurrency: int = 1, threads: int = 1,
                 device: str = "auto", max_tokens: int = 1024, judge_max_tokens: int = 256,
                 ready_seconds: float = READY_SECONDS) -> None:
        self.model_path = model
        self.data_dir = data_dir
        self.ready_seconds = ready_seconds
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        self.log = data_dir / LOG
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("REDRAFT_")}
        self.env.update({
            "REDRAFT_MODEL": str(model), "REDRAFT_BACKEND": "local",
            "REDRAFT_DATA_DIR": str(data_dir), "REDRAFT_LOCAL_DEVICE": device,
            "REDRAFT_LOCAL_CONCURRENCY": str(concurrency),
            "REDRAFT_LOCAL_MAX_NEW_TOKENS": str(max_tokens),
            "REDRAFT_JUDGE_MAX_TOKENS": str(judge_max_tokens),
            "REDRAFT_MEMORY_ENABLED": "false", "REDRAFT_REFLECTION_TIME_BUDGET": "0",
            "REDRAFT_REFLECTION_CHECKLIST_MODE": "fused", "REDRAFT_LOG_LEVEL": "WARNING",
            "REDRAFT_SERVER_GRACEFUL_TIMEOUT": "1",
        })
        if threads:
            self.env["REDRAFT_LOCAL_THREADS"] = str(threads)
        self.proc: subprocess.Popen[bytes] | None = None
        self.model = ""

    @property
    def database_url(self) -> str:
        return f"sqlite+aiosqlite:///{self.data_dir / 'redraft.db'}"

    def __enter__(self) -> Server:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port)],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        try:
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _wait_ready(self) -> None:
        """Until /ready answers 200 (the model is loaded); fails at once if the server exits."""
        deadline = time.monotonic() + self.ready_seconds
        with httpx.Client(base_url=self.root, timeout=5) as http:
            while time.monotonic() < deadline:
                if self.proc is not None and self.proc.poll() is not None:
                    break
                try:
                    if http.get("/ready").status_code == 200:
                        (self.model,) = [m["id"] for m in http.get("/v1/models").json()["data"]]
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.25)
        tail = self.log.read_text(errors="replace")[-2000:] if self.log.is_file() else ""
        raise RuntimeError(f"redraft serve on {self.model_path} did not become ready "
                           f"(log {self.log}):\n{tail}")

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

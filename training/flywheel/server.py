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

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from generation.local.model import ModelLoadError
from generation.local.source import cached_folder, locate
from generation.supervisor import stop_process
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
    from generation.local.source import DEFAULT_MODEL

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


@contextlib.contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """Inside it, SIGTERM interrupts as Ctrl-C does, so every server process started within
    is stopped on the way out instead of outliving its parent (main thread only; elsewhere
    it does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class ServedProcess:
    """A server process on a free local port, as a context manager: started on entry with its
    output in `log`, ready when `ready(http)` says so (it fails at once if the process exits,
    and after `ready_seconds`), stopped on exit. Subclasses give `command`, `name` and
    `ready`."""

    command: list[str]
    name: str
    env: dict[str, str] | None = None
    cwd: Path | None = None

    def __init__(self, log: Path, ready_seconds: float = READY_SECONDS) -> None:
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        self.log = log
        self.ready_seconds = ready_seconds
        self.proc: subprocess.Popen[bytes] | None = None

    def ready(self, http: httpx.Client) -> bool:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)
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
        deadline = time.monotonic() + self.ready_seconds
        with httpx.Client(base_url=self.root, timeout=5) as http:
            while time.monotonic() < deadline:
                if self.proc is not None and self.proc.poll() is not None:
                    break
                try:
                    if self.ready(http):
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.25)
        tail = self.log.read_text(errors="replace")[-2000:] if self.log.is_file() else ""
        raise RuntimeError(f"{self.name} did not become ready (log {self.log}):\n{tail}")

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            stop_process(proc, timeout=30, kill_timeout=10)


class Server(ServedProcess):
    """`python -m app serve` on `model` with `data_dir`, ready when /ready answers 200 (the
    model is loaded). `base_url` ends in /v1. With `upstream`, it generates through that
    OpenAI-compatible server (which serves `model`) instead of the local backend."""

    def __init__(self, model: Path, data_dir: Path, *, concurrency: int = 1, threads: int = 1,
                 device: str = "auto", max_tokens: int = 1024, judge_max_tokens: int = 256,
                 upstream: tuple[str, str] | None = None,
                 ready_seconds: float = READY_SECONDS) -> None:
        super().__init__(data_dir / LOG, ready_seconds)
        self.model_path = model
        self.data_dir = data_dir
        self.name = f"redraft serve on {model}"
        self.command = [sys.executable, "-m", "app", "serve", "--port", str(self.port)]
        self.cwd = ROOT
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
            # every flywheel request names its evaluation (checks) or turns the loop off, so
            # neither probe would decide anything: they would only take the cores
            "REDRAFT_REFLECTION_JUDGE_PROBE": "false", "REDRAFT_REFLECTION_REVISER_PROBE": "false",
        })
        if threads:
            self.env["REDRAFT_LOCAL_THREADS"] = str(threads)
        if upstream is not None:  # (base URL, model name) of a server that generates for it
            self.env.update({"REDRAFT_BACKEND": "openai", "REDRAFT_UPSTREAM_URL": upstream[0],
                             "REDRAFT_MODEL": upstream[1]})
        self.model = ""

    @property
    def database_url(self) -> str:
        return f"sqlite+aiosqlite:///{self.data_dir / 'redraft.db'}"

    def ready(self, http: httpx.Client) -> bool:
        if http.get("/ready").status_code != 200:
            return False
        (self.model,) = [m["id"] for m in http.get("/v1/models").json()["data"]]
        return True

"""Run a server as a child process: spawn it, wait until it answers, restart it when it dies.

Generic on purpose (the vLLM backend is its first user): the caller gives the argv and a
readiness probe; this module owns the process group, its output and the restart policy.
`stop_process` is the blocking counterpart for a plain `subprocess.Popen` child (benchmarks,
the training flywheel, test servers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from generation.errors import UpstreamUnavailable

Probe = Callable[[], Awaitable[bool]]

TAIL_LINES = 40
_MAX_LINE = 8192


class StartupFailed(UpstreamUnavailable):
    """The child exited, could not be spawned, or did not become ready in time."""

    code = "startup_failed"


class _Child(asyncio.SubprocessProtocol):
    """Output lines and exit of one child.

    A protocol rather than `asyncio.subprocess.Process`, whose `wait()` (3.11) also waits for
    the output pipe to close: forked workers that outlive a killed server hold it open, and
    the death would go unnoticed.
    """

    def __init__(self, on_line: Callable[[str], None]) -> None:
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[None] = loop.create_future()
        self.finished: asyncio.Future[None] = loop.create_future()  # exited and pipes closed
        self._on_line = on_line
        self._buffer = b""

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        # Split on \r too: progress bars redraw with \r and would never end a line.
        *lines, self._buffer = (self._buffer + data.replace(b"\r", b"\n")).split(b"\n")
        if len(self._buffer) > _MAX_LINE:
            lines, self._buffer = [*lines, self._buffer], b""
        for line in lines:
            self._emit(line)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._emit(self._buffer)
        self._buffer = b""

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.finished.done():
            self.finished.set_result(None)

    def _emit(self, raw: bytes) -> None:
        line = raw.decode(errors="replace").rstrip()
        if line:
            self._on_line(line)


@dataclass(frozen=True, slots=True)
class SupervisorSettings:
    """How a supervisor waits for, restarts and stops its child; seconds throughout."""

    startup_timeout: float = 900.0  # from spawn until the probe passes
    restart_delay: float = 2.0  # before the first restart; doubles on each failed one
    max_restart_delay: float = 60.0  # the doubling stops here (never below restart_delay)
    stable_after: float = 60.0  # a child up this long resets the delay to restart_delay
    stop_grace: float = 30.0  # between SIGTERM and SIGKILL
    probe_interval: float = 1.0
    probe_timeout: float = 5.0


class ProcessSupervisor:
    """One long-running child process, kept alive.

    States: stopped -> starting -> ready; on an unexpected exit ready -> restarting -> ready;
    `aclose` -> closed. The child leads its own session so that signals reach its whole
    process group (vLLM forks engine workers that hold GPU memory).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        probe: Probe,
        name: str,
        hint: str = "",
        env: Mapping[str, str] | None = None,
        settings: SupervisorSettings | None = None,
        log_file: Path | None = None,
        logger: logging.Logger | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.argv = list(argv)
        self.name = name
        self.hint = hint
        self.env = dict(env or {})
        self.settings = settings or SupervisorSettings()
        self.log_file = log_file
        self.log = logger or logging.getLogger(f"generation.{name}")
        self.restarts = 0
        self.state = "stopped"
        self._probe = probe
        self._sleep = sleep
        self._transport: asyncio.SubprocessTransport | None = None
        self._child: _Child | None = None
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._log_offset = 0
        self._watcher: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def ready(self) -> bool:
        child = self._child
        return self.state == "ready" and child is not None and not child.exited.done()

    async def start(self) -> None:
        """Spawn the child and return once the probe passes; raise StartupFailed otherwise."""
        if self.state != "stopped":
            raise RuntimeError(f"{self.name} supervisor already {self.state}")
        self.state = "starting"
        try:
            await self._launch()
        except BaseException:
            self.state = "stopped"
            await self._stop_current()
            raise
        self.state = "ready"
        self._watcher = asyncio.create_task(self._watch(), name=f"{self.name}-supervisor")

    async def aclose(self) -> None:
        """SIGTERM the process group, SIGKILL it after the grace period, reap everything."""
        self.state = "closed"
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        await self._stop_current()

    async def _launch(self) -> None:
        self._tail = deque(maxlen=TAIL_LINES)
        self.log.info("%s: starting %s", self.name, " ".join(self.argv))
        try:
            if self.log_file is None:
                await self._exec(asyncio.subprocess.PIPE)
            else:
                # The OS appends the child's output to the file, so a chatty server costs our
                # loop nothing; error messages read the tail back from where this run began.
                out = await asyncio.to_thread(_open_append, self.log_file)
                try:
                    self._log_offset = out.tell()
                    await self._exec(out)
                finally:
                    out.close()  # the child holds its own descriptor
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise StartupFailed(
                f"cannot run {self.name} command {self.argv[0]!r}: {exc.strerror or exc}. "
                f"{self.hint}"
            ) from None
        self.log.info("%s: started pid %s", self.name, self.pid)
        await self._await_ready()

    async def _exec(self, out: int | IO[Any]) -> None:
        loop = asyncio.get_running_loop()
        self._transport, self._child = await loop.subprocess_exec(
            lambda: _Child(self._on_line),
            *self.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **self.env},
            start_new_session=True,
        )

    def _on_line(self, line: str) -> None:
        self._tail.append(line)
        self.log.info("%s: %s", self.name, line)

    async def _await_ready(self) -> None:
        assert self._child is not None and self._transport is not None
        exited = self._child.exited
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.startup_timeout
        while True:
            if exited.done():
                await asyncio.wait({self._child.finished}, timeout=2.0)  # last output lines
                raise StartupFailed(
                    f"{self.name} exited with code {self._transport.get_returncode()} during "
                    f"start-up.{await self._tail_text()} {self.hint}"
                )
            if await self._probe_once():
                self.log.info("%s: ready (pid %s)", self.name, self.pid)
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise StartupFailed(
                    f"{self.name} did not become ready within {self.settings.startup_timeout:g}s."
                    f"{await self._tail_text()} {self.hint}"
                )
            await asyncio.wait({exited}, timeout=min(self.settings.probe_interval, remaining))

    async def _probe_once(self) -> bool:
        try:
            return await asyncio.wait_for(self._probe(), self.settings.probe_timeout)
        except (TimeoutError, OSError):
            return False

    async def _watch(self) -> None:
        settings = self.settings
        delay = settings.restart_delay
        max_delay = max(settings.max_restart_delay, settings.restart_delay)
        while True:
            assert self._child is not None and self._transport is not None
            began = time.monotonic()
            await asyncio.shield(self._child.exited)  # cancelling us must not cancel it
            if self.state == "closed":
                return
            if time.monotonic() - began >= settings.stable_after:
                delay = settings.restart_delay
            self.state = "restarting"
            pid, code = self.pid, self._transport.get_returncode()
            await self._stop_current()  # orphaned workers would keep the port and the GPU
            self.log.error(
                "%s: pid %s exited unexpectedly with code %s; restarting in %.1fs.%s",
                self.name, pid, code, delay, await self._tail_text(),
            )
            while True:
                await self._sleep(delay)
                # Closing cancels this task; Python 3.11's wait_for can swallow that
                # cancellation when a probe finishes at the same moment, so look as well.
                if self.state == "closed":
                    return
                delay = min(max(delay * 2, 0.1), max_delay)
                self.restarts += 1
                try:
                    await self._launch()
                    break
                except StartupFailed as exc:
                    await self._stop_current()
                    self.log.error("%s: restart %d failed: %s", self.name, self.restarts, exc)
            if self.state == "closed":
                return
            self.state = "ready"

    async def _stop_current(self) -> None:
        transport, child = self._transport, self._child
        if transport is None or child is None:
            return
        pid = transport.get_pid()
        if not child.exited.done():
            _signal_group(transport, signal.SIGTERM)
            await asyncio.wait({child.exited}, timeout=self.settings.stop_grace)
            if not child.exited.done():
                self.log.warning("%s: pid %d ignored SIGTERM for %gs; killing it",
                                 self.name, pid, self.settings.stop_grace)
        # Also after a clean exit: stragglers left in the group are killed, not orphaned.
        _signal_group(transport, signal.SIGKILL)
        await asyncio.shield(child.exited)
        await asyncio.wait({child.finished}, timeout=2.0)
        transport.close()
        # Forget the pid: once reaped it may be reused, and a later killpg must not hit it.
        self._transport = self._child = None

    async def _tail_text(self) -> str:
        if self.log_file is None:
            lines = list(self._tail)
        else:
            lines = await asyncio.to_thread(self._file_tail)
        if not lines:
            return " It printed nothing."
        return " Its last output:\n  " + "\n  ".join(lines) + "\n"

    def _file_tail(self) -> list[str]:  # runs in a worker thread
        assert self.log_file is not None
        try:
            with open(self.log_file, "rb") as f:
                f.seek(max(self._log_offset, f.seek(0, os.SEEK_END) - 65536))
                data = f.read()
        except OSError:
            return []
        text = data.decode(errors="replace").replace("\r", "\n")
        return [line.rstrip() for line in text.split("\n") if line.strip()][-TAIL_LINES:]


def _signal_group(transport: asyncio.SubprocessTransport, sig: signal.Signals) -> None:
    try:
        os.killpg(transport.get_pid(), sig)
    except (ProcessLookupError, PermissionError):
        # Not a group leader any more (it called setsid itself): signal the child alone
        # rather than wait forever for an exit that no signal was sent to cause.
        if transport.get_returncode() is None:
            with contextlib.suppress(ProcessLookupError):
                transport.send_signal(sig)


def _open_append(path: Path) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "ab")  # handed to the child; the caller closes our copy


def stop_process(proc: subprocess.Popen, timeout: float = 10.0, kill_timeout: float = 5.0) -> bool:
    """SIGTERM `proc`, wait up to `timeout` seconds, then SIGKILL and reap it; True when it
    had to be killed. A child that has already exited is only reaped."""
    if proc.poll() is not None:
        return False
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=kill_timeout)
        return True
    return False

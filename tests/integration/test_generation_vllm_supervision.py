"""The vllm backend against a stand-in `vllm serve` executable: real processes, real HTTP.

No real vLLM runs here (no GPU, no weights): the stand-in speaks the same argv and the same
endpoints, which is all the supervisor relies on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest

from generation.errors import UpstreamUnavailable
from generation.supervisor import (
    ProcessSupervisor,
    StartupFailed,
    SupervisorSettings,
    stop_process,
)
from generation.types import ChatParams, Choice, Chunk, ChunkChoice, Completion, Message, Usage
from generation.vllm import VllmBackend, build_argv

STANDIN = Path(__file__).with_name("generation_vllm_standin.py")
HI = [{"role": "user", "content": "hi"}]


class HttpClient:
    """Just enough of the `openai` backend to prove requests reach the child."""

    name = "http"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def chat(self, messages: Sequence[Message], params: ChatParams,
                   schema: object = None) -> Completion:
        assert self._session is not None
        body = {"model": params.model, "messages": list(messages)}
        async with self._session.post(f"{self.base_url}/chat/completions", json=body) as resp:
            data = await resp.json()
        text = data["choices"][0]["message"]["content"]
        return Completion((Choice(0, text, "stop"),), Usage(1, 2), data["model"], id=data["id"])

    async def stream(self, messages: Sequence[Message], params: ChatParams,
                     schema: object = None) -> AsyncIterator[Chunk]:
        completion = await self.chat(messages, params, schema)
        yield Chunk((ChunkChoice(0, content=completion.text),), model=completion.model)

    async def models(self) -> list[str]:
        assert self._session is not None
        async with self._session.get(f"{self.base_url}/models") as resp:
            return [m["id"] for m in (await resp.json())["data"]]

    async def ready(self) -> bool:
        try:
            return bool(await self.models())
        except aiohttp.ClientError:
            return False


@pytest.fixture
def vllm_exe(tmp_path: Path) -> Path:
    """The stand-in installed like a venv's `vllm` script: executable, with a shebang."""
    exe = tmp_path / "bin" / "vllm"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\n" + STANDIN.read_text())
    exe.chmod(0o755)
    return exe


@pytest.fixture
def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


FAST = SupervisorSettings(startup_timeout=20.0, restart_delay=0.05, stop_grace=5.0,
                          probe_interval=0.05)


def make_backend(command: str, port: int, **kw) -> VllmBackend:
    opts = dict(supervision=FAST, client_factory=HttpClient)
    return VllmBackend(command=command, model="tiny-model", port=port, **(opts | kw))


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a parent (orphans go to a PID 1 we don't own)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def reaped(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def eventually(condition, within: float = 10.0) -> None:
    """Wait until `condition()` (sync or async) is true."""
    deadline = time.monotonic() + within
    while not await _value(condition()):
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def _value(result):
    return await result if asyncio.iscoroutine(result) else result


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()]


async def test_starts_ready_and_chat_reaches_the_child(vllm_exe: Path, port: int) -> None:
    backend = make_backend(f"{vllm_exe} serve", port, env={"STANDIN_SERVED_NAME": "served-x"})
    await backend.start()
    try:
        assert await backend.ready()
        reply = await backend.chat(HI, ChatParams())
        assert reply.text == "echo: hi"
        assert reply.id == f"chatcmpl-{backend.pid}"
        pieces = [c.choices[0].content async for c in backend.stream(HI, ChatParams())]
        assert pieces == ["echo: hi"]
        assert await backend.models() == ["served-x"]  # env additions reach the child
    finally:
        await backend.aclose()


async def test_child_output_is_logged_with_prefix(vllm_exe: Path, port: int, caplog) -> None:
    caplog.set_level(logging.INFO, logger="generation.vllm")
    backend = make_backend(f"{vllm_exe} serve", port)
    await backend.start()
    await backend.aclose()
    assert f"vllm: stand-in: serving tiny-model on port {port}" in caplog.messages


async def test_output_goes_to_log_file_when_configured(
    vllm_exe: Path, port: int, tmp_path: Path, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="generation.vllm")
    log_file = tmp_path / "logs" / "vllm.log"
    backend = make_backend(f"{vllm_exe} serve", port, log_file=log_file)
    await backend.start()
    await backend.aclose()
    assert f"stand-in: serving tiny-model on port {port}" in log_file.read_text()
    assert not any(m.startswith("vllm: stand-in") for m in caplog.messages)


async def test_kill_9_is_restarted_with_a_new_pid(
    vllm_exe: Path, port: int, tmp_path: Path
) -> None:
    workers = tmp_path / "workers"
    backend = make_backend(f"{vllm_exe} serve", port, args=f"--worker-pidfile {workers}",
                           supervision=replace(FAST, restart_delay=0.5))
    await backend.start()
    try:
        first = backend.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)

        # The watcher notices within milliseconds (SIGCHLD); a connect to the dead port may
        # be refused even sooner, which the client itself reports.
        await eventually(lambda: backend.supervisor.state == "restarting", within=2)
        assert not await backend.ready()
        began = time.monotonic()
        with pytest.raises(UpstreamUnavailable, match="vLLM is restarting"):
            await backend.chat(HI, ChatParams())
        with pytest.raises(UpstreamUnavailable, match="vLLM is restarting"):
            [c async for c in backend.stream(HI, ChatParams())]
        assert time.monotonic() - began < 0.3  # refused at once, no connect timeout
        assert await backend.models() == ["tiny-model"]  # still listed while it restarts

        await eventually(backend.ready)
        assert backend.pid not in (None, first)
        assert backend.restarts == 1
        assert (await backend.chat(HI, ChatParams())).id == f"chatcmpl-{backend.pid}"
        # The dead server's worker was killed with its group, not left holding the GPU.
        old_worker, new_worker = pids_in(workers)
        assert not alive(old_worker) and alive(new_worker)  # old one killed before restart
    finally:
        await backend.aclose()


async def test_failed_restarts_back_off_and_keep_trying(
    vllm_exe: Path, port: int, tmp_path: Path
) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(0)

    starts = tmp_path / "starts"
    argv = build_argv(f"{vllm_exe} serve", "tiny-model", "127.0.0.1", port,
                      f"--starts-file {starts}")  # every start after the first exits 3
    health = HttpClient(f"http://127.0.0.1:{port}/v1")
    settings = SupervisorSettings(restart_delay=0.05, max_restart_delay=0.4, probe_interval=0.05)
    supervisor = ProcessSupervisor(argv, probe=health.ready, name="vllm", settings=settings,
                                   sleep=sleep)
    await health.start()
    await supervisor.start()
    try:
        os.kill(supervisor.pid, signal.SIGKILL)
        await eventually(lambda: starts.exists() and len(starts.read_text().split()) >= 7)
        assert not supervisor.ready and supervisor.state == "restarting"
        assert supervisor.restarts >= 6
    finally:
        await supervisor.aclose()
        await health.aclose()
    assert slept[:6] == [0.05, 0.1, 0.2, 0.4, 0.4, 0.4]


async def test_command_that_exits_gives_a_clear_error(tmp_path: Path, port: int) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import sys\nprint('error: unrecognized arguments: --bogus', "
                      "file=sys.stderr)\nsys.exit(2)\n")
    backend = make_backend(f"{sys.executable} {script}", port, args="--bogus")
    began = time.monotonic()
    with pytest.raises(StartupFailed) as info:
        await backend.start()
    assert time.monotonic() - began < 5  # fails fast, not after startup_timeout
    message = str(info.value)
    assert "exited with code 2 during start-up" in message
    assert "error: unrecognized arguments: --bogus" in message
    assert "REDRAFT_VLLM_COMMAND" in message and "REDRAFT_VLLM_ARGS" in message


async def test_exit_tail_is_read_from_the_log_file(tmp_path: Path, port: int) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import sys\nprint('CUDA out of memory')\nsys.exit(1)\n")
    backend = make_backend(f"{sys.executable} {script}", port, log_file=tmp_path / "v.log")
    with pytest.raises(StartupFailed, match="CUDA out of memory"):
        await backend.start()


async def test_missing_command_names_the_setting(port: int) -> None:
    backend = make_backend("/nonexistent/venv/bin/vllm serve", port)
    with pytest.raises(StartupFailed) as info:
        await backend.start()
    assert "/nonexistent/venv/bin/vllm" in str(info.value)
    assert "REDRAFT_VLLM_COMMAND" in str(info.value)
    assert not await backend.ready()


async def test_startup_timeout_kills_the_child(vllm_exe: Path, port: int, tmp_path: Path) -> None:
    workers = tmp_path / "workers"
    backend = make_backend(f"{vllm_exe} serve", port,
                           args=f"--never-ready --worker-pidfile {workers}",
                           supervision=replace(FAST, startup_timeout=1.0))
    expected = r"did not become ready within 1s[\s\S]*loading forever"
    with pytest.raises(StartupFailed, match=expected):
        await backend.start()
    [worker] = pids_in(workers)
    await eventually(lambda: not alive(worker), within=2)


async def test_port_in_use_is_refused_before_spawning(vllm_exe: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        workers = tmp_path / "workers"
        backend = make_backend(f"{vllm_exe} serve", taken.getsockname()[1],
                               args=f"--worker-pidfile {workers}")
        with pytest.raises(StartupFailed, match="REDRAFT_VLLM_PORT"):
            await backend.start()
    assert not workers.exists()


@pytest.mark.parametrize("ignore_sigterm", [False, True])
async def test_aclose_leaves_no_process(
    vllm_exe: Path, port: int, tmp_path: Path, ignore_sigterm: bool
) -> None:
    workers = tmp_path / "workers"
    args = f"--worker-pidfile {workers}" + (" --ignore-sigterm" if ignore_sigterm else "")
    backend = make_backend(f"{vllm_exe} serve", port, args=args,
                           supervision=replace(FAST, stop_grace=0.5))
    await backend.start()
    pid = backend.pid
    assert pid is not None
    began = time.monotonic()
    await backend.aclose()
    took = time.monotonic() - began
    assert reaped(pid)  # not even a zombie
    [worker] = pids_in(workers)
    await eventually(lambda: not alive(worker), within=2)  # SIGKILLed with its group
    assert (took >= 0.5) if ignore_sigterm else (took < 0.5)  # SIGKILL only after the grace
    assert not await backend.ready()
    with pytest.raises(UpstreamUnavailable, match="shut down"):
        await backend.chat(HI, ChatParams())


async def test_composes_the_openai_backend(vllm_exe: Path, port: int) -> None:
    """What the app wires up: the real `openai` backend pointed at the child's /v1."""
    from generation.openai import OpenAIBackend

    def factory(base_url: str) -> OpenAIBackend:
        return OpenAIBackend([base_url], model="tiny-model", retries=0)

    backend = make_backend(f"{vllm_exe} serve", port, client_factory=factory,
                           supervision=replace(FAST, restart_delay=0.3))
    await backend.start()
    try:
        assert await backend.ready()
        assert (await backend.chat(HI, ChatParams())).text == "echo: hi"
        assert await backend.models() == ["tiny-model"]
        os.kill(backend.pid, signal.SIGKILL)
        await eventually(lambda: backend.supervisor.state == "restarting", within=2)
        with pytest.raises(UpstreamUnavailable, match="vLLM is restarting"):
            await backend.chat(HI, ChatParams())
        await eventually(backend.ready)
        assert (await backend.chat(HI, ChatParams())).text == "echo: hi"
    finally:
        await backend.aclose()


@pytest.mark.parametrize("ignore_sigterm", [False, True])
def test_stop_process_kills_a_child_only_once_it_ignores_sigterm(ignore_sigterm: bool) -> None:
    handler = "signal.SIG_IGN" if ignore_sigterm else "signal.SIG_DFL"
    script = (f"import signal, time; signal.signal(signal.SIGTERM, {handler}); "
              "print('up', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    began = time.monotonic()
    killed = stop_process(proc, timeout=0.5)
    proc.stdout.close()
    assert killed is ignore_sigterm
    assert proc.returncode == (-signal.SIGKILL if ignore_sigterm else -signal.SIGTERM)
    assert (time.monotonic() - began >= 0.5) is ignore_sigterm
    assert stop_process(proc) is False  # already reaped: nothing more to do

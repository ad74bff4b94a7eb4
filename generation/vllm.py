"""The `vllm` backend: run `vllm serve` as a supervised child and talk to it over HTTP.

vLLM lives in its own venv or container image because it pins torch, transformers and
fastapi versions that clash with ours; process isolation is the point, so nothing here
imports vllm. Requests go through an OpenAI-compatible client (the `openai` backend) that
the caller builds with `client_factory`, pointed at the child's /v1 URL.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp

from generation.base import Backend, JsonSchema
from generation.errors import UpstreamUnavailable
from generation.supervisor import ProcessSupervisor, StartupFailed, SupervisorSettings
from generation.types import ChatParams, Chunk, Completion, Message

ClientFactory = Callable[[str], Backend]

_HINT = (
    "Check REDRAFT_VLLM_COMMAND (now {command!r}): it must run `vllm serve` from the venv or "
    "image where vLLM is installed, e.g. '/opt/vllm-venv/bin/vllm serve' or "
    "'docker run --rm --gpus all --network host vllm/vllm-openai:latest'; "
    "extra flags go in REDRAFT_VLLM_ARGS (now {args!r})."
)

# "ready" here means the child died a moment ago and the watcher has not noticed yet.
_STATE_WORDS = {
    "ready": "restarting",
    "restarting": "restarting",
    "starting": "still starting",
    "stopped": "not started",
    "closed": "shut down",
}


class VllmBackend:
    """Starts `<command> <model> --host 127.0.0.1 --port <port> <args>` and proxies to it."""

    name = "vllm"

    def __init__(
        self,
        *,
        command: str,
        model: str,
        client_factory: ClientFactory,
        args: str = "",
        host: str = "127.0.0.1",
        port: int = 8001,
        supervision: SupervisorSettings | None = None,
        env: Mapping[str, str] | None = None,
        api_key: str | None = None,
        log_file: Path | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.model = model
        self.host = host
        self.port = port
        self.root_url = f"http://{host}:{port}"
        self.base_url = f"{self.root_url}/v1"
        self._api_key = api_key
        self._client_factory = client_factory
        self._client: Backend | None = None
        self._session: aiohttp.ClientSession | None = None
        self._served: list[str] = []
        child_env = dict(env or {})
        if api_key:
            child_env["VLLM_API_KEY"] = api_key  # not --api-key: argv is visible in `ps`
        self.supervisor = ProcessSupervisor(
            build_argv(command, model, host, port, args),
            probe=self._probe,
            name="vllm",
            hint=_HINT.format(command=command, args=args),
            env=child_env,
            settings=supervision,
            log_file=log_file,
            logger=logger or logging.getLogger("generation.vllm"),
        )

    @property
    def pid(self) -> int | None:
        return self.supervisor.pid

    @property
    def restarts(self) -> int:
        return self.supervisor.restarts

    async def start(self) -> None:
        if await _port_open(self.host, self.port):
            raise StartupFailed(
                f"port {self.port} on {self.host} is already in use, so `vllm serve` could not "
                "bind it (or another server would answer in its place): stop that process or "
                "set REDRAFT_VLLM_PORT to a free port."
            )
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5.0))
        try:
            await self.supervisor.start()
            self._client = self._client_factory(self.base_url)
            await self._client.start()
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        await self.supervisor.aclose()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def ready(self) -> bool:
        return self._client is not None and self.supervisor.ready and await self._client.ready()

    def structured_status(self) -> dict[str, Any]:
        """How the client asks vLLM for structured output (pending until vLLM is up)."""
        status = getattr(self._client, "structured_status", None)
        if status is None:
            return {"dialect": None, "decided_by": "pending",
                    "note": "decided once the vLLM server is up"}
        return dict(status())

    async def models(self) -> list[str]:
        if self._client is not None and self.supervisor.ready:
            return await self._client.models()
        # While it restarts, /v1/models still lists what it serves once it is back.
        return list(self._served) or [self.model]

    async def chat(
        self, messages: Sequence[Message], params: ChatParams, schema: JsonSchema | None = None
    ) -> Completion:
        return await self._live_client().chat(messages, params, schema)

    async def stream(
        self, messages: Sequence[Message], params: ChatParams, schema: JsonSchema | None = None
    ) -> AsyncIterator[Chunk]:
        async for chunk in self._live_client().stream(messages, params, schema):
            yield chunk

    def _live_client(self) -> Backend:
        """The client, or an immediate 503: a dead server would only cost a connect timeout."""
        if self._client is None or not self.supervisor.ready:
            what = _STATE_WORDS.get(self.supervisor.state, self.supervisor.state)
            raise UpstreamUnavailable(
                f"vLLM is {what}", headers={"Retry-After": str(_retry_after(self.supervisor))}
            )
        return self._client

    async def _probe(self) -> bool:
        """vLLM answers /health once the engine is up and /v1/models once the API is."""
        session = self._session
        if session is None:
            return False
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            async with session.get(f"{self.root_url}/health") as resp:
                if resp.status != 200:
                    return False
            async with session.get(f"{self.base_url}/models", headers=headers) as resp:
                if resp.status != 200:
                    return False
                body = await resp.json(content_type=None)
        except (aiohttp.ClientError, ValueError):
            return False
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            return False
        served = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)]
        self._served = [m for m in served if isinstance(m, str)]
        return bool(self._served)


def build_argv(command: str, model: str, host: str, port: int, args: str) -> list[str]:
    base = shlex.split(command)
    if not base:
        raise StartupFailed("REDRAFT_VLLM_COMMAND is empty: set it to e.g. 'vllm serve'")
    return [*base, model, "--host", host, "--port", str(port), *shlex.split(args)]


def _retry_after(supervisor: ProcessSupervisor) -> int:
    return max(1, int(supervisor.settings.restart_delay + 0.999))


async def _port_open(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 2.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    await writer.wait_closed()
    return True

"""The vllm backend's argv, configuration and refusals, without spawning anything."""

from __future__ import annotations

import time

import pytest

from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from generation.supervisor import StartupFailed, SupervisorSettings
from generation.types import ChatParams
from generation.vllm import VllmBackend, build_argv

HI = [{"role": "user", "content": "hi"}]


def make(**kw) -> VllmBackend:
    opts = dict(command="vllm serve", model="Qwen/Qwen2.5-7B-Instruct", port=8011,
                client_factory=lambda url: ScriptedBackend(default="x"))
    return VllmBackend(**(opts | kw))


def test_argv_is_command_model_host_port_then_extra_args() -> None:
    argv = build_argv(r"/opt/vllm\ venv/bin/vllm serve", "m/x",
                      "127.0.0.1", 8011, "--max-model-len 8192 --chat-template '/t/a b.jinja'")
    assert argv == ["/opt/vllm venv/bin/vllm", "serve", "m/x", "--host", "127.0.0.1",
                    "--port", "8011", "--max-model-len", "8192", "--chat-template", "/t/a b.jinja"]


def test_docker_command_keeps_its_own_flags_before_the_model() -> None:
    argv = build_argv("docker run --rm --gpus all --network host vllm/vllm-openai:v0.9.2",
                      "m", "127.0.0.1", 8001, "")
    assert argv[:7] == ["docker", "run", "--rm", "--gpus", "all", "--network", "host"]
    assert argv[7:] == ["vllm/vllm-openai:v0.9.2", "m", "--host", "127.0.0.1", "--port", "8001"]


def test_empty_command_is_refused_naming_the_setting() -> None:
    with pytest.raises(StartupFailed, match="REDRAFT_VLLM_COMMAND is empty"):
        make(command="  ")


def test_client_points_at_the_child_v1_url() -> None:
    assert make(port=9123).base_url == "http://127.0.0.1:9123/v1"


def test_api_key_goes_to_the_child_env_not_its_argv() -> None:
    backend = make(api_key="s3cret", env={"CUDA_VISIBLE_DEVICES": "1"})
    assert "s3cret" not in " ".join(backend.supervisor.argv)
    assert backend.supervisor.env == {"CUDA_VISIBLE_DEVICES": "1", "VLLM_API_KEY": "s3cret"}


async def test_chat_before_start_is_refused_at_once_with_retry_after() -> None:
    backend = make(supervision=SupervisorSettings(restart_delay=2.5))
    began = time.monotonic()
    with pytest.raises(UpstreamUnavailable, match="vLLM is not started") as info:
        await backend.chat(HI, ChatParams())
    with pytest.raises(UpstreamUnavailable, match="vLLM is not started"):
        [c async for c in backend.stream(HI, ChatParams())]
    assert time.monotonic() - began < 0.1
    assert info.value.status == 503 and info.value.headers == {"Retry-After": "3"}
    assert not await backend.ready()


async def test_models_lists_the_configured_model_while_down() -> None:
    assert await make().models() == ["Qwen/Qwen2.5-7B-Instruct"]

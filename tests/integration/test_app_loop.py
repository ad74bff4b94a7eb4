"""The loop behind the chat route, on SQLite, with a scripted writer+judge backend."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from app.factory import create_app
from app.settings import load_settings
from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from loops.record import stored_checks

URL = "/v1/chat/completions"
MSG = [{"role": "user", "content": "Write a short note inviting the team to a picnic."}]
PACK = "generic:general-en"
ADMIN = {"Authorization": "Bearer sk-admin"}


class Model:
    """Writer: numbered texts. Judge: every dimension scored by the text's number."""

    def __init__(self, scores: list[int]) -> None:
        self.scores = scores
        self.count = 0
        self.fail_after: int | None = None

    def __call__(self, messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        if schema is None:
            if self.fail_after is not None and self.count >= self.fail_after:
                raise UpstreamUnavailable("writer went away")
            self.count += 1
            return f"note-{self.count - 1}"
        text = re.search(r"<response>\n(.*?)\n</response>", prompt, re.DOTALL).group(1)
        score = self.scores[int(text.split("-")[1]) % len(self.scores)]
        # The schema names every dimension (joint scoring, or scoring fused with reflection).
        names = list(schema["properties"]["scores"]["properties"])
        scores = {n: {"evidence": "q", "score": score} for n in names}
        if "items" not in schema["properties"]:
            return json.dumps({"scores": scores})
        return json.dumps({
            "scores": scores,
            "summary": "be warmer",
            "items": [{"dimension": names[0], "evidence": "q", "objective": "o",
                       "actions": ["add a time and place"]}]})


@pytest.fixture
def model():
    return Model([3, 6, 10])


@pytest.fixture
def client(tmp_path, model, monkeypatch):
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL"):
        monkeypatch.delenv(key, raising=False)
    settings = load_settings(data={"dir": tmp_path}, model="tiny",
                             api={"keys": "team-a:sk-a,team-b:sk-b"}, admin={"key": "sk-admin"},
                             memory={"enabled": False})
    app = create_app(settings, backend=ScriptedBackend(default=model, model="tiny"))
    with TestClient(app, headers={"Authorization": "Bearer sk-a"}) as c:
        yield c


def ask(client, **reflection):
    return client.post(URL, json={"messages": MSG,
                                  "reflection": {"checklist": PACK, **reflection}})


def test_loop_answer_is_the_best_and_the_record_is_complete(client):
    r = ask(client, max_rounds=3, threshold=0.95, return_trace=True)
    assert r.status_code == 200, r.text
    body = r.json()
    info = body["reflection"]
    assert body["choices"][0]["message"]["content"] == "note-2"
    assert info["scores"] == [pytest.approx(2 / 9, abs=1e-4), pytest.approx(5 / 9, abs=1e-4), 1.0]
    assert info["stop_reason"] == "threshold" and info["rounds"] == 2
    assert info["final_score"] == max(info["scores"])
    stage_total = sum(s["total_tokens"] for s in info["usage"].values())
    assert body["usage"]["total_tokens"] == stage_total > 0
    assert len(info["trace"]["candidates"]) == 3

    loop = client.get(f"/admin/loops/{info['loop_id']}", headers=ADMIN).json()
    assert loop["namespace"] == "team-a" and loop["stop_reason"] == "threshold"
    assert [c["text"] for c in loop["candidates"]] == ["note-0", "note-1", "note-2"]
    assert [c["parent_position"] for c in loop["candidates"]] == [None, 0, 1]
    assert loop["candidates"][1]["reflection"]["items"][0]["actions"] == ["add a time and place"]
    assert loop["checklist_source"] == "pack" and loop["checklist"]["dimensions"]
    assert loop["score_gain"] == pytest.approx(1 - 2 / 9, abs=1e-4)
    assert loop["usage"]["total"]["total_tokens"] == body["usage"]["total_tokens"]
    listed = client.get("/admin/loops", headers=ADMIN, params={"stop_reason": "threshold"}).json()
    assert [x["id"] for x in listed["data"]] == [info["loop_id"]]
    stored = client.get(f"/admin/checklists/{info['checklist_id']}", headers=ADMIN)
    assert stored.status_code == 200 and stored.json()["source"] == "pack"


def test_stored_checklist_is_reusable_by_id(client, model):
    first = ask(client, max_rounds=0).json()["reflection"]
    again = client.post(URL, json={"messages": MSG, "reflection": {
        "checklist": first["checklist_id"], "max_rounds": 0}})
    assert again.status_code == 200 and again.json()["reflection"]["checklist_id"] == \
        first["checklist_id"]


def test_failure_mid_loop_leaves_the_answer_degraded_and_no_half_record(client, model):
    model.fail_after = 1  # the draft succeeds, the first rewrite fails
    r = ask(client, max_rounds=3, threshold=1.0)
    assert r.status_code == 200
    info = r.json()["reflection"]
    assert info["stop_reason"] == "degraded"
    cause = {"stage": "rewrite", "cause": "unavailable", "detail": "writer went away",
             "outcome": "answered the draft"}
    assert info["degradations"] == [cause]
    loop = client.get(f"/admin/loops/{info['loop_id']}", headers=ADMIN).json()
    assert len(loop["candidates"]) == 1
    assert loop["degradations"] == [cause]
    listed = client.get("/admin/loops", headers=ADMIN).json()["data"][0]
    assert listed["degradations"] == [cause]
    assert client.post("/admin/ui/login", data={"key": "sk-admin", "next": "/admin/ui"},
                       follow_redirects=False).status_code == 303
    page = client.get(f"/admin/ui/loops/{info['loop_id']}").text
    assert "Did less than asked" in page and "writer went away" in page
    metrics = client.get("/metrics").text
    assert 'redraft_loop_degradations_total{cause="unavailable",stage="rewrite"} 1.0' in metrics
    assert 'redraft_loops_total{stop_reason="degraded"} 1.0' in metrics


def test_failed_draft_is_503_and_not_recorded(client, model, monkeypatch):
    services = client.app.state.services
    saved = []

    async def record(records):
        saved.extend(records)

    monkeypatch.setattr(services.loops, "save_many", record)
    model.fail_after = 0
    r = ask(client, max_rounds=1)
    assert r.status_code == 503  # the draft itself failed: nothing to answer, nothing stored
    assert saved == []
    assert client.get("/admin/loops", headers=ADMIN).json()["data"] == []


def test_a_failed_write_stores_nothing(client, monkeypatch):
    services = client.app.state.services
    real = services.loops.save_many

    async def broken(records):
        # a candidate position clash makes the one transaction fail after the loop rows
        clash = [type(r)(**{**{f: getattr(r, f) for f in r.__slots__},
                            "candidates": r.candidates + (r.candidates[0],)}) for r in records]
        await real(clash)

    monkeypatch.setattr(services.loops, "save_many", broken)
    r = ask(client, max_rounds=0)
    assert r.status_code == 200  # the answer still goes out
    assert client.get("/admin/loops", headers=ADMIN).json()["data"] == []


def test_namespaces_are_recorded_per_key(client):
    ask(client, max_rounds=0)
    client.post(URL, json={"messages": MSG, "reflection": {"checklist": PACK, "max_rounds": 0}},
                headers={"Authorization": "Bearer sk-b"})
    a = client.get("/admin/loops", headers=ADMIN, params={"namespace": "team-a"}).json()["data"]
    b = client.get("/admin/loops", headers=ADMIN, params={"namespace": "team-b"}).json()["data"]
    assert len(a) == 1 and len(b) == 1


def test_admin_routes_need_the_admin_key(client):
    assert client.get("/admin/loops").status_code == 403
    assert client.get("/admin/loops", headers={"Authorization": "Bearer nope"}).status_code == 401
    missing = client.get("/admin/loops/nope", headers=ADMIN)
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "loop_id"
    bad = client.get("/admin/loops", headers=ADMIN, params={"limit": 0})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "limit"
    cursor = client.get("/admin/loops", headers=ADMIN, params={"cursor": "garbage"})
    assert cursor.status_code == 400 and cursor.json()["error"]["param"] == "cursor"


@pytest.mark.parametrize(("field", "value"), [("max_rounds", 11), ("threshold", 1.5),
                                              ("candidates", 0), ("candidates", 9),
                                              ("evaluation", "vibes"), ("colour", "red")])
def test_reflection_bounds_are_400_naming_the_field(client, field, value):
    r = client.post(URL, json={"messages": MSG, "reflection": {field: value}})
    assert r.status_code == 400
    assert r.json()["error"]["param"] == f"reflection.{field}"


def test_unknown_pack_is_404_with_param(client):
    r = client.post(URL, json={"messages": MSG, "reflection": {"checklist": "nopack:x"}})
    assert r.status_code == 404 and r.json()["error"]["param"] == "reflection.checklist"


def test_bad_inline_checklist_is_400(client):
    r = client.post(URL, json={"messages": MSG, "reflection": {"checklist": {"dimensions": []}}})
    assert r.status_code == 400 and r.json()["error"]["param"] == "reflection.checklist"


def test_tools_and_json_requests_skip_the_loop_and_say_why(client, model):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    r = client.post(URL, json={"messages": MSG, "tools": tools})
    assert r.json()["reflection"]["skipped"].startswith("tools requested")
    r = client.post(URL, json={"messages": MSG, "response_format": {"type": "json_object"}})
    assert "JSON" in r.json()["reflection"]["skipped"]
    assert client.get("/admin/loops", headers=ADMIN).json()["data"] == []


def test_n_runs_n_loops(client):
    r = ask(client, max_rounds=0, threshold=0.1)
    two = client.post(URL, json={"messages": MSG, "n": 2,
                                 "reflection": {"checklist": PACK, "max_rounds": 0}}).json()
    assert len(two["choices"]) == 2 and len(two["reflection"]["choices"]) == 2
    assert r.status_code == 200
    assert len(client.get("/admin/loops", headers=ADMIN).json()["data"]) == 3


def test_stream_sends_progress_comments_then_the_answer(client):
    with client.stream("POST", URL, json={
            "messages": MSG, "stream": True, "stream_options": {"include_usage": True},
            "reflection": {"checklist": PACK, "max_rounds": 3, "threshold": 0.95}}) as r:
        lines = [line for line in r.iter_lines() if line]
    comments = [json.loads(line[2:]) for line in lines if line.startswith(": ")]
    data = [line[6:] for line in lines if line.startswith("data: ")]
    assert [c["score"] for c in comments if c["event"] == "evaluated"] == \
        [pytest.approx(2 / 9, abs=1e-4), pytest.approx(5 / 9, abs=1e-4), 1.0]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "note-2"
    final = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]][0]
    assert final["reflection"]["stop_reason"] == "threshold"
    assert chunks[-1]["usage"]["total_tokens"] > 0


async def test_a_loop_cancelled_mid_way_is_not_recorded(model):
    import asyncio

    from app.http.auth import Principal
    from app.http.metrics import Metrics
    from app.openai.chat_service import ChatService
    from app.openai.loop_service import LoopService
    from app.openai.wire import ChatCompletionRequest
    from app.settings import ReflectionSettings
    from generation.types import ChatParams
    from loops.checklists import ChecklistProvider
    from loops.controller import ReflectionLoop
    from rubrics.cache import MemoryChecklistCache
    from rubrics.packs import PackLibrary

    class Repo:
        def __init__(self):
            self.saved = []

        async def save(self, record):
            self.saved.append(record)

        async def get(self, checklist_id, namespace=None):
            return None

        async def add(self, record):
            return record

    backend = ScriptedBackend(default=model, latency=0.05)
    repo = Repo()
    provider = ChecklistProvider(backend, ChatParams(), PackLibrary(), MemoryChecklistCache(), repo)
    loop = ReflectionLoop(backend, backend, provider, judge_params=ChatParams())
    service = ChatService(LoopService(backend, Metrics(), "tiny", loop=loop, recorder=repo,
                                      defaults=ReflectionSettings()))
    req = ChatCompletionRequest.model_validate(
        {"messages": MSG, "reflection": {"checklist": PACK, "max_rounds": 5, "threshold": 1.0}})
    task = asyncio.ensure_future(service.complete(req, Principal("k", "default", False)))
    for _ in range(200):  # wait (on a busy machine too) for the draft and a first evaluation
        if len(backend.calls) >= 2:
            break
        await asyncio.sleep(0.02)
    assert len(backend.calls) >= 2 and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.1)
    calls = len(backend.calls)
    await asyncio.sleep(0.15)
    assert len(backend.calls) == calls  # nothing keeps calling the upstream
    assert repo.saved == []


def test_an_inline_checklist_with_checks_runs_them_on_every_candidate(client):
    checklist = {"dimensions": [{"name": "Warmth", "description": "a warm invitation", "bands": [
        {"low": 1, "high": 5, "description": "cold"},
        {"low": 6, "high": 10, "description": "warm"}]}],
        "checks": [{"kind": "word_count", "quote": "at least two words",
                    "params": {"relation": "at least", "n": 2, "upper": None}}]}
    # Every note is one word: the judge's 10/10 on note-2 cannot stop the loop at tau.
    r = client.post(URL, json={"messages": MSG, "reflection": {
        "checklist": checklist, "max_rounds": 3, "threshold": 0.9, "return_trace": True}})
    assert r.status_code == 200, r.text
    info = r.json()["reflection"]
    assert info["stop_reason"] == "max_rounds" and info["rounds"] == 3
    outcomes = [c["checks"] for c in info["trace"]["candidates"]]
    assert all(o == [{"kind": "word_count", "passed": False, "measured": "1 words",
                      "target": "at least 2 words", "quote": "at least two words",
                      "action": "Add at least 1 words."}]
               for o in outcomes)
    loop = client.get(f"/admin/loops/{info['loop_id']}", headers=ADMIN).json()
    stored = [stored_checks(c["scores"]) for c in loop["candidates"]]
    failed = "[FAIL] word_count: 1 words; needs at least 2 words"
    assert [o[0].line() for o in stored] == [failed] * 4
    assert loop["checklist"]["checks"][0]["kind"] == "word_count"

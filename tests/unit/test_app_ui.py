"""The admin UI in-process: login and sessions, CSRF, the pages, escaping, the chart."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from app.admin.ui import routes as admin_ui
from app.admin.ui.charts import Point, running_best, trajectory_chart
from app.admin.ui.session import COOKIE, SessionSigner
from app.factory import create_app
from app.settings import load_settings
from generation.scripted import ScriptedBackend
from store.experiences import ExperienceRepository
from store.records import CandidateRecord, ExperienceRecord, LoopRecord

ADMIN_KEY = "sk-admin-ui"
USER_KEY = "sk-user"
MARKUP = "<script>alert(1)</script> and <b>bold</b>"
T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

CHECKLIST = {"dimensions": [
    {"name": "Clarity", "description": "Is it clear?", "weight": 1.0, "rationale": "",
     "bands": [{"low": 1, "high": 5, "description": "muddled"},
               {"low": 6, "high": 10, "description": "crisp and direct"}]},
    {"name": "Tone <i>", "description": "warm", "weight": 2.0, "rationale": "readers",
     "bands": [{"low": 1, "high": 5, "description": "cold"},
               {"low": 6, "high": 10, "description": "warm"}]},
]}


def make_loop(**kw) -> LoopRecord:
    reflection = {"summary": "tighten the opening " + MARKUP, "items": [
        {"dimension": "Clarity", "evidence": "the first line rambles", "objective": "be direct",
         "actions": ["cut the preamble", "lead with the date"]}]}
    candidates = [
        CandidateRecord(0, 0, "draft", "Draft text " + MARKUP, None,
                        {"Clarity": {"score": 3, "evidence": "rambles " + MARKUP, "band": 0},
                         "Tone <i>": {"score": 4, "evidence": "flat", "band": 0}}, 0.3),
        CandidateRecord(1, 1, "rewrite", "Second text", 0,
                        {"Clarity": {"score": 2, "evidence": "worse", "band": 0},
                         "Tone <i>": {"score": 3, "evidence": "cold", "band": 0}}, 0.2,
                        reflection),
        CandidateRecord(2, 2, "rewrite", "Final text", 1,
                        {"Clarity": {"score": 9, "evidence": "direct", "band": 1},
                         "Tone <i>": {"score": 9, "evidence": "warm", "band": 1}}, 0.9,
                        reflection),
    ]
    fields = dict(namespace="team-a", model="tiny", backend="scripted",
                  request={"messages": [{"role": "system", "content": "Be kind."},
                                        {"role": "user", "content": "Invite " + MARKUP}],
                           "reflection": {"threshold": 0.85}},
                  created_at=T0, checklist=CHECKLIST, checklist_source="pack",
                  stop_reason="threshold", rounds=2, initial_score=0.3, final_score=0.9,
                  candidates=candidates)
    return LoopRecord(**{**fields, **kw})


def make_experience(**kw) -> ExperienceRecord:
    fields = dict(namespace="team-a", key="invitation, team, informal",
                  text="Lead with the date and place.", embedding_model="mini",
                  score_trajectory=(0.3, 0.2, 0.9), created_at=T0)
    return ExperienceRecord(**{**fields, **kw})


@dataclass(frozen=True)
class Hit:
    experience: ExperienceRecord
    score: float


class FakeMemory:
    """Stands in for the MemoryBank: ranks by the given order, records the calls."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.calls: list[tuple[str, str | None, int]] = []

    async def search(self, text: str, namespace: str | None, k: int) -> list[Hit]:
        self.calls.append((text, namespace, k))
        return [h for h in self.hits if namespace in (None, h.experience.namespace)][:k]


def build_client(tmp_path, monkeypatch, admin_key: str | None = ADMIN_KEY) -> TestClient:
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL"):
        monkeypatch.delenv(key, raising=False)
    admin = {"key": admin_key} if admin_key else {}
    settings = load_settings(data={"dir": tmp_path}, model="tiny",
                             api={"keys": f"team-a:{USER_KEY}"}, admin=admin,
                             memory={"enabled": False})
    app = create_app(settings, backend=ScriptedBackend(model="tiny"))
    if not any(getattr(r, "path", "").startswith("/admin/ui") for r in app.routes):
        app.include_router(admin_ui.router)
    return TestClient(app, follow_redirects=False)


@pytest.fixture
def client(tmp_path, monkeypatch):
    with build_client(tmp_path, monkeypatch) as c:
        services = c.app.state.services
        if getattr(services, "experiences", None) is None:
            services.experiences = ExperienceRepository(services.sessions)
        services.memory = None
        yield c


def save(client: TestClient, record):
    services = client.app.state.services
    repo = services.loops if isinstance(record, LoopRecord) else services.experiences
    return client.portal.call(repo.save if isinstance(record, LoopRecord) else repo.add, record)


def log_in(client: TestClient, key: str = ADMIN_KEY, next_: str = "/admin/ui"):
    return client.post("/admin/ui/login", data={"key": key, "next": next_})


@pytest.fixture
def admin(client):
    assert log_in(client).status_code == 303
    return client


class Tags(HTMLParser):
    """The element names a browser would build from a page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


# -- login, sessions, CSRF ------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/admin/ui", "/admin/ui/loops", "/admin/ui/loops/x",
                                  "/admin/ui/experiences/x"])
def test_pages_redirect_to_login_without_a_session(client, path):
    r = client.get(path, params={"namespace": "team-a"})
    assert r.status_code == 303
    assert r.headers["location"].startswith("/admin/ui/login?next=%2Fadmin%2Fui")
    assert "namespace%3Dteam-a" in r.headers["location"]  # back to the same view afterwards


def test_login_sets_a_signed_httponly_strict_cookie_and_returns_to_next(client):
    form = client.get("/admin/ui/login", params={"next": "/admin/ui/loops"})
    assert form.status_code == 200 and 'type="password"' in form.text
    r = log_in(client, next_="/admin/ui/loops")
    assert r.status_code == 303 and r.headers["location"] == "/admin/ui/loops"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and ADMIN_KEY not in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/admin/ui" in cookie
    assert client.get("/admin/ui/loops").status_code == 200


def test_login_never_redirects_off_the_ui(client):
    for target in ("https://evil.example/", "//evil.example/admin/ui", "/v1/models",
                   "/admin/ui\\..\\x"):
        r = log_in(client, next_=target)
        assert r.headers["location"] == "/admin/ui"


def test_wrong_or_user_keys_do_not_log_in(client):
    wrong = log_in(client, key="nope")
    assert wrong.status_code == 401 and "invalid admin key" in wrong.text
    user = log_in(client, key=USER_KEY)
    assert user.status_code == 403 and "may not use the admin API" in user.text
    assert "set-cookie" not in wrong.headers and "set-cookie" not in user.headers
    assert client.get("/admin/ui").status_code == 303


def test_forged_expired_or_foreign_cookies_are_refused(client):
    now = 1_800_000_000.0
    good = SessionSigner(ADMIN_KEY, clock=lambda: now).issue()
    forged = good[:-2] + ("AA" if not good.endswith("AA") else "BB")
    old = SessionSigner(ADMIN_KEY, clock=lambda: now - 13 * 3600).issue()
    foreign = SessionSigner("another-admin-key").issue()
    fresh = SessionSigner(ADMIN_KEY).issue()
    for token in (forged, old, foreign, "v1.x.y.z", ADMIN_KEY):
        client.cookies.set(COOKIE, token, path="/admin/ui")
        assert client.get("/admin/ui").status_code == 303, token
    client.cookies.set(COOKIE, fresh, path="/admin/ui")
    assert client.get("/admin/ui").status_code == 200


def test_signer_expiry_and_csrf_binding():
    clock = [1_000_000.0]
    signer = SessionSigner("k", max_age=60, clock=lambda: clock[0])
    session = signer.verify(signer.issue())
    assert session is not None
    other = signer.verify(signer.issue())
    assert signer.check_csrf(session, signer.csrf_token(session))
    assert not signer.check_csrf(session, signer.csrf_token(other))
    assert not signer.check_csrf(session, None)
    token = signer.issue()
    clock[0] += 61
    assert signer.verify(token) is None


def test_logout_needs_the_csrf_token_then_ends_the_session(admin):
    page = admin.get("/admin/ui").text
    refused = admin.post("/admin/ui/logout", data={"csrf": "wrong"})
    assert refused.status_code == 403
    assert admin.get("/admin/ui").status_code == 200  # still logged in
    r = admin.post("/admin/ui/logout", data={"csrf": csrf_of(page)})
    assert r.status_code == 303 and r.headers["location"] == "/admin/ui/login"
    assert f'{COOKIE}=""' in r.headers["set-cookie"] or "Max-Age=0" in r.headers["set-cookie"]
    assert admin.get("/admin/ui").status_code == 303


def test_cross_site_posts_are_refused(client):
    r = client.post("/admin/ui/login", data={"key": ADMIN_KEY},
                    headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403 and "set-cookie" not in r.headers
    r = client.post("/admin/ui/login", data={"key": ADMIN_KEY},
                    headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 303


def test_ui_is_disabled_without_an_admin_key(tmp_path, monkeypatch):
    with build_client(tmp_path, monkeypatch, admin_key=None) as c:
        form = c.get("/admin/ui/login")
        assert form.status_code == 403 and "REDRAFT_ADMIN_KEY" in form.text
        assert 'type="password"' not in form.text
        assert log_in(c, key="anything").status_code == 403
        assert c.get("/admin/ui").status_code == 303


# -- pages --------------------------------------------------------------------------------

def test_pages_send_a_no_script_csp_and_the_stylesheet_is_served(admin):
    r = admin.get("/admin/ui")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert r.headers["cache-control"] == "no-store"
    css = admin.get("/admin/ui/ui.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert ".candidates" in css.text


def test_memory_table_lists_counters_and_filters(admin):
    e1 = save(admin, make_experience(key="cover letter, formal", recalled_count=4,
                                     selected_count=3, gain_sum=0.3, gain_count=2))
    save(admin, make_experience(key="poem, children", namespace="team-b",
                                text="Rhyme helps.", created_at=T0 + timedelta(hours=1)))
    page = admin.get("/admin/ui").text
    assert page.index("poem, children") < page.index("cover letter, formal")  # newest first
    row = re.search(r"<tr>\s*<td>team-a</td>.*?</tr>", page, re.S).group(0)
    assert f"/admin/ui/experiences/{e1.id}" in row
    assert re.findall(r'<td class="num">([^<]*)</td>', row) == ["4", "3", "+0.15"]
    found = admin.get("/admin/ui", params={"q": "RHYME"}).text
    assert "poem, children" in found and "cover letter" not in found
    scoped = admin.get("/admin/ui", params={"namespace": "team-a"}).text
    assert "cover letter" in scoped and "poem, children" not in scoped


def test_memory_table_pages_with_a_cursor(admin):
    for i in range(3):
        save(admin, make_experience(key=f"key-{i}", created_at=T0 + timedelta(minutes=i)))
    first = admin.get("/admin/ui", params={"limit": 2}).text
    assert "key-2" in first and "key-1" in first and "key-0" not in first
    next_url = re.search(r'href="([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    second = admin.get(next_url + "&limit=2").text
    assert "key-0" in second and "key-2" not in second and 'rel="next"' not in second
    bad = admin.get("/admin/ui", params={"cursor": "garbage"})
    assert bad.status_code == 400 and "not valid" in bad.text


def test_search_is_semantic_when_the_memory_bank_runs(admin):
    near = save(admin, make_experience(key="wedding toast"))
    far = save(admin, make_experience(key="tax memo"))
    memory = FakeMemory()
    memory.hits = [Hit(near, 0.91), Hit(far, 0.12)]
    admin.app.state.services.memory = memory
    page = admin.get("/admin/ui", params={"q": "speech at a wedding", "namespace": "team-a"})
    assert memory.calls == [("speech at a wedding", "team-a", 50)]
    assert page.text.index("wedding toast") < page.text.index("tax memo")
    assert "0.91" in page.text and "Similarity" in page.text
    text = admin.get("/admin/ui", params={"q": "tax", "mode": "text"}).text
    assert "tax memo" in text and "wedding toast" not in text and len(memory.calls) == 1


def test_experience_page_shows_every_field_chart_and_source_loop(admin):
    loop = save(admin, make_loop())
    e = save(admin, make_experience(source_loop_id=loop.id, recalled_count=7, selected_count=2,
                                    gain_sum=0.5, gain_count=2))
    page = admin.get(f"/admin/ui/experiences/{e.id}").text
    for text in (e.key, e.text, "mini", "team-a", "+0.25", "0.30 → 0.20 → 0.90",
                 "2026-01-05 12:00:00 UTC", f'href="/admin/ui/loops/{loop.id}"'):
        assert text in page, text
    assert page.count('<circle class="score"') == 3
    assert 'class="threshold"' in page  # from the source loop's request


def test_experience_whose_loop_is_gone_says_so(admin):
    e = save(admin, make_experience(source_loop_id=None))
    page = admin.get(f"/admin/ui/experiences/{e.id}").text
    assert "/admin/ui/loops/" not in page.split("Source loop")[1].split("</dd>")[0]
    assert admin.get("/admin/ui/experiences/missing").status_code == 404


def test_loop_list_is_newest_first_with_scores(admin):
    old = save(admin, make_loop(stop_reason="max_rounds", initial_score=0.2, final_score=0.5))
    new = save(admin, make_loop(created_at=T0 + timedelta(hours=1)))
    page = admin.get("/admin/ui/loops").text
    assert page.index(new.id) < page.index(old.id)
    assert "max_rounds" in page and "0.20 → 0.50" in page and "+0.30" in page
    assert "threshold" in page and "0.30 → 0.90" in page


def test_loop_page_shows_request_checklist_candidates_and_chart(admin):
    record = save(admin, make_loop())
    page = admin.get(f"/admin/ui/loops/{record.id}").text
    assert "Be kind." in page and "crisp and direct" in page and "6–10" in page
    columns = re.findall(r'<article class="candidate( best)?" id="candidate-(\d)"', page)
    assert columns == [("", "0"), ("", "1"), (" best", "2")]
    final = page.split('id="candidate-2"')[1]
    assert "round 2" in final and "from #1" in final and "0.90" in final
    assert "lead with the date" in final and "direct" in final and "6–10" in final
    chart = re.search(r'<svg class="chart".*?</svg>', page, re.S).group(0)
    assert chart.count('<circle class="score"') == 3
    assert 'role="img"' in chart and "<title" in chart and "threshold 0.85" in chart
    assert 'stroke-dasharray' in chart and "candidate" in chart and "score" in chart
    no_threshold = save(admin, make_loop(request={"messages": []}))
    other = admin.get(f"/admin/ui/loops/{no_threshold.id}").text
    assert 'class="threshold"' not in other and "server default" in other
    assert admin.get("/admin/ui/loops/missing").status_code == 404


def test_user_supplied_markup_renders_as_text_everywhere(admin):
    loop = save(admin, make_loop(namespace="ns<b>x</b>", model="m<script>x</script>"))
    e = save(admin, make_experience(key="key " + MARKUP, text="text " + MARKUP,
                                    namespace="ns<b>x</b>", source_loop_id=loop.id))
    pages = {
        "memory": admin.get("/admin/ui").text,
        "search": admin.get("/admin/ui", params={"q": "<b>", "mode": "text"}).text,
        "experience": admin.get(f"/admin/ui/experiences/{e.id}").text,
        "loops": admin.get("/admin/ui/loops").text,
        "loop": admin.get(f"/admin/ui/loops/{loop.id}").text,
    }
    for name, html in pages.items():
        tags = Tags(html).tags
        assert "script" not in tags and "b" not in tags and "i" not in tags, name
        assert "&lt;b&gt;" in html, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt; and &lt;b&gt;bold&lt;/b&gt;" in pages["loop"]
    assert "Tone &lt;i&gt;" in pages["loop"]
    assert "key &lt;script&gt;alert(1)&lt;/script&gt;" in pages["search"]


# -- the chart ------------------------------------------------------------------------------

def test_chart_plots_points_running_best_and_escapes_labels():
    points = [Point(0.4, "#0"), Point(0.2, "<b>1</b>", "x <script>"), Point(0.8, "#2")]
    svg = str(trajectory_chart(points, title="Loop <i>", chart_id="c", threshold=0.9))
    assert running_best([0.4, 0.2, 0.8]) == [0.4, 0.4, 0.8]
    ys = [float(y) for y in re.findall(r'<circle class="score" cx="[\d.]+" cy="([\d.]+)"', svg)]
    assert ys[2] < ys[0] < ys[1]  # higher score, higher on the page
    best = re.search(r'class="best" points="([^"]+)"', svg).group(1).split()
    assert best[0].split(",")[1] == best[1].split(",")[1]  # the best line holds through a dip
    assert "<b>" not in svg and "<i>" not in svg and "<script>" not in svg
    assert "&lt;b&gt;1&lt;/b&gt;" in svg and "Loop &lt;i&gt;" in svg
    assert 'aria-labelledby="c-title c-desc"' in svg and "Threshold 0.90" in svg


def test_chart_without_scores_says_so():
    html = str(trajectory_chart([], title="t", chart_id="c"))
    assert "<svg" not in html and "No scores" in html


def test_loop_page_shows_each_candidates_checks_and_the_loops_answer(admin):
    failed = {"kind": "word_count", "passed": False, "measured": "45 words",
              "target": "at least 120 words", "quote": "at least 120 words"}
    passed = {**failed, "passed": True, "measured": "130 words"}
    base = make_loop().candidates
    candidates = (
        replace(base[0], scores={**base[0].scores, "_checks": [failed]}),
        replace(base[1], scores={**base[1].scores, "_checks": [passed], "_answer": True,
                                 "_conformed": ["lowercase", "ends_with"]}),
        replace(base[2], scores={**base[2].scores, "_checks": [failed], "_shrunk": True,
                                 "_looping": True, "_cut": True}),
    )
    record = save(admin, make_loop(candidates=candidates))
    page = admin.get(f"/admin/ui/loops/{record.id}").text
    # The answer is the candidate the loop chose, not the highest total score.
    columns = re.findall(r'<article class="candidate( best)?" id="candidate-(\d)"', page)
    assert columns == [("", "0"), (" best", "1"), ("", "2")]
    draft, second, final = (page.split(f'id="candidate-{i}"')[1].split("</article>")[0]
                            for i in range(3))
    assert "word_count: 45 words; needs at least 120 words" in draft and "FAIL" in draft
    assert "(0/1 passed)" in draft and "(1/1 passed)" in second
    assert "word_count: 130 words; needs at least 120 words" in second
    assert "Dropped most of the text it revised" in final
    assert "Repeats itself in a loop" in final and "Repeats itself" not in second
    assert "stopped at the token limit" in final and "token limit" not in second
    assert "Met in code on the model's text (no word changed): lowercase, ends_with" in second
    assert "Met in code" not in draft and "_conformed" not in page
    assert "_checks" not in page and "_answer" not in page

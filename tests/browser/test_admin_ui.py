"""The admin UI in a real headless Chromium against a real server: log in, search the memory
table, open a loop and its chart, and see stored markup shown as text, never run."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from store import ExperienceRecord, Store
from tests.e2e.conftest import ADMIN_KEY, MODEL, Server

MARKUP = "<script>alert(1)</script> then <b>bold</b>"
SCREENSHOT = "/tmp/redraft-loop.png"


def make_loop(server: Server) -> dict[str, Any]:
    """One loop through the API; its trace as the admin API returns it."""
    with server.client() as sdk:
        reply = sdk.chat.completions.create(
            model=MODEL,
            messages=[{"role": "system", "content": "You write for a general audience."},
                      {"role": "user", "content": "Write a short note inviting the team to a "
                                                  "picnic on Friday."}],
            extra_body={"reflection": {"max_rounds": 3, "threshold": 0.95}})
    loop_id = reply.model_extra["reflection"]["loop_id"]
    trace = httpx.get(f"{server.root}/admin/loops/{loop_id}", timeout=10,
                      headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    trace.raise_for_status()
    return trace.json()


def add_experience(server: Server, loop_id: str) -> ExperienceRecord:
    """Straight into the server's database, as a summarised loop would be stored."""
    record = ExperienceRecord(namespace="default", key="picnic invitation, team, informal",
                              text=f"Markup stays text: {MARKUP}", embedding_model="test",
                              score_trajectory=(0.4, 0.7, 0.95), source_loop_id=loop_id)

    async def insert() -> None:
        store = await Store.open(f"sqlite+aiosqlite:///{server.log.parent / 'redraft.db'}",
                                 migrate=False)
        try:
            await store.experiences.add(record)
        finally:
            await store.close()

    # Playwright's sync API keeps an event loop running on this thread: insert from another.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, insert()).result()
    return record


def test_log_in_search_open_a_loop_and_see_markup_as_text(page: Any, ui_server: Server) -> None:
    trace = make_loop(ui_server)
    scored = [c for c in trace["candidates"] if c["total_score"] is not None]
    assert len(scored) >= 2 and trace["final_score"] > trace["initial_score"]
    experience = add_experience(ui_server, trace["id"])
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    # Every page sends an anonymous visitor to the login form first.
    page.goto(f"{ui_server.root}/admin/ui/loops")
    assert "/admin/ui/login" in page.url
    page.fill("#key", "not-the-key")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text().startswith("invalid admin key")
    page.fill("#key", ADMIN_KEY)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/admin/ui/loops$"))
    assert not [c for c in page.context.cookies() if ADMIN_KEY in c["value"]]
    session = [c for c in page.context.cookies() if c["name"] == "redraft_admin_ui"]
    assert session and session[0]["httpOnly"] and session[0]["sameSite"] == "Strict"

    # Search the memory table (text mode: the row went in by SQL, not through the index).
    page.click("nav >> text=Memory")
    page.fill("input[name=q]", "bold")
    if page.locator("select[name=mode]").count():
        page.select_option("select[name=mode]", "text")
    page.click("form[role=search] button[type=submit]")
    rows = page.locator("#memory-table tbody tr")
    assert rows.count() == 1
    page.screenshot(path="/tmp/redraft-memory.png", full_page=True)
    assert "<b>bold</b>" in rows.first.inner_text()
    assert page.locator("#memory-table b, #memory-table script").count() == 0

    # The experience page: the literal text, no <b> element, nothing ran.
    rows.first.locator("a").first.click()
    page.wait_for_url(re.compile(f"/admin/ui/experiences/{experience.id}$"))
    text = page.locator("#experience-text")
    assert text.inner_text() == f"Markup stays text: {MARKUP}"
    assert text.locator("b").count() == 0 and page.locator("main script").count() == 0
    assert page.locator("svg.chart circle.score").count() == 3

    # Its source loop: the chart has one circle per evaluated candidate, in columns.
    page.click(f"a[href='/admin/ui/loops/{trace['id']}']")
    page.wait_for_url(re.compile(f"/admin/ui/loops/{trace['id']}$"))
    chart = page.locator("svg.chart")
    assert chart.count() == 1 and chart.get_attribute("role") == "img"
    assert page.locator("svg.chart > title").text_content().startswith("Score trajectory")
    assert page.locator("svg.chart circle.score").count() == len(scored)
    assert page.locator("svg.chart line.threshold").count() == 1
    columns = page.locator("article.candidate")
    assert columns.count() == len(trace["candidates"])
    first, second = columns.nth(0).bounding_box(), columns.nth(1).bounding_box()
    assert second["x"] >= first["x"] + first["width"] and abs(second["y"] - first["y"]) < 2
    page.screenshot(path=SCREENSHOT, full_page=True)

    # The loops list links back to it; logging out ends the session.
    page.click("nav >> text=Loops")
    assert page.locator(f"#loops-table a[href='/admin/ui/loops/{trace['id']}']").count() == 1
    page.click("nav >> text=Log out")
    page.wait_for_url(re.compile(r"/admin/ui/login$"))
    page.goto(f"{ui_server.root}/admin/ui")
    assert "/admin/ui/login" in page.url
    assert dialogs == []

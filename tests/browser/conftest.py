"""Browser fixtures: a real headless Chromium (Debian's `chromium`) driven by Playwright.

Playwright's own browser download is never used (`playwright install` needs the network);
the system Chromium is launched by path. Outside CI a missing browser or library skips these
tests with the reason; with CI=true it fails them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Fake, Server

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: the browser tests are required)")
    pytest.skip(reason)


def chromium_path() -> str | None:
    configured = os.environ.get("REDRAFT_TEST_CHROMIUM")
    if configured:
        return configured if Path(configured).exists() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped on purpose: Playwright's sync API keeps an event loop running in this
    thread while it is open, which would break every asyncio test that runs after it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Python Playwright is not installed: pip install playwright")
    executable = chromium_path()
    if executable is None:
        _missing("Chromium is not installed: apt-get install chromium "
                 "(or set REDRAFT_TEST_CHROMIUM to its path)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """redraft with the loop on, in front of the writer fake (loops that improve)."""
    fake = Fake("--responder", "writer")
    try:
        server = Server(fake, tmp_path_factory.mktemp("browser"))
        try:
            yield server
        finally:
            server.close()
    finally:
        fake.close()

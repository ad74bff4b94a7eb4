"""Eval fixtures: the e2e fake writer and a redraft server in front of it (tests/e2e/conftest)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import API_KEY, MODEL, Fake, Server


@pytest.fixture(scope="session")
def eval_writer() -> Iterator[Fake]:
    """The writer fake: the server's upstream and, in most tests, the judge too."""
    fake = Fake("--responder", "writer")
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture(scope="session")
def eval_server(eval_writer: Fake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(eval_writer, tmp_path_factory.mktemp("eval-server"), memory_enabled="false")
    try:
        yield server
    finally:
        server.close()


def eval_args(server: Server, judge_url: str, out: Path, *extra: str) -> list[str]:
    return ["--server", server.base_url, "--api-key", API_KEY, "--model", MODEL,
            "--judge-url", judge_url, "--judge-model", MODEL, "--out", str(out), "--quiet",
            *extra]

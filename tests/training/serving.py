"""Serving a trained checkpoint the way a user does, for the tests that train one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def serve_and_ask(model_dir: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                  prompt: str, max_new_tokens: int) -> Any:
    """`REDRAFT_MODEL=<checkpoint> redraft serve` in-process on the local backend (the loop and
    memory off), asked one chat request through the openai client; returns the completion."""
    from fastapi.testclient import TestClient
    from openai import OpenAI

    from app.factory import create_app
    from app.settings import load_settings

    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL",
                "REDRAFT_DATABASE_URL", "REDRAFT_BACKEND"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("REDRAFT_MODEL", str(model_dir))
    settings = load_settings(data={"dir": data_dir},
                             local={"device": "cpu", "max_new_tokens": max_new_tokens},
                             reflection={"enabled": False}, memory={"enabled": False})
    assert settings.resolved_backend == "local"
    with TestClient(create_app(settings)) as http:
        client = OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http,
                        max_retries=0)
        (served,) = [m.id for m in client.models.list()]
        return client.chat.completions.create(
            model=served, messages=[{"role": "user", "content": prompt}])


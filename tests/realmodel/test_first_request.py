"""What a newcomer meets: `redraft serve` with every default (the loop, memory, the judge's
probe) and the README's curl. SmolLM2 fails the judge's probe, `/ready` says so, and the
answer comes quickly, at a few times a direct answer's tokens, and does not loop."""

from __future__ import annotations

import time

import httpx

from loops.answer import looping
from tests.realmodel.conftest import Server

README = {"model": "smollm2-135m-instruct",
          "messages": [{"role": "user", "content": "Write a 150-word product brief for a quiet "
                                                   "kettle."}],
          "reflection": {"max_rounds": 2, "threshold": 0.85}}


def _judge_verdict(server: Server, seconds: float = 120.0) -> dict:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        judge = httpx.get(server.root + "/ready", timeout=5).json()["judge"]
        if "probe has not finished" not in judge["summary"]:
            return judge
        time.sleep(0.5)
    raise AssertionError("the judge's probe did not finish")


def test_the_readme_curl_on_every_default(converted, tmp_path) -> None:
    (tmp_path / "models").symlink_to(converted.data_dir / "models", target_is_directory=True)
    server = Server(tmp_path, reflection_judge_probe="true")
    try:
        judge = _judge_verdict(server)
        assert judge["usable"] is False and judge["pairs"] == 15
        assert judge["summary"].startswith("judge smollm2-135m-instruct: not used — it ordered")
        started = time.monotonic()
        body = httpx.post(server.base_url + "/chat/completions", json=README, timeout=300)
        seconds = time.monotonic() - started
        direct = httpx.post(server.base_url + "/chat/completions", timeout=300, json={
            **README, "reflection": {"enabled": False}}).json()
    finally:
        server.close()
    assert body.status_code == 200, body.text
    reply = body.json()
    text = reply["choices"][0]["message"]["content"]
    assert text.strip() and not looping(text)
    assert seconds < 60
    # the word count is measured in code: no judge call, at most one revision (a round that
    # moves nothing is not followed), within the token budget of 6 drafts
    usage = reply["reflection"]["usage"]
    assert usage["evaluate"]["calls"] == 0 and usage["rewrite"]["calls"] <= 1
    assert reply["usage"]["total_tokens"] <= 6 * direct["usage"]["total_tokens"]

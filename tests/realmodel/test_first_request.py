"""What a newcomer meets: `redraft serve` with every default (the loop, memory, the judge's and
the reviser's probes) and the README's curl. SmolLM2 fails both probes, `/ready` says so, and
the answer is its draft (with the changes code makes exactly), at no more than 3 times a
direct answer's tokens, and does not loop."""

from __future__ import annotations

import time

import httpx

from loops.answer import looping
from tests.realmodel.conftest import Server

README = {"model": "smollm2-135m-instruct",
          "messages": [{"role": "user", "content": "Write a 150-word product brief for a quiet "
                                                   "kettle."}],
          "reflection": {"max_rounds": 2, "threshold": 0.85}}


def _verdicts(server: Server, seconds: float = 300.0) -> dict:
    """`/ready` once both probes (one after the other) have finished."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        body = httpx.get(server.root + "/ready", timeout=5).json()
        if not any("probe has not finished" in body[role]["summary"]
                   for role in ("judge", "reviser")):
            return body
        time.sleep(0.5)
    raise AssertionError("the probes did not finish")


def test_the_readme_curl_on_every_default(converted, tmp_path) -> None:
    (tmp_path / "models").symlink_to(converted.data_dir / "models", target_is_directory=True)
    server = Server(tmp_path, reflection_judge_probe="true", reflection_reviser_probe="true")
    try:
        ready = _verdicts(server)
        judge, reviser = ready["judge"], ready["reviser"]
        assert judge["usable"] is False and judge["pairs"] == 15
        assert judge["summary"].startswith("judge smollm2-135m-instruct: not used — it ordered")
        assert reviser["usable"] is False and reviser["cases"] == 10
        assert reviser["summary"].startswith("reviser smollm2-135m-instruct: not used — it "
                                             "fixed")
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
    # the word count is measured in code (no judge call) and the reviser failed its probe (no
    # revision): the draft, at the draft's cost
    reflection = reply["reflection"]
    assert reflection["usage"]["evaluate"]["calls"] == 0
    assert reflection["usage"]["rewrite"]["calls"] == 0
    assert reflection["stop_reason"] in ("unrevised", "threshold")
    if reflection["stop_reason"] == "unrevised":
        [why] = reflection["degradations"]
        assert why["cause"] == "reviser_unusable" and why["detail"] == reviser["summary"]
    assert reply["usage"]["total_tokens"] <= 3 * direct["usage"]["total_tokens"]

"""The reviser's probe and what `auto` does with it: a writer is asked for revisions of a text
scored in code only once it has fixed drafts that miss one requirement in a known way;
otherwise the draft, with the exact changes made in code, is the answer at the draft's cost."""

from __future__ import annotations

import asyncio
import json
import time

from fastapi.testclient import TestClient

from app.factory import create_app
from app.settings import load_settings
from bench.fakes.writer import revision_parts
from generation.errors import UpstreamUnavailable
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from loops.probes.reviser import (
    PASS_SHARE,
    PROBE_CASES,
    PROBE_VERSION,
    ReviserStatus,
    fixes,
    probe_reviser,
    revise,
)
from rubrics.checks import conform, run_checks
from tests.unit.test_loops_controller import CHECKLIST, FixedProvider

FIXED = {case.request: case.fixed for case in PROBE_CASES}
# a request stating a length no exact change meets and a case that one does
BRIEF = [{"role": "user", "content": "Write a product brief for a tea kettle in at least 12 "
                                     "words, all in lowercase letters."}]
DRAFT = "A Quiet Kettle for tea."


def knowing(draft: str = DRAFT, kind: type[ScriptedBackend] = ScriptedBackend
            ) -> ScriptedBackend:
    """A writer (of `kind`) that revises every probe case right, and drafts `draft`
    otherwise."""
    def reply(messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Request:\n"):
            request, _, _ = revision_parts(prompt)
            return FIXED.get(request, "a quiet kettle that boils water for your tea in two "
                                      "minutes flat")
        return draft
    return kind(default=reply, model="writer")


def copying(draft: str = DRAFT) -> ScriptedBackend:
    """A writer that gives every draft it is shown back as it was."""
    def reply(messages, params, schema) -> str:
        prompt = messages[-1]["content"]
        return revision_parts(prompt)[1] if prompt.startswith("Request:\n") else draft
    return ScriptedBackend(default=reply, model="writer")


def probed(writer: ScriptedBackend, path=None) -> ReviserStatus:
    status = ReviserStatus(writer, ChatParams(model="writer"), "writer", path)
    asyncio.run(status.run())
    return status


def _loop(writer: ScriptedBackend, status: ReviserStatus | None) -> ReflectionLoop:
    return ReflectionLoop(writer, ScriptedBackend(model="judge"), FixedProvider(CHECKLIST),
                          judge_params=ChatParams(model="judge"), reviser_status=status)


def _run(loop: ReflectionLoop, evaluation: str = "auto", query=BRIEF):
    options = LoopOptions(evaluation=evaluation, max_rounds=2, threshold=0.85, memory=False)
    return asyncio.run(loop.run(query, ChatParams(), options, namespace="d"))


def test_each_case_misses_one_check_no_exact_change_meets_and_can_be_fixed() -> None:
    assert 8 <= len(PROBE_CASES) <= 12
    for case in PROBE_CASES:
        outcomes = run_checks(case.draft, case.checks)
        assert sum(not o.passed for o in outcomes) == 1, case.request
        assert conform(case.draft, case.checks) == (case.draft, ()), case.request
        assert fixes(case, case.fixed) and not fixes(case, case.draft), case.request


def test_a_revision_meeting_the_checks_by_looping_or_off_the_topic_is_no_fix() -> None:
    picnic = next(c for c in PROBE_CASES if "picnic" in c.request)
    looped = " ".join(["Hi team, the picnic is on Saturday at noon."] * 12)
    elsewhere = ("Quarterly revenue rose as the sales division expanded into new markets. "
                 + " ".join(f"Order {i} shipped from the warehouse." for i in range(12)))
    assert run_checks(looped, picnic.checks)[0].passed and not fixes(picnic, looped)
    assert run_checks(elsewhere, picnic.checks)[0].passed and not fixes(picnic, elsewhere)


def test_the_probe_asks_for_a_revision_exactly_as_the_loop_does() -> None:
    case = next(c for c in PROBE_CASES if "beacon" in c.request)
    in_loop = ScriptedBackend([case.draft, case.fixed], model="writer")
    trace = _run(_loop(in_loop, None), "checks", case.query)
    assert trace.stop_reason == "threshold" and trace.answer.text == case.fixed
    in_probe = ScriptedBackend([case.fixed], model="writer")
    text, _ = asyncio.run(revise(in_probe, case, ChatParams()))
    assert text == case.fixed
    assert in_probe.calls[0].messages == in_loop.calls[1].messages


def test_a_revision_giving_the_draft_back_is_asked_anew_as_the_loop_asks_it() -> None:
    case = next(c for c in PROBE_CASES if "sourdough" in c.request)
    in_loop = ScriptedBackend([case.draft, case.draft, case.fixed], model="writer")
    trace = _run(_loop(in_loop, None), "checks", case.query)
    assert trace.stop_reason == "threshold" and trace.answer.retried
    in_probe = ScriptedBackend([case.draft, case.fixed], model="writer")
    text, usage = asyncio.run(revise(in_probe, case, ChatParams()))
    assert text == case.fixed and fixes(case, text)
    assert [(c.messages, c.params) for c in in_probe.calls] == \
        [(c.messages, c.params) for c in in_loop.calls[1:]]
    assert usage.total_tokens == trace.ledger.usage["rewrite"].total_tokens


def test_a_writer_that_fixes_every_case_passes_and_is_probed_once_per_model(tmp_path) -> None:
    path = tmp_path / "reviser_probe.json"
    writer = knowing()
    status = ReviserStatus(writer, ChatParams(model="writer"), "writer", path)
    assert not status.usable and "not finished" in status.line()
    asyncio.run(status.run())
    assert status.usable and status.result.fixed == status.result.cases == len(PROBE_CASES)
    assert len(writer.calls) == len(PROBE_CASES)  # one revision a case
    assert all(c.params.temperature == 0.0 for c in writer.calls)
    kept = json.loads(path.read_text("utf-8"))["writer"]
    assert kept["fixed"] == len(PROBE_CASES) and kept["version"] == PROBE_VERSION
    again = ReviserStatus(writer, ChatParams(model="writer"), "writer", path)
    assert again.usable and len(writer.calls) == len(PROBE_CASES)  # kept: no second probe
    assert not ReviserStatus(writer, ChatParams(model="writer"), "other", path).usable
    assert again.as_dict()["summary"] == (f"reviser writer: used — it fixed {len(PROBE_CASES)} "
                                          f"of {len(PROBE_CASES)} known misses (needs "
                                          f"{PASS_SHARE:.0%})")


def test_cases_are_revised_several_at_once_with_the_verdict_of_one_at_a_time() -> None:
    in_flight, most = 0, 0

    class Counting(ScriptedBackend):
        async def chat(self, *args, **kw):
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.01)
            try:
                return await super().chat(*args, **kw)
            finally:
                in_flight -= 1

    alone = asyncio.run(probe_reviser(knowing(), ChatParams(), "writer", concurrency=1))
    writer = knowing(kind=Counting)
    together = asyncio.run(probe_reviser(writer, ChatParams(), "writer", concurrency=4))
    assert most == 4  # bounded, and more than one
    assert (together.fixed, together.tokens) == (alone.fixed, alone.tokens)


def test_a_writer_that_gives_the_draft_back_fixes_nothing_and_is_not_used() -> None:
    status = probed(copying())
    assert status.result.fixed == 0 and not status.usable
    assert status.line() == (f"reviser writer: not used — it fixed 0 of {len(PROBE_CASES)} "
                             f"known misses (needs {PASS_SHARE:.0%})")


def test_a_probe_its_upstream_failed_is_not_kept_so_the_next_start_tries_again(tmp_path):
    path = tmp_path / "reviser_probe.json"
    writer = ScriptedBackend([UpstreamUnavailable("the upstream is down")], model="writer")
    found = asyncio.run(probe_reviser(writer, ChatParams(), "writer"))
    assert found.error and not found.usable and "its probe failed" in found.line()
    status = ReviserStatus(writer, ChatParams(), "writer", path)
    writer.enqueue(UpstreamUnavailable("the upstream is down"))
    asyncio.run(status.run())
    assert not status.usable and not path.exists()


def test_under_auto_an_unproven_reviser_is_asked_for_nothing_past_the_draft() -> None:
    writer = copying()
    status = probed(writer)
    probe_calls = len(writer.calls)
    trace = _run(_loop(writer, status))
    assert trace.stop_reason == "unrevised" and trace.rounds == 0
    # the draft with the lowercase met in code; the length it misses is left as it is
    assert trace.answer.text == "a quiet kettle for tea." and trace.answer.kind == "draft"
    assert len(writer.calls) == probe_calls + 1
    assert trace.ledger.total == trace.ledger.usage["draft"]
    [why] = trace.degradations
    assert (why.stage, why.cause) == ("rewrite", "reviser_unusable")
    assert why.detail == status.line() and "fixed 0 of" in why.detail


def test_a_reviser_whose_probe_has_not_finished_is_not_asked_either() -> None:
    writer = knowing()
    status = ReviserStatus(writer, ChatParams(model="writer"), "writer")
    trace = _run(_loop(writer, status))
    assert trace.stop_reason == "unrevised" and len(writer.calls) == 1
    assert "has not finished" in trace.degradations[0].detail


def test_a_draft_meeting_every_check_stops_at_the_threshold_with_nothing_degraded() -> None:
    long = "A Quiet Kettle that boils water for your tea in two minutes without a whistle."
    trace = _run(_loop(copying(long), probed(copying(long))))
    assert trace.stop_reason == "threshold" and not trace.degradations
    assert trace.answer.text == long.lower()


def test_a_proven_reviser_revises_under_auto() -> None:
    writer = knowing()
    status = probed(writer)
    trace = _run(_loop(writer, status))
    assert status.usable and trace.stop_reason == "threshold" and trace.rounds == 1
    assert trace.answer.kind == "rewrite" and not trace.degradations
    assert trace.ledger.total.total_tokens > trace.ledger.usage["draft"].total_tokens


def test_checks_asked_for_explicitly_are_revised_whatever_the_probe() -> None:
    writer = copying()
    status = probed(writer)
    writer._default = lambda m, p, s: (
        "a quiet kettle that boils water for your tea in two minutes flat"
        if m[-1]["content"].startswith("Request:\n") else DRAFT)
    trace = _run(_loop(writer, status), "checks")
    assert not status.usable and trace.stop_reason == "threshold" and trace.rounds == 1


def test_ready_reports_the_reviser_and_a_request_costs_its_draft(tmp_path, monkeypatch) -> None:
    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL"):
        monkeypatch.delenv(key, raising=False)
    # no time budget relative to a scripted draft's microseconds: it would end the loop before
    # the draft is scored
    settings = load_settings(data={"dir": tmp_path}, model="writer", memory={"enabled": False},
                             reflection={"reviser_probe": True, "judge_probe": False,
                                         "time_budget_ratio": 0})
    backend = copying()
    with TestClient(create_app(settings, backend=backend)) as client:
        deadline = time.monotonic() + 10
        while "not finished" in (reviser := client.get("/ready").json()["reviser"])["summary"]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert reviser["usable"] is False and reviser["fixed"] == 0
        assert reviser["cases"] == len(PROBE_CASES)
        probe_calls = len(backend.calls)
        body = client.post("/v1/chat/completions", json={"model": "writer", "messages": BRIEF})
    reply = body.json()
    assert reply["choices"][0]["message"]["content"] == "a quiet kettle for tea."
    assert reply["reflection"]["stop_reason"] == "unrevised"
    assert [d["cause"] for d in reply["reflection"]["degradations"]] == ["reviser_unusable"]
    [draft] = backend.calls[probe_calls:]
    assert reply["usage"]["total_tokens"] == reply["reflection"]["usage"]["draft"]["total_tokens"]
    assert json.loads((tmp_path / "reviser_probe.json").read_text("utf-8"))["writer"]["fixed"] == 0
    assert draft.messages[-1]["content"] == BRIEF[0]["content"]

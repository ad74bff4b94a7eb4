"""The reflection loop end to end: the official SDK with `extra_body={"reflection": ...}`.

The writer fake scores a text by its revision marks, so every rewrite scores higher and the
loop's course is deterministic; the assertions below hold for any such judge.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.e2e.conftest import ADMIN_KEY, API_KEY, MODEL, Fake, Server, data_events, sse_lines

STOP_REASONS = {"threshold", "max_rounds", "budget", "degraded"}
STAGES = ("checklist", "draft", "memory", "evaluate", "reflect", "rewrite")
TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens")


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You write for a general audience."},
            {"role": "user", "content": text}]


@pytest.fixture
def sdk(looping: Server) -> Any:
    with looping.client() as c:
        yield c


def reflect(client: OpenAI, messages: list[dict[str, str]], **options: Any) -> Any:
    return client.chat.completions.create(model=MODEL, messages=messages,
                                          extra_body={"reflection": options})


def check_algorithm_1(summary: dict[str, Any], threshold: float, max_rounds: int,
                      candidates: int = 1) -> None:
    """The stopping rule: stop as soon as the best score reaches the threshold, else at T."""
    scores, rounds = summary["scores"], summary["rounds"]
    assert len(scores) == 1 + rounds * candidates
    assert summary["final_score"] == max(scores)
    assert summary["stop_reason"] in STOP_REASONS
    for r in range(rounds):  # no earlier round had reached the threshold
        assert max(scores[: 1 + r * candidates]) < threshold
    if summary["final_score"] >= threshold:
        assert summary["stop_reason"] == "threshold"
    else:
        assert summary["stop_reason"] == "max_rounds"
        assert rounds == max_rounds


def stage_sum(usage_by_stage: dict[str, Any]) -> dict[str, int]:
    return {k: sum(usage_by_stage[s][k] for s in STAGES) for k in TOKENS}


def test_loop_response_carries_the_reflection_summary(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a short product description for a solar lantern"),
                   max_rounds=2, threshold=0.95, return_trace=True)

    summary = resp.model_extra["reflection"]
    assert len(summary["loop_id"]) == 32
    assert len(summary["checklist_id"]) == 32
    assert summary["checklist_source"] == "generated"
    assert summary["rounds"] == 2  # the writer's draft needs two rewrites to pass 0.95
    assert summary["scores"] == sorted(summary["scores"])  # each rewrite scores higher
    assert all(0 <= s <= 1 for s in summary["scores"])
    check_algorithm_1(summary, threshold=0.95, max_rounds=2)
    assert resp.choices[0].finish_reason == "stop"
    assert "(rev. 2)" in resp.choices[0].message.content  # the answer is the second rewrite


def test_loop_usage_counts_every_hidden_call(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a welcome note for new library members"),
                   max_rounds=2, threshold=0.95, return_trace=True)

    summary = resp.model_extra["reflection"]
    by_stage = summary["usage"]
    assert set(STAGES) <= set(by_stage)
    usage = resp.usage.model_dump(include=set(TOKENS))
    assert usage == stage_sum(by_stage)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert summary["trace"]["total_usage"] == usage
    assert sum(by_stage[s]["calls"] for s in STAGES) == writer.chat_requests()
    assert by_stage["draft"]["calls"] == 1
    assert by_stage["rewrite"]["calls"] == summary["rounds"]


def test_trace_lists_candidates_and_the_answer_is_the_best(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a thank-you letter to a volunteer firefighter"),
                   max_rounds=2, threshold=0.95, return_trace=True)

    summary = resp.model_extra["reflection"]
    candidates = summary["trace"]["candidates"]
    assert [c["position"] for c in candidates] == list(range(len(summary["scores"])))
    assert [c["kind"] for c in candidates] == ["draft"] + ["rewrite"] * summary["rounds"]
    assert [c["round"] for c in candidates] == list(range(summary["rounds"] + 1))
    assert [round(c["score"], 4) for c in candidates] == summary["scores"]
    best = max(candidates, key=lambda c: c["score"])
    assert resp.choices[0].message.content == best["text"]
    assert summary["trace"]["answer_position"] == best["position"]
    dimensions = [d["name"] for d in summary["trace"]["checklist"]["dimensions"]]
    assert 4 <= len(dimensions) <= 8
    assert set(candidates[0]["scores"]) == set(dimensions)  # every dimension scored
    assert all(c["parent"] == c["position"] - 1 for c in candidates[1:])


def test_trace_is_only_sent_when_asked(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a short bio for a jazz pianist"), max_rounds=1)

    assert "trace" not in resp.model_extra["reflection"]


def test_threshold_reached_early_stops_the_loop(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a haiku about morning fog"), max_rounds=5, threshold=0.7)

    summary = resp.model_extra["reflection"]
    assert summary["stop_reason"] == "threshold"
    assert summary["rounds"] < 5
    check_algorithm_1(summary, threshold=0.7, max_rounds=5)


def test_zero_rounds_returns_the_evaluated_draft(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a limerick about a lighthouse keeper"), max_rounds=0,
                   threshold=1.0)

    summary = resp.model_extra["reflection"]
    assert (summary["rounds"], len(summary["scores"])) == (0, 1)
    assert summary["stop_reason"] == "max_rounds"
    assert "(rev." not in resp.choices[0].message.content
    assert summary["usage"]["rewrite"]["calls"] == 0


def test_a_form_requirement_is_met_in_code_and_the_trace_says_so(sdk: OpenAI,
                                                                 writer: Fake) -> None:
    messages = ask("Describe morning fog in all lowercase letters.")
    resp = reflect(sdk, messages, max_rounds=0, threshold=1.0, return_trace=True)
    text = resp.choices[0].message.content
    assert text == text.lower() and "the short answer comes first" in text
    draft = resp.model_extra["reflection"]["trace"]["candidates"][0]
    assert draft["conformed"] == ["lowercase"]
    assert [(c["kind"], c["passed"]) for c in draft["checks"]] == [("lowercase", True)]

    # off for one request: the model's own capitals stay, and the check says they fail
    resp = reflect(sdk, messages, max_rounds=0, threshold=1.0, return_trace=True,
                   conform=False)
    assert resp.choices[0].message.content != resp.choices[0].message.content.lower()
    draft = resp.model_extra["reflection"]["trace"]["candidates"][0]
    assert draft["conformed"] == []
    assert [(c["kind"], c["passed"]) for c in draft["checks"]] == [("lowercase", False)]


def test_k_candidates_per_round(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write an apology email for a late delivery"), max_rounds=1,
                   threshold=1.0, candidates=3, return_trace=True)

    summary = resp.model_extra["reflection"]
    check_algorithm_1(summary, threshold=1.0, max_rounds=1, candidates=3)
    assert [c["round"] for c in summary["trace"]["candidates"]] == [0, 1, 1, 1]
    assert summary["usage"]["rewrite"]["calls"] == 3


def test_n_2_runs_two_loops(sdk: OpenAI, writer: Fake) -> None:
    resp = sdk.chat.completions.create(
        model=MODEL, messages=ask("Write a toast for a retirement party"), n=2,
        extra_body={"reflection": {"max_rounds": 1, "threshold": 1.0}})

    assert [c.index for c in resp.choices] == [0, 1]
    loops = resp.model_extra["reflection"]["choices"]
    assert len(loops) == 2
    assert loops[0]["loop_id"] != loops[1]["loop_id"]
    totals = [stage_sum(loop["usage"]) for loop in loops]
    assert resp.usage.model_dump(include=set(TOKENS)) == {
        k: totals[0][k] + totals[1][k] for k in TOKENS}
    # The two loops share one checklist build: three agent calls, not six.
    assert sorted(loop["checklist_source"] for loop in loops) == ["cache", "generated"]
    assert sum(loop["usage"]["checklist"]["calls"] for loop in loops) == 3
    assert loops[0]["checklist_id"] == loops[1]["checklist_id"]


def test_sampling_fields_reach_the_writer_calls_not_the_judge(sdk: OpenAI,
                                                              writer: Fake) -> None:
    sdk.chat.completions.create(
        model=MODEL, messages=ask("Write a story about an owl"), temperature=0.7,
        extra_body={"top_k": 5, "reflection": {"max_rounds": 1, "threshold": 1.0}})

    bodies = writer.bodies()
    texts = [b for b in bodies if "response_format" not in b]  # draft and rewrite
    judged = [b for b in bodies if "response_format" in b]  # agents, judge, reflection
    assert len(texts) == 2
    assert all((b["top_k"], b["temperature"]) == (5, 0.7) for b in texts)
    assert judged
    assert all("top_k" not in b and b["temperature"] == 0 for b in judged)


def test_checklist_from_a_pack_skips_the_coding_agents(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a notice about a water outage"), max_rounds=1,
                   checklist="generic:general-en", return_trace=True)

    summary = resp.model_extra["reflection"]
    assert summary["checklist_source"] == "pack"
    assert [d["name"] for d in summary["trace"]["checklist"]["dimensions"]] == [
        "Task fulfilment", "Structure and coherence", "Style and audience fit",
        "Accuracy and grounding", "Format and constraints"]
    assert summary["usage"]["checklist"]["calls"] == 0
    kinds = writer.stats().get("calls_by_kind", {})
    assert not {"open_coding", "axial_coding", "selective_coding"} & set(kinds)


@pytest.mark.parametrize("ref", ["nopack:x", "generic:no-such-entry", "no-colon"])
def test_unknown_checklist_pack_is_not_found(sdk: OpenAI, writer: Fake, ref: str) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        reflect(sdk, ask("Write anything"), checklist=ref)

    assert caught.value.status_code == 404
    assert caught.value.body["param"] == "reflection.checklist"


def test_the_same_query_reuses_its_checklist(sdk: OpenAI, writer: Fake) -> None:
    messages = ask("Write a packing list for a weekend hike")
    first = reflect(sdk, messages, max_rounds=0).model_extra["reflection"]
    second = reflect(sdk, messages, max_rounds=0).model_extra["reflection"]

    assert second["checklist_id"] == first["checklist_id"]
    assert second["checklist_source"] == "cache"
    assert second["usage"]["checklist"]["calls"] == 0


def test_per_request_disable_passes_through(sdk: OpenAI, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a riddle about clocks"), enabled=False)

    assert resp.model_extra["reflection"] == {"skipped": "disabled"}
    assert writer.chat_requests() == 1
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


@pytest.mark.parametrize(("extra", "why"), [
    ({"tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {}}}}]}, "tools"),
    ({"response_format": {"type": "json_object"}}, "JSON"),
])
def test_requests_the_loop_cannot_improve_pass_through(sdk: OpenAI, writer: Fake,
                                                       extra: dict[str, Any], why: str) -> None:
    resp = sdk.chat.completions.create(model=MODEL, messages=ask("Write a riddle"), **extra)

    assert why in resp.model_extra["reflection"]["skipped"]
    assert writer.chat_requests() == 1


# -- streaming --------------------------------------------------------------------------------

def _comments(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[2:]) for line in lines if line.startswith(": {")]


def test_stream_sends_progress_then_the_same_answer(sdk: OpenAI, looping: Server,
                                                    writer: Fake) -> None:
    messages = ask("Write a two-line poem about autumn leaves")
    options = {"max_rounds": 2, "threshold": 0.95}
    plain = reflect(sdk, messages, **options)
    lines = sse_lines(looping, {"model": MODEL, "messages": messages, "stream": True,
                                "stream_options": {"include_usage": True},
                                "reflection": options})

    first_data = next(i for i, line in enumerate(lines) if line.startswith("data: "))
    assert all(line.startswith(": ") for line in lines[:first_data])  # progress comes first
    assert not any(line.startswith(": ") for line in lines[first_data:])
    events = data_events(lines)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == plain.choices[0].message.content
    assert sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")) > 1
    [final] = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    summary = final["reflection"]
    check_algorithm_1(summary, threshold=0.95, max_rounds=2)
    evaluated = [e for e in _comments(lines) if e["event"] == "evaluated"]
    assert [round(e["score"], 4) for e in evaluated] == summary["scores"]
    assert [e["round"] for e in evaluated] == list(range(summary["rounds"] + 1))
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == stage_sum(summary["usage"])


def test_sdk_stream_ignores_progress_comments(sdk: OpenAI, writer: Fake) -> None:
    messages = ask("Write a slogan for a bicycle repair shop")
    options = {"max_rounds": 1, "threshold": 1.0}
    plain = reflect(sdk, messages, **options)
    stream = sdk.chat.completions.create(model=MODEL, messages=messages, stream=True,
                                         extra_body={"reflection": options})

    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == plain.choices[0].message.content


def _stream_and_break(server: Server, writer: Fake, body: dict[str, Any],
                      when: str) -> list[str]:
    """Stream `body`; once a progress line containing `when` arrives, the upstream goes down."""
    lines: list[str] = []
    with httpx.stream("POST", server.base_url + "/chat/completions", json=body,
                      headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if not line:
                continue
            if when in line and not any(when in seen for seen in lines):
                writer.fail(503, times=100)
            lines.append(line)
    return lines


def test_upstream_down_while_building_the_checklist_degrades_to_the_draft(
        looping: Server, writer: Fake) -> None:
    # 0.4 s a call: the draft is back while the three coding agents still have two calls to go.
    writer.control("config", {"latency": 0.4})
    body = {"model": MODEL, "messages": ask("Write a fable about a patient tortoise"),
            "stream": True, "reflection": {"max_rounds": 2}}
    lines = _stream_and_break(looping, writer, body, '"drafted"')

    assert lines[0].startswith(": {")
    events = data_events(lines)
    assert events[-1] == "[DONE]"
    assert not any("error" in e for e in events[:-1])
    chunks = events[:-1]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    [final] = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert final["reflection"]["stop_reason"] == "degraded"
    assert final["reflection"]["checklist_source"] == "pack"  # the generic fallback rubric
    assert text.startswith("Write a fable about a patient tortoise")


def test_upstream_down_after_the_first_evaluation_degrades_to_the_draft(
        looping: Server, writer: Fake) -> None:
    writer.control("config", {"latency": 0.2})
    body = {"model": MODEL, "messages": ask("Write a fable about a hasty hare"),
            "stream": True, "reflection": {"max_rounds": 2, "threshold": 0.99}}
    lines = _stream_and_break(looping, writer, body, '"evaluated"')

    events = data_events(lines)
    assert events[-1] == "[DONE]"
    assert not any("error" in e for e in events[:-1])
    chunks = events[:-1]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    [final] = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    summary = final["reflection"]
    assert summary["stop_reason"] == "degraded"
    assert len(summary["scores"]) == 1
    assert summary["final_score"] == summary["scores"][0]
    assert text.startswith("Write a fable about a hasty hare")
    assert "(rev." not in text  # the best so far is the draft


def test_upstream_down_before_the_stream_starts_is_a_real_status(sdk: OpenAI,
                                                                 writer: Fake) -> None:
    writer.fail(503, times=100)
    with pytest.raises(openai.InternalServerError) as caught:
        sdk.chat.completions.create(model=MODEL, messages=ask("Write a short ode"), stream=True)

    assert caught.value.status_code == 503


def test_client_disconnect_cancels_the_loop(looping: Server, writer: Fake) -> None:
    writer.hang(1)  # the draft never comes back
    with looping.client(timeout=0.5) as c, pytest.raises(openai.APITimeoutError):
        reflect(c, ask("Write a eulogy for a houseplant"))

    stats = writer.wait_for(lambda s: s["disconnects"] == 1 and s["in_flight"] == 0)
    assert (stats["disconnects"], stats["in_flight"]) == (1, 0)
    settled = writer.chat_requests()
    time.sleep(0.3)
    assert writer.chat_requests() == settled  # nothing more was started for the dead loop


def test_closing_a_loop_stream_stops_the_loop(looping: Server, writer: Fake) -> None:
    writer.control("config", {"latency": 0.3})
    body = {"model": MODEL, "messages": ask("Write a story about a clever fox"), "stream": True,
            "reflection": {"max_rounds": 3, "threshold": 1.0}}
    with httpx.stream("POST", looping.base_url + "/chat/completions", json=body,
                      headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30) as resp:
        first = next(line for line in resp.iter_lines() if line)
    assert first.startswith(": {")  # the loop was under way when the client left

    # The server may notice the disconnect a moment after a call ends: the count settles when
    # three more calls' worth of latency passes with none started.
    settled, deadline = -1, time.monotonic() + 10
    while time.monotonic() < deadline:
        writer.wait_for(lambda s: s["in_flight"] == 0)
        if writer.chat_requests() == settled:
            break
        settled = writer.chat_requests()
        time.sleep(0.9)
    assert writer.chat_requests() == settled, "the upstream is still being called"
    assert settled < 5  # a whole loop makes about 10 calls


# -- loop records -----------------------------------------------------------------------------

def test_admin_lists_and_shows_the_loop(sdk: OpenAI, looping: Server, writer: Fake) -> None:
    resp = reflect(sdk, ask("Write a short guide to brewing green tea"), max_rounds=2,
                   threshold=0.95)
    summary = resp.model_extra["reflection"]
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}

    listing = httpx.get(looping.root + "/admin/loops", headers=admin)
    assert listing.status_code == 200
    listed = {row["id"]: row for row in listing.json()["data"]}
    assert summary["loop_id"] in listed
    row = listed[summary["loop_id"]]
    assert (row["stop_reason"], row["rounds"], row["model"]) == (
        summary["stop_reason"], summary["rounds"], MODEL)
    assert round(row["final_score"], 4) == summary["final_score"]

    one = httpx.get(f"{looping.root}/admin/loops/{summary['loop_id']}", headers=admin)
    assert one.status_code == 200
    record = one.json()
    assert record["stop_reason"] == summary["stop_reason"]
    assert record["checklist_id"] == summary["checklist_id"]
    assert len(record["candidates"]) == len(summary["scores"])
    assert record["request"]["reflection"] == {"max_rounds": 2, "threshold": 0.95}
    assert record["request"]["messages"][-1]["content"] == (
        "Write a short guide to brewing green tea")


def test_admin_loops_need_the_admin_key(looping: Server) -> None:
    user = httpx.get(looping.root + "/admin/loops", headers={"Authorization": f"Bearer {API_KEY}"})
    nobody = httpx.get(looping.root + "/admin/loops")
    missing = httpx.get(looping.root + "/admin/loops/" + "0" * 32,
                        headers={"Authorization": f"Bearer {ADMIN_KEY}"})

    assert user.status_code == 403
    assert nobody.status_code == 401
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"

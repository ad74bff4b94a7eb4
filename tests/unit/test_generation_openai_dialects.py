"""Structured outputs on every OpenAI-compatible upstream: the start-up probe finds the one
form an upstream takes, the schema sent keeps to what its engine compiles, and redraft's real
agents, judges and loops run through each of them without degrading."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import orjson
import pytest

from bench.fakes.structured import LLAMA_GRAMMAR_ERROR
from bench.fakes.upstream import FakeUpstream, run_in_thread
from bench.fakes.writer import REVISION_MARK, WriterResponder
from generation.openai import OpenAIBackend
from generation.openai.dialects import (
    LLAMA_CPP,
    LLAMA_ITEMS_BOUND,
    LLAMA_STRING_BOUND,
    PROBE_ORDER,
    SCHEMA_INSTRUCTION,
    dialect,
    loosen,
    size_bound,
    with_schema_prompt,
)
from generation.schemas import EVIDENCE_CHARS, integer, obj, text
from generation.structured import conform
from generation.types import ChatParams
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from rubrics.agents import build_checklist
from rubrics.evaluate import evaluate
from tests.unit.test_bench_fake_writer import QUERY, Provider

# fake mode -> (the form the probe must pick, the engine it must name)
MODES = {
    "json_schema": ("json_schema", "generic"),
    "llama-server": ("json_schema", "llama.cpp"),
    "json_object_schema": ("json_object_schema", "llama.cpp"),
    "structured_outputs": ("structured_outputs", "generic"),
    "guided_json": ("guided_json", "generic"),
    "ignore": ("none", "generic"),
}
JUDGED = obj({"evidence": text(EVIDENCE_CHARS), "score": integer(1, 10)})


@pytest.fixture(scope="module")
def served() -> Iterator[FakeUpstream]:
    with run_in_thread(responder=WriterResponder(draft_score=0.5, step=0.2)) as (_, fake):
        yield fake


@pytest.fixture
def fake(served: FakeUpstream) -> FakeUpstream:
    served.reset()
    served.structured = "any"
    return served


async def started(fake: FakeUpstream, structured: str = "auto") -> OpenAIBackend:
    backend = OpenAIBackend([fake.base_url or ""], model="fake-model", retries=1, backoff=0.01,
                            structured=structured, structured_probe_timeout=10)
    await backend.start()
    return backend


@pytest.fixture
async def closing() -> AsyncIterator[list[OpenAIBackend]]:
    backends: list[OpenAIBackend] = []
    yield backends
    for backend in backends:
        await backend.aclose()


# -- the probe ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(MODES))
async def test_the_probe_picks_the_one_form_the_upstream_takes(
        fake: FakeUpstream, closing: list[OpenAIBackend], mode: str) -> None:
    fake.structured = mode
    backend = await started(fake)
    closing.append(backend)
    status = backend.structured_status()
    form, engine = MODES[mode]
    assert status["decided_by"] == "probe"
    assert (status["dialect"]["form"], status["dialect"]["engine"]) == (form, engine)
    assert list(status["probe"]) == list(PROBE_ORDER)  # every form has its line in /health
    tried = [f for f, said in status["probe"].items() if not said.startswith("not tried")]
    assert tried == list(PROBE_ORDER[:PROBE_ORDER.index(form) + 1] if form != "none"
                         else PROBE_ORDER)
    assert status["probe"].get(form, "chosen") == "chosen"
    # Every form before it was refused as the engine refuses it (or ignored, for `ignore`).
    if mode == "json_object_schema":
        assert status["probe"]["json_schema"] == "refused (HTTP 500)"
    if mode == "ignore":
        assert all(v.startswith("not supported") for v in status["probe"].values())
        assert not fake.refusals
    elif form != "json_schema":
        assert len(fake.refusals) == PROBE_ORDER.index(form)


async def test_an_upstream_that_takes_every_form_gets_the_standard_one(
        fake: FakeUpstream, closing: list[OpenAIBackend]) -> None:
    backend = await started(fake)
    closing.append(backend)
    assert backend.structured_status()["dialect"]["form"] == "json_schema"
    assert fake.chat_requests == 1


async def test_a_named_form_is_used_without_a_probe(fake: FakeUpstream,
                                                    closing: list[OpenAIBackend]) -> None:
    fake.structured = "guided_json"
    backend = await started(fake, "guided_json")
    closing.append(backend)
    assert fake.chat_requests == 0
    assert backend.structured_status()["decided_by"] == "setting"
    answer = await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    assert set(orjson.loads(answer.text)) == {"evidence", "score"}
    assert "guided_json" in fake.bodies[-1] and "response_format" not in fake.bodies[-1]


async def test_a_down_upstream_does_not_fail_start_up_and_is_probed_at_first_use(
        fake: FakeUpstream, closing: list[OpenAIBackend]) -> None:
    fake.structured = "json_object_schema"
    fake.fail(503, times=1)  # llama-server answers 503 while it loads the model
    backend = await started(fake)
    closing.append(backend)
    status = backend.structured_status()
    assert status["dialect"] is None and status["decided_by"] == "pending"
    assert "next structured call" in status["note"]
    backend._last_decision -= 60  # the re-probe interval has passed
    answer = await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    assert set(orjson.loads(answer.text)) == {"evidence", "score"}
    assert backend.structured_status()["dialect"]["form"] == "json_object_schema"


async def test_a_hung_upstream_holds_start_up_no_longer_than_the_probe_timeout(
        fake: FakeUpstream) -> None:
    import time

    fake.hang(times=1)
    backend = OpenAIBackend([fake.base_url or ""], model="fake-model", structured="auto",
                            structured_probe_timeout=0.5)
    began = time.monotonic()
    await backend.start()
    try:
        assert time.monotonic() - began < 2
        status = backend.structured_status()
        assert status["dialect"] is None and status["probe"] == {
            "json_schema": "no answer (TimeoutError)"}
    finally:
        await backend.aclose()


async def test_an_unreachable_upstream_leaves_start_up_quick_and_undecided() -> None:
    backend = OpenAIBackend(["http://127.0.0.1:9/v1"], model="m", retries=0,
                            structured="auto", connect_timeout=1)
    await backend.start()
    try:
        assert backend.structured_status()["dialect"] is None
    finally:
        await backend.aclose()


# -- what is sent, and what is enforced after ----------------------------------------------------
def test_llama_rules_cut_long_bounds_to_their_limit_drop_unknown_keywords_keep_the_rest(
        ) -> None:
    schema = obj({"evidence": text(EVIDENCE_CHARS), "name": text(80),
                  "tags": {"type": "array", "items": text(40), "maxItems": 500,
                           "uniqueItems": True},
                  "kind": {"type": "string", "enum": ["a", "b"]}, "score": integer(1, 10)})
    sent = loosen(schema, LLAMA_CPP)
    props = sent["properties"]
    assert props["evidence"]["maxLength"] == LLAMA_STRING_BOUND
    assert props["name"]["maxLength"] == 80
    assert props["tags"]["maxItems"] == LLAMA_ITEMS_BOUND and "uniqueItems" not in props["tags"]
    assert props["tags"]["items"]["maxLength"] == 40
    assert props["kind"]["enum"] == ["a", "b"] and props["score"] == integer(1, 10)
    assert sent["required"] == schema["required"] and sent["additionalProperties"] is False
    assert schema["properties"]["evidence"]["maxLength"] == EVIDENCE_CHARS  # input kept
    assert loosen(schema, dialect("json_schema").rules) is schema


def test_a_minimum_over_the_limit_is_dropped_with_its_maximum() -> None:
    long = {"type": "string", "minLength": 300, "maxLength": 900}
    assert loosen(long, LLAMA_CPP) == {"type": "string"}
    wide = {"type": "array", "items": text(10), "minItems": 3, "maxItems": 500}
    assert loosen(wide, LLAMA_CPP) == {"type": "array", "items": text(10), "minItems": 3,
                                       "maxItems": LLAMA_ITEMS_BOUND}


def test_conform_cuts_strings_to_the_full_schema_bounds() -> None:
    value = {"evidence": "x" * 1500, "name": "short", "extra": "kept"}
    schema = obj({"evidence": text(EVIDENCE_CHARS), "name": text(80)})
    assert conform(value, schema) == {"evidence": "x" * EVIDENCE_CHARS, "name": "short",
                                      "extra": "kept"}


def test_the_size_bound_covers_the_longest_valid_answer() -> None:
    longest = {"evidence": "\u0001" * EVIDENCE_CHARS, "score": -(10**18)}
    assert len(orjson.dumps(longest)) <= size_bound(JUDGED) <= 2 * len(orjson.dumps(longest))
    assert size_bound({"type": "string"}) is None
    assert size_bound({"type": "array", "items": text(10)}) is None  # no maxItems


async def test_a_long_max_length_reaches_llama_cpp_at_its_limit_and_is_enforced_after(
        fake: FakeUpstream, closing: list[OpenAIBackend]) -> None:
    fake.structured = "json_object_schema"
    backend = await started(fake)
    closing.append(backend)
    long_text = "y" * 3000
    fake.responder = lambda req, i: orjson.dumps({"evidence": long_text, "score": 4}).decode()
    try:
        answer = await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    finally:
        fake.responder = WriterResponder(draft_score=0.5, step=0.2)
    sent = fake.bodies[-1]["response_format"]
    assert sent["type"] == "json_object"
    assert sent["schema"]["properties"]["evidence"]["maxLength"] == LLAMA_STRING_BOUND
    assert fake.bodies[-1]["max_tokens"] == size_bound(JUDGED)  # the bound that replaces it
    assert orjson.loads(answer.text) == {"evidence": "y" * EVIDENCE_CHARS, "score": 4}


async def test_the_fake_refuses_what_llama_cpp_refuses(fake: FakeUpstream,
                                                       closing: list[OpenAIBackend]) -> None:
    fake.structured = "json_object_schema"
    backend = OpenAIBackend([fake.base_url or ""], model="fake-model", retries=0,
                            structured="json_schema")
    closing.append(backend)
    await backend.start()
    with pytest.raises(Exception, match="Internal Server Error"):
        await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    fake.structured = "llama-server"
    backend._last_decision -= 60
    # Sent whole (as an engine-blind client would), the long bound is llama.cpp's 500.
    backend._dialect = dialect("json_schema")
    with pytest.raises(Exception, match="failed to parse grammar"):
        await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    assert fake.refusals[-1] == (500, LLAMA_GRAMMAR_ERROR)


async def test_a_named_json_schema_on_llama_server_keeps_to_llama_cpp_rules(
        fake: FakeUpstream, closing: list[OpenAIBackend]) -> None:
    fake.structured = "llama-server"
    backend = await started(fake, "json_schema")
    closing.append(backend)
    answer = await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    assert set(orjson.loads(answer.text)) == {"evidence", "score"} and not fake.refusals
    assert backend.structured_status()["dialect"]["engine"] == "llama.cpp"


async def test_none_states_the_schema_in_the_prompt(fake: FakeUpstream,
                                                    closing: list[OpenAIBackend]) -> None:
    fake.structured = "ignore"
    backend = await started(fake)
    closing.append(backend)
    answer = await backend.chat(QUERY, ChatParams(), schema=JUDGED)
    body = fake.bodies[-1]
    assert "response_format" not in body
    assert SCHEMA_INSTRUCTION in body["messages"][-1]["content"]
    assert body["messages"][-1]["content"].startswith(QUERY[-1]["content"])
    assert set(orjson.loads(answer.text)) == {"evidence", "score"}


def test_the_schema_prompt_goes_into_the_last_user_turn_or_a_new_one() -> None:
    schema = {"type": "object"}
    into = with_schema_prompt(QUERY, schema)
    assert len(into) == len(QUERY) and into[0] == QUERY[0]
    note = SCHEMA_INSTRUCTION + '{"type":"object"}'
    assert into[-1]["content"] == f"{QUERY[-1]['content']}\n\n{note}"
    after = with_schema_prompt([*QUERY, {"role": "assistant", "content": "{}"}], schema)
    assert after[-1] == {"role": "user", "content": note}
    assert QUERY[-1]["content"].endswith("hours.")  # the caller's messages are kept


# -- the real agents, judges and loops through each dialect ------------------------------------
@pytest.mark.parametrize("mode", list(MODES))
async def test_agents_and_judges_do_not_degrade_in_any_dialect(
        fake: FakeUpstream, closing: list[OpenAIBackend], mode: str) -> None:
    fake.structured = mode
    backend = await started(fake)
    closing.append(backend)
    probe_refusals = len(fake.refusals)
    probes = fake.responder.counts["unknown"]  # type: ignore[union-attr]
    params = ChatParams(max_tokens=4096)
    built = await build_checklist(backend, QUERY, params)
    assert not built.degraded and built.calls == 3, built.error
    fused = await build_checklist(backend, QUERY, params, mode="fused")
    assert not fused.degraded and fused.calls == 1, fused.error
    for evaluation in ("joint", "per_dimension"):
        result = await evaluate(backend, QUERY, "Spring hours start Monday. We open at nine.",
                                built.checklist, params, mode=evaluation)  # type: ignore[arg-type]
        assert not result.degraded and result.calls == (
            1 if evaluation == "joint" else len(built.checklist.dimensions))
    assert len(fake.refusals) == probe_refusals  # no structured call was refused
    assert fake.responder.counts["unknown"] == probes  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["json_object_schema", "llama-server", "ignore"])
async def test_a_loop_runs_through_the_upstream_with_nothing_degraded(
        fake: FakeUpstream, closing: list[OpenAIBackend], mode: str) -> None:
    fake.structured = mode
    backend = await started(fake)
    closing.append(backend)
    probe_refusals = len(fake.refusals)
    loop = ReflectionLoop(backend, backend, Provider(backend),  # type: ignore[arg-type]
                          judge_params=ChatParams(max_tokens=4096))
    trace = await loop.run(QUERY, ChatParams(), LoopOptions(max_rounds=5, threshold=0.9,
                                                            memory=False), namespace="default")
    assert trace.stop_reason == "threshold" and trace.rounds == 2
    assert trace.answer.text.count(REVISION_MARK) == 2
    assert len(fake.refusals) == probe_refusals


@pytest.mark.parametrize(("answer", "verdict"), [
    # llama.cpp's grammar leaves integer bounds out: a model's guess at a number is no reason
    # to refuse the form
    ({"redraft_probe": "structured", "rounds": 10}, "ok"),
    ({"redraft_probe": "structured", "rounds": 3}, "ok"),
    ({"answer": "hello"}, "not supported"),
    ("Sure! Here is a JSON object.", "not supported"),
    ({"redraft_probe": "structural", "rounds": 3}, "broke the schema (redraft_probe is"),
    ({"redraft_probe": "structured", "rounds": "3"}, "broke the schema (rounds is '3'"),
    ({"redraft_probe": "structured", "rounds": 3, "extra": 1}, "broke the schema (keys"),
    ({"redraft_probe": "structured"}, "broke the schema (keys"),
])
def test_the_probe_judges_what_the_form_guarantees(answer: object, verdict: str) -> None:
    from generation.openai.wire import probe_outcome

    raw = orjson.dumps({"choices": [{"message": {"content": answer if isinstance(answer, str)
                                                  else orjson.dumps(answer).decode()}}]})
    assert probe_outcome(200, raw, "m").startswith(verdict)


# -- /health ----------------------------------------------------------------------------------
def test_health_shows_the_dialect_the_probe_chose(fake: FakeUpstream, tmp_path,
                                                  monkeypatch) -> None:
    from fastapi.testclient import TestClient

    from app.factory import create_app
    from app.settings import load_settings

    for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_STRUCTURED"):
        monkeypatch.delenv(key, raising=False)
    fake.structured = "json_object_schema"
    settings = load_settings(data={"dir": tmp_path}, model="fake-model",
                             upstream={"url": fake.base_url}, memory={"enabled": False})
    with TestClient(create_app(settings)) as client:
        health = client.get("/health").json()
    writer = health["structured"]["writer"]
    assert health["status"] == "ok" and set(health["structured"]) == {"writer"}
    assert writer["setting"] == "auto" and writer["decided_by"] == "probe"
    assert writer["dialect"]["form"] == "json_object_schema"
    assert writer["dialect"]["engine"] == "llama.cpp"
    assert writer["dialect"]["max_string_length_sent"] == 200
    assert writer["probe"] == {
        "json_schema": "refused (HTTP 500)", "json_object_schema": "chosen",
        "structured_outputs": "not tried: json_object_schema was chosen first",
        "guided_json": "not tried: json_object_schema was chosen first"}

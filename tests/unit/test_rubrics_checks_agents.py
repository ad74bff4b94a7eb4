"""Checks from the checklist agents: the schema they answer under, what is kept of their
answer, the merge with the pre-pass, packs that carry checks, and checklist ids."""

from __future__ import annotations

import json

import jsonschema
import pytest

from bench.fakes.random_instance import RandomInstance
from generation.schemas import strict_problems
from generation.scripted import ScriptedBackend
from generation.types import ChatParams
from rubrics.agents import build_checklist
from rubrics.checklist import Band, Checklist, Dimension, checklist_id, from_json, to_json
from rubrics.checks import KINDS, Check
from rubrics.checks.extract import (
    agent_verdict,
    check_item_schema,
    checks_schema,
    from_agent,
    merge,
)
from rubrics.packs import PackLibrary

REQUEST = ("Write a product description for teenagers in about 100 words, all lowercase, "
           "and let the last thing the reader sees be 'Grab yours today!'")
QUERY = [{"role": "user", "content": REQUEST}]
NAMES = ["Audience fit", "Product facts", "Tone", "Call to action"]


def flat(kind: str, quote: str, **params) -> dict:
    item = {name: None for name in check_item_schema()["properties"]}
    return {**item, "kind": kind, "quote": quote, **params}


def dimensions(names=NAMES) -> list[dict]:
    return [{"name": n, "description": f"checks {n}", "rationale": f"why {n}",
             "bands": [f"{n} level {k}" for k in range(4)]} for n in names]


def fused(checks: list[dict]) -> str:
    return json.dumps({"candidates": [], "dimensions": dimensions(), "checks": checks})


def test_the_check_schema_is_strict_and_covers_every_kind():
    schema = checks_schema()
    assert strict_problems(schema) == []
    item = schema["items"]
    assert item["properties"]["kind"]["enum"] == list(KINDS)
    assert item["properties"]["relation"]["enum"][-1] is None
    assert list(item["properties"]) == ["kind", "quote", "relation", "n", "upper", "text"]
    jsonschema.Draft202012Validator.check_schema(schema)


async def test_fused_call_lists_checks_and_only_supported_ones_are_kept():
    answer = fused([
        # the pre-pass found it too: kept (as one check)
        flat("lowercase", "all lowercase"),
        # quoted from the request, the pre-pass missed the phrasing: kept, from the agent
        flat("ends_with", "the last thing the reader sees be 'Grab yours today!'",
             text="Grab yours today!"),
        # invented: the quote is not in the request
        flat("no_commas", "never use commas"),
        # rounded differently from the pre-pass: the pre-pass's numbers win
        flat("word_count", "about 100 words", relation="at most", n=100),
        # malformed params for its kind
        flat("word_count", "about 100 words", relation="between", n=100, upper=5),
    ])
    backend = ScriptedBackend([answer])
    built = await build_checklist(backend, QUERY, ChatParams(), mode="fused")
    assert not built.degraded and built.calls == 1  # checks ride in the one fused call
    checks = {(c.kind, c.source): c for c in built.checklist.checks}
    assert set(checks) == {("word_count", "prepass"), ("lowercase", "prepass"),
                           ("ends_with", "agent")}
    assert checks[("word_count", "prepass")].params == {"relation": "between", "n": 80,
                                                        "upper": 120}
    schema = backend.calls[0].schema
    assert schema["properties"]["checks"]["items"]["properties"]["kind"]["enum"] == list(KINDS)
    prompt = backend.calls[0].messages[-1]["content"]
    assert "- word_count: the number of words" in prompt and '"checks": [' in prompt


async def test_three_agents_list_checks_in_the_selective_step():
    opened = json.dumps({"candidates": [{"name": n, "aspect": "task_goal", "reason": "r"}
                                        for n in NAMES]})
    axial = json.dumps({"dimensions": [{"name": n, "description": "d", "rationale": f"w {n}",
                                        "merged_from": [n]} for n in NAMES]})
    selective = json.dumps({"dimensions": dimensions(), "checks": [
        flat("ends_with", "the last thing the reader sees be 'Grab yours today!'",
             text="Grab yours today!")]})
    backend = ScriptedBackend([opened, axial, selective])
    built = await build_checklist(backend, QUERY, ChatParams())
    assert built.calls == 3
    assert [c.schema is not None and "checks" in c.schema["properties"]
            for c in backend.calls] == [False, False, True]
    assert [c.kind for c in built.checklist.checks] == ["word_count", "lowercase", "ends_with"]


async def test_an_answer_without_checks_still_builds_with_the_pre_pass_checks():
    backend = ScriptedBackend([json.dumps({"candidates": [], "dimensions": dimensions()})])
    built = await build_checklist(backend, QUERY, ChatParams(), mode="fused")
    assert not built.degraded
    assert [c.kind for c in built.checklist.checks] == ["word_count", "lowercase"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["fused", "three_agent"])
async def test_random_schema_valid_answers_never_degrade_and_keep_only_quoted_checks(
        seed, mode):
    instances = RandomInstance(seed)
    backend = ScriptedBackend(default=lambda m, p, schema: instances.text_for(schema))
    built = await build_checklist(backend, QUERY, ChatParams(), mode=mode)
    assert not built.degraded
    for check in built.checklist.checks:
        assert check.source == "prepass" or check.quote.casefold() in REQUEST.casefold()
    for call in backend.calls:
        jsonschema.validate(json.loads(instances.text_for(call.schema)), call.schema)


def test_the_text_field_carries_each_kind_s_other_parameter():
    request = 'Use the word "river" twice, end with "Bye.", answer in French, keep <answer>.'
    cases = [("keyword", 'Use the word "river" twice', dict(relation="at least", n=2,
                                                            text="river"), {"word": "river"}),
             ("ends_with", 'end with "Bye."', dict(text="Bye."), {"phrase": "Bye."}),
             ("language", "answer in French", dict(text="fr"), {"language": "fr"}),
             ("xml_tag", "keep <answer>", dict(text="answer"), {"tag": "answer"})]
    for kind, quote, fields, expected in cases:
        check = from_agent(flat(kind, quote, **fields), request)
        assert check is not None and expected.items() <= check.params.items()
    assert from_agent(flat("language", "answer in French", text="French"), request) is None


@pytest.mark.parametrize("kind, quote, fields", [
    # SmolLM2 as the agent, on "In fewer than 50 words, explain why the sky is blue.": a
    # title "quoted" from words of the request that ask for no title
    ("title", "the sky is blue", {}),
    ("word_count", "explain why the sky", dict(relation="at most", n=49)),
    ("keyword", "explain why the sky", dict(relation="at least", n=1, text="Rayleigh")),
    ("ends_with", "In fewer than 50 words", dict(text="Any questions?")),
    ("lowercase", "explain why the sky is blue", {}),
])
def test_a_quote_that_does_not_state_the_kind_keeps_no_check(kind, quote, fields):
    request = "In fewer than 50 words, explain why the sky is blue."
    assert from_agent(flat(kind, quote, **fields), request) is None


@pytest.mark.parametrize("kind, quote, fields", [
    ("word_count", "In fewer than fifty words", dict(relation="at most", n=49)),
    ("title", "a title in <<double angular brackets>>", {}),
    ("ends_with", 'finish with "Any questions?"', dict(text="Any questions?")),
    ("keyword", 'use the word "blue"', dict(relation="at least", n=1, text="blue")),
    ("char_count", "不少于八百字", dict(relation="at least", n=800)),
])
def test_a_quote_that_states_the_kind_keeps_the_check(kind, quote, fields):
    request = ("In fewer than fifty words, explain why the sky is blue; use the word \"blue\", "
               "a title in <<double angular brackets>>, finish with \"Any questions?\". "
               "不少于八百字")
    assert from_agent(flat(kind, quote, **fields), request) is not None


@pytest.mark.parametrize("kind, quote, fields, kept", [
    # Qwen2.5-Coder-1.5B as the agent under no constrained decoding
    ("word_count", "List exactly 3 benefits", dict(relation="at least", n=3), False),
    ("word_count", "a two-sentence note", dict(relation="between", n=10, upper=20), False),
    ("bullet_count", "List exactly 3 benefits", dict(relation="exactly", n=3), True),
    ("sentence_count", "a two-sentence note", dict(relation="exactly", n=2), True),
    ("word_count", "about 200 words", dict(relation="between", n=160, upper=240), True),
    ("word_count", "about 200 words", dict(relation="at least", n=20), False),
    ("char_count", "不少于八百字", dict(relation="at least", n=80), False),
])
def test_a_count_stands_on_its_number_and_what_it_counts(kind, quote, fields, kept):
    request = "List exactly 3 benefits in a two-sentence note of about 200 words. 不少于八百字"
    assert (from_agent(flat(kind, quote, **fields), request) is not None) is kept


async def test_the_pre_pass_reads_standing_instructions_and_the_target_turn_only():
    conversation = [
        {"role": "system", "content": "Always answer in JSON format."},
        {"role": "user", "content": "Write a 100-word tagline."},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "Now a product description, all lowercase."},
    ]
    backend = ScriptedBackend([fused([])])
    built = await build_checklist(backend, conversation, ChatParams(), mode="fused")
    assert [c.kind for c in built.checklist.checks] == ["json", "lowercase"]


def test_from_agent_normalises_whitespace_and_case_in_the_quote():
    item = flat("lowercase", "ALL   lowercase")
    assert from_agent(item, "Write it in all\nlowercase, please.") is not None
    assert from_agent(item, "Write it in capitals.") is None
    assert from_agent({**item, "kind": "telepathy"}, "all lowercase") is None


@pytest.mark.parametrize("item, why", [
    ({"kind": "telepathy", "quote": "all lowercase"}, "unknown kind"),
    (flat("word_count", "at least 100 words", relation="at least", n=-3), "bad parameters"),
    (flat("lowercase", ""), "no quote"),
    (flat("lowercase", "all lowercase please"), "quote not in the request"),
    (flat("lowercase", "Write it"), "quote does not say it"),
    (flat("lowercase", "all lowercase"), "kept"),
])
def test_agent_verdict_says_why_an_item_is_dropped(item, why):
    check, said = agent_verdict(item, "Write it in all lowercase.")
    assert said == why
    assert (check is not None) == (why == "kept")


def test_agent_verdict_keeps_what_the_pre_pass_found_whatever_the_quote():
    found = [Check(kind="lowercase", params={})]
    check, why = agent_verdict(flat("lowercase", "made up"), "Write it.", found)
    assert check is not None and why == "found by the pre-pass"


def test_merge_dedupes_by_key_and_prefers_the_pre_pass():
    pre = [Check(kind="keyword", params={"word": "River", "relation": "at least", "n": 1})]
    agent = [Check(kind="keyword", params={"word": "river", "relation": "at least", "n": 2},
                   source="agent"),
             Check(kind="keyword", params={"word": "stone", "relation": "at least", "n": 1},
                   source="agent"),
             Check(kind="keyword", params={"word": "stone", "relation": "at least", "n": 1},
                   source="agent")]
    merged = merge(pre, agent)
    assert [(c.params["word"], c.source) for c in merged] == [("River", "prepass"),
                                                              ("stone", "agent")]


def _checklist(checks=()) -> Checklist:
    bands = (Band(low=1, high=5, description="weak"), Band(low=6, high=10, description="good"))
    return Checklist(dimensions=(Dimension(name="Tone", description="d", bands=bands),),
                     checks=tuple(checks))


def test_checklist_id_covers_checks_and_stored_checklists_without_them_still_load():
    plain = _checklist()
    lower = _checklist([Check(kind="lowercase", params={}, quote="all lowercase")])
    assert checklist_id(plain) != checklist_id(lower)
    # quotes and sources do not change what is required
    assert checklist_id(lower) == checklist_id(_checklist([Check(kind="lowercase", params={},
                                                                 source="agent")]))
    stored = json.loads(to_json(plain))
    del stored["checks"]
    assert from_json(stored) == plain and checklist_id(from_json(stored)) == checklist_id(plain)
    assert from_json(to_json(lower)) == lower


def test_a_pack_entry_carries_checks(tmp_path):
    entry = {"id": "memo", "language": "en",
             "checklist": {"dimensions": [{"name": "Clarity", "description": "clear",
                                           "bands": [{"low": 1, "high": 5, "description": "x"},
                                                     {"low": 6, "high": 10,
                                                      "description": "y"}]}]},
             "checks": [{"kind": "word_count", "params": {"relation": "at most", "n": 150},
                         "quote": "150 words at most"}]}
    path = tmp_path / "memos.jsonl"
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    checks = PackLibrary({"memos": path}).get("memos:memo").checks
    assert [(c.kind, c.params["n"], c.source) for c in checks] == [("word_count", 150, "pack")]

"""More SFT rows from each kept loop: every variant's answer passes every check its own request
states, its requirements are said by training templates only, every second one adds a
requirement, made in code or met by the answer as it stands, and the export's held-out split
is left as it was. A recorded answer export left out gives rows asking only what it meets."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from rubrics.checks.run import conform, run_checks
from training.data.dataset import VERSION, content_hash, read_rows, write_jsonl
from training.data.prompts import Prompt, generate
from training.data.requirements.catalog import catalog
from training.data.rows import query_id
from training.flywheel.variants import CASES, MADE_IN_CODE, recoverable, variants, write_sft_data
from training.rewards.task import drops_task

DATA = catalog()
TASKS = {t.id: t for t in DATA.tasks["train"]}


def answered(prompts: list[Prompt]) -> list[tuple[Prompt, str]]:
    """Prompts with an answer on the task's topic that passes every check of theirs."""
    out = []
    for prompt in prompts:
        task = TASKS[prompt.task_id]
        base = (f"This note is about {' '.join(task.keywords)}. The {task.keywords[0]} "
                "matters to everyone here.")
        checks = list(prompt.run_checks())
        text = conform(base, checks)[0]
        if (all(o.passed for o in run_checks(text, checks))
                and drops_task(text, prompt.query, checks) is None):
            out.append((prompt, text))
    return out


@pytest.fixture(scope="module")
def kept() -> list[tuple[Prompt, str]]:
    pairs = answered(generate(0, 300, 0)[0])
    assert len(pairs) >= 30
    return pairs


def drawn(prompt: Prompt, answer: str, count: int, rng: random.Random) -> list:
    """The variants of the slots, without the case twins they bring along."""
    return [one for one in variants(prompt, answer, count, DATA, rng) if not one.twin]


def test_every_variant_asks_anew_and_its_answer_meets_all_it_asks(kept):
    rng = random.Random(0)
    train_templates = {t.id for ts in DATA.templates["train"].values() for t in ts}
    made = 0
    for prompt, answer in kept:
        for one in drawn(prompt, answer, 3, rng):
            made += 1
            assert one.query != prompt.query
            assert {c.template for c in one.checks} <= train_templates
            checks = [c.check() for c in one.checks]
            assert all(o.passed for o in run_checks(one.answer, checks)), one
            assert drops_task(one.answer, one.query, checks) is None
            # the prompt's own requirements stay, with the same parameters
            assert [(c.kind, c.params) for c in one.checks[:len(prompt.checks)]] == \
                [(c.kind, c.params) for c in prompt.checks]
            for c in one.checks:
                assert c.quote in one.query
    assert made >= 2 * len(kept)


def test_the_first_and_third_variants_add_a_requirement_met_in_code(kept):
    rng = random.Random(1)
    added = changed = 0
    for prompt, answer in kept:
        for i, one in enumerate(drawn(prompt, answer, 3, rng)):
            extra = one.checks[len(prompt.checks):]
            assert len(extra) == (0 if i == 1 else 1)
            if extra:
                added += 1
                assert extra[0].kind in MADE_IN_CODE
                changed += one.answer != answer
            else:
                assert one.answer == answer   # said again: the answer is the loop's own
    assert added >= len(kept) // 2 and changed >= added // 2


def test_every_fourth_variant_adds_a_requirement_the_answer_meets_as_it_stands(kept):
    rng = random.Random(2)
    met: list[str] = []
    for prompt, answer in kept:
        for i, one in enumerate(drawn(prompt, answer, 4, rng)):
            extra = one.checks[len(prompt.checks):]
            if i == 3:
                assert len(extra) == 1 and extra[0].kind not in MADE_IN_CODE
                assert one.answer == answer   # relabelled: no change made to the answer
                met.append(extra[0].kind)
    assert len(met) >= len(kept) // 4 and len(set(met)) >= 3, met


def test_a_variant_asking_for_a_case_comes_with_its_twin_asking_for_the_other(kept):
    rng = random.Random(3)
    train_templates = {t.id: t for ts in DATA.templates["train"].values() for t in ts}
    pairs = worded_alike = 0
    for prompt, answer in kept:
        made = variants(prompt, answer, 4, DATA, rng)
        for one, after in zip(made, made[1:], strict=False):
            case = [c for c in one.checks[len(prompt.checks):] if c.kind in CASES]
            if one.twin or not case or not after.twin:
                continue
            pairs += 1
            turned = next(c for c in after.checks if c.kind in CASES)
            assert turned.kind == CASES[case[0].kind]
            # the rest of the request is said word for word alike
            assert [c for c in after.checks if c.kind not in CASES] == \
                [c for c in one.checks if c.kind not in CASES]
            assert after.query.replace(turned.quote, case[0].quote) == one.query
            assert after.answer == (after.answer.upper() if turned.kind == "uppercase"
                                    else after.answer.lower())
            checks = [c.check() for c in after.checks]
            assert all(o.passed for o in run_checks(after.answer, checks))
            worded_alike += train_templates[case[0].template].twin == turned.template
    assert pairs >= 5 and worded_alike >= pairs // 2, (pairs, worded_alike)


def test_every_twin_template_is_a_training_one_of_the_other_case_at_the_same_place():
    templates = {t.id: t for split in DATA.templates.values() for ts in split.values()
                 for t in ts}
    twinned = [t for t in templates.values() if t.twin]
    assert len(twinned) >= 20
    for t in twinned:
        other = templates[t.twin]
        assert other.twin == t.id and other.at == t.at and CASES[t.kind] == other.kind
        assert other in DATA.templates["train"][other.kind] and \
            t in DATA.templates["train"][t.kind]


def test_an_answer_that_fails_its_request_gives_no_variant(kept):
    prompt = next(p for p, _ in kept if "word_count" in p.kinds
                  and p.checks[p.kinds.index("word_count")].params["relation"] == "at most")
    assert variants(prompt, "word " * 400, 3, DATA, random.Random(0)) == []


def test_the_same_seed_gives_the_same_variants(kept):
    def run(seed: int) -> list:
        rng = random.Random(seed)
        return [variants(p, a, 3, DATA, rng) for p, a in kept[:10]]

    assert run(5) == run(5)


def sft_row(query: str, answer: str) -> dict:
    messages = [{"role": "user", "content": query}]
    return {"id": query_id(messages), "loop_id": "l", "prompt": messages,
            "completion": [{"role": "assistant", "content": answer}], "score": 1.0}


def exported(path: Path, kept, holdout: int) -> Path:
    train, held = kept[holdout:], kept[:holdout]
    write_jsonl(path / "sft" / "train.jsonl", [sft_row(p.query, a) for p, a in train])
    write_jsonl(path / "sft" / "holdout.jsonl", [sft_row(p.query, a) for p, a in held])
    for kind in ("prompts", "pairs"):
        for split in ("train", "holdout"):
            write_jsonl(path / kind / f"{split}.jsonl", [])
    (path / "manifest.json").write_text(json.dumps({
        "version": VERSION, "counts": {"sft": {"train": len(train), "holdout": len(held)}}}))
    return path


def test_the_sft_data_holds_the_export_and_its_variants(kept, tmp_path: Path):
    export = exported(tmp_path / "export", kept[:12], holdout=2)
    counts = write_sft_data(tmp_path / "out", export, [p for p, _ in kept], 4, seed=0)
    rows = read_rows(str(tmp_path / "out"), "sft", "train")
    assert rows[:10] == read_rows(str(export), "sft", "train")
    assert counts == {"rows": 10, "variants": len(rows) - 10,
                      "answers_changed_in_code": counts["answers_changed_in_code"],
                      "relabelled": counts["relabelled"], "twins": counts["twins"],
                      "recovered": 0, "recovered_answers": 0}
    assert 25 <= counts["variants"] - counts["twins"] <= 40
    assert counts["answers_changed_in_code"] >= 5 and 1 <= counts["twins"] <= 10
    assert counts["relabelled"] >= 3
    assert read_rows(str(tmp_path / "out"), "sft", "holdout") == \
        read_rows(str(export), "sft", "holdout")
    queries = [r["prompt"][0]["content"] for r in rows]
    held = {r["prompt"][0]["content"] for r in read_rows(str(export), "sft", "holdout")}
    assert len(set(queries)) == len(queries) and not held & set(queries)
    assert all(r["variant_of"] in {x["id"] for x in rows[:10]} for r in rows[10:])
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["counts"]["sft"]["train"] == len(rows)
    assert manifest["counts"]["variants"] == counts
    assert manifest["content_hash"] == content_hash(tmp_path / "out")


def test_no_variants_copies_the_export(kept, tmp_path: Path):
    export = exported(tmp_path / "export", kept[:4], holdout=1)
    counts = write_sft_data(tmp_path / "out", export, [p for p, _ in kept], 0, seed=0)
    assert counts["variants"] == 0
    assert read_rows(str(tmp_path / "out"), "sft", "train") == \
        read_rows(str(export), "sft", "train")


def raw(prompt: Prompt) -> str:
    """An answer on the prompt's topic before any change made for its checks."""
    task = TASKS[prompt.task_id]
    return (f"This note is about {' '.join(task.keywords)}. The {task.keywords[0]} matters to "
            "everyone here.")


def test_a_recorded_answer_that_missed_checks_keeps_only_those_it_met(kept):
    tried = 0
    for prompt, _ in kept:
        text = raw(prompt)
        outcomes = [o.passed for o in run_checks(text, prompt.run_checks())]
        asked = recoverable(prompt, {"text": text, "finish_reason": "stop"})
        if asked is None or all(outcomes):
            continue
        tried += 1
        met = [c for c, ok in zip(prompt.checks, outcomes, strict=True) if ok]
        assert met == list(asked.checks)
        assert all(o.passed for o in run_checks(text, asked.run_checks()))
    assert tried >= 10


@pytest.mark.parametrize("row", [
    {"text": "A long note about the sea that stops in the middle of a", "finish_reason": "length"},
    {"text": "", "finish_reason": "stop"},
    {"text": "The sea is blue. " * 40, "finish_reason": "stop"},
    {"text": "x", "finish_reason": "stop", "error": "upstream timed out"},
])
def test_a_cut_looping_empty_or_failed_answer_is_not_recovered(kept, row):
    assert recoverable(kept[0][0], row) is None


def test_recorded_answers_export_left_out_add_rows_that_meet_their_requests(kept, tmp_path):
    export = exported(tmp_path / "export", kept[:12], holdout=2)
    left_out = [p for p, _ in kept[12:40]]
    recorded = {p.id: {"text": raw(p), "finish_reason": "stop",
                       "reflection": {"loop_id": f"loop-{p.id}"}} for p in left_out}
    recorded[kept[0][0].id] = {"text": kept[0][1], "finish_reason": "stop"}   # held out
    recorded[left_out[0].id]["finish_reason"] = "length"
    counts = write_sft_data(tmp_path / "out", export, [p for p, _ in kept], 4, seed=0,
                            recorded=recorded)
    rows = read_rows(str(tmp_path / "out"), "sft", "train")
    got = [r for r in rows if "recovered_from" in r]
    assert counts["recovered"] == len(got) >= 20
    assert counts["recovered_answers"] == len({r["recovered_from"] for r in got})
    assert {r["recovered_from"] for r in got} <= {p.id for p in left_out[1:]}
    assert max(Counter(r["recovered_from"] for r in got if not r.get("twin")).values()) <= 2
    assert any(r.get("twin") for r in got)
    assert len(rows) == 10 + counts["variants"] + counts["recovered"]
    queries = [r["prompt"][0]["content"] for r in rows]
    assert len(set(queries)) == len(queries)
    by_id = {p.id: p for p in left_out}
    for row in got:
        prompt = by_id[row["recovered_from"]]
        assert row["loop_id"] == f"loop-{prompt.id}"
        assert row["prompt"][0]["content"] != prompt.query
        answer = row["completion"][0]["content"]
        assert drops_task(answer, row["prompt"][0]["content"], prompt.run_checks()) is None

"""The prompt generator (`training.data.prompts`): the split keeps held-out tasks and phrasings
unseen, the sizes asked for come out, the same seed gives the same prompts, every check is
valid, drawn within the compatibility rules and met by some text, and the command writes a
whole set or nothing."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from rubrics.checks import KINDS, Check, run_checks
from rubrics.checks.prepass import prepass
from tests.training.requirement_texts import satisfy
from training.data import prompts as generator
from training.data.prompts import Prompt, generate, load, main, manifest
from training.data.requirements.catalog import SPLITS, Template, catalog, split_templates
from training.data.requirements.draw import KIND_WEIGHTS, assemble, draw_params, render, spell
from training.data.requirements.rules import (
    KIND_CONFLICTS,
    compatible,
    conflicts,
    genre_conflict,
    kind_conflict,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prompt_set() -> tuple[list[Prompt], list[Prompt]]:
    return generate(0, 2000, 200)


def _all(prompt_set: tuple[list[Prompt], list[Prompt]]) -> list[Prompt]:
    return [*prompt_set[0], *prompt_set[1]]


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w{}<>*#\[\]]+", " ", text.casefold()).split())


def test_the_data_has_enough_tasks_and_phrasings_of_every_kind() -> None:
    data = catalog()
    tasks = [t for split in SPLITS for t in data.tasks[split]]
    assert len(tasks) >= 240 and len({t.text for t in tasks}) == len(tasks)
    assert len({t.genre for t in tasks}) >= 10
    assert all(len(t.keywords) >= 3 and not re.search(r"\d", t.text + (t.passage or ""))
               for t in tasks)
    templates = [t for split in SPLITS for kind in data.templates[split].values() for t in kind]
    assert len({t.id for t in templates}) == len(templates)
    assert len({_norm(t.text) for t in templates}) == len(templates)
    per_kind = Counter(t.kind for t in templates)
    assert set(per_kind) == set(KIND_WEIGHTS) <= set(KINDS)
    assert min(per_kind.values()) >= 4
    assert min(Counter((t.kind, t.group) for t in templates).values()) >= 3
    for t in templates:  # where a template goes fits how it ends
        assert t.at in ("start", "paren", "end")
        if t.at == "start":
            assert t.text[-1] in ",."
        elif t.at == "paren":
            assert t.text[-1] not in ".!?" and "(" not in t.text
        else:
            assert t.text[-1] in ".!?" or t.text.endswith('"{phrase}"'), t.id


def test_phrases_can_be_quoted_at_either_end() -> None:
    phrases = catalog().phrases
    assert all(p[-1] in ".!?" for pool in phrases["end"].values() for p in pool)
    assert all(p[-1] not in ".!?," and "," not in p
               for pool in phrases["start"].values() for p in pool)
    genres = {t.genre for split in SPLITS for t in catalog().tasks[split]}
    assert genres == set(phrases["start"]) == set(phrases["end"])


def test_held_out_prompts_share_no_task_and_no_template_with_training(prompt_set) -> None:
    data = catalog()
    train, heldout = prompt_set
    assert not {t.id for t in data.tasks["train"]} & {t.id for t in data.tasks["heldout"]}
    assert not {p.task_id for p in train} & {p.task_id for p in heldout}
    used = {split: {c.template for p in ps for c in p.checks}
            for split, ps in zip(SPLITS, prompt_set, strict=True)}
    assert not used["train"] & used["heldout"]
    held = {t.id for kind in data.templates["heldout"].values() for t in kind}
    assert used["heldout"] <= held and not used["train"] & held
    # every kind has phrasings on both sides, and no phrasing's words sit inside the other side's
    assert set(data.templates["train"]) == set(data.templates["heldout"])
    texts = {split: [_norm(t.text) for kind in data.templates[split].values() for t in kind]
             for split in SPLITS}
    assert not [(a, b) for a in texts["heldout"] for b in texts["train"] if a in b or b in a]
    train_queries = "\n".join(p.query.casefold() for p in train)
    assert not [c.quote for p in heldout for c in p.checks if c.quote.casefold() in train_queries]


def test_a_template_marked_train_only_is_never_held_out_and_moves_no_other() -> None:
    data = catalog()
    unmarked = [t for split in SPLITS for kind in data.templates[split].values() for t in kind
                if not t.train_only]
    assert [t for kind in data.templates["heldout"].values() for t in kind if t.train_only] == []
    added = Template(id="uppercase.99", kind="uppercase", group="plain", at="end",
                     text="Capitals, please.", train_only=True)
    before, after = split_templates(unmarked), split_templates([*unmarked, added])
    assert after["heldout"] == before["heldout"]
    assert after["train"]["uppercase"] == (*before["train"]["uppercase"], added)
    # unmarked, the same template takes part in the draw and moves the held-out split
    moved = split_templates([*unmarked, replace(added, train_only=False)])
    assert moved["heldout"] != before["heldout"]


def test_sizes_and_manifest_counts(prompt_set) -> None:
    train, heldout = prompt_set
    assert (len(train), len(heldout)) == (2000, 200)
    assert sum(len(p.checks) for p in heldout) >= 250
    assert all(1 <= len(p.checks) <= 3 for p in _all(prompt_set))
    assert {len(p.checks) for p in heldout} == {1, 2, 3}
    info = manifest(0, train, heldout)
    assert info["checks"]["heldout"] == sum(v["heldout"] for v in info["kinds"].values())
    assert all(counts["train"] > 0 and counts["heldout"] > 0 for counts in info["kinds"].values())
    ids = [p.id for p in _all(prompt_set)]
    assert len(set(ids)) == len(ids)
    assert len({p.query for p in _all(prompt_set)}) == len(ids)


def test_the_same_seed_gives_the_same_prompts_and_another_seed_others(prompt_set) -> None:
    again = generate(0, 300, 50)
    assert [p.record() for p in again[0]] != [p.record() for p in generate(1, 300, 50)[0]]
    assert [p.record() for p in again[0]] == [p.record() for p in prompt_set[0][:300]]
    assert [p.record() for p in again[1]] == [p.record() for p in prompt_set[1][:50]]


def test_every_check_is_valid_and_said_in_the_query(prompt_set) -> None:
    for p in _all(prompt_set):
        assert p.kinds == [c.kind for c in p.checks] and len(set(p.kinds)) == len(p.kinds)
        for said in p.checks:
            check = Check(kind=said.kind, params=said.params)
            assert check.params == said.params  # nullable params already filled
            assert said.quote in p.query
            params = said.params
            for slot in ("word", "phrase", "marker", "letter"):
                if slot in params:
                    assert params[slot] in said.quote
            n = params.get("n")
            if n is not None and ".present." not in said.template:  # presence: no number
                numbers = {str(n), {1: "once", 2: "twice"}.get(n, "")}
                numbers |= {spell(n)} if n <= 100 else set()
                assert any(re.search(rf"\b{re.escape(x)}\b", said.quote) for x in numbers if x)
            if params.get("upper") is not None:
                assert str(params["upper"]) in said.quote or spell(params["upper"]) in said.quote


def test_the_rules_hold_for_every_prompt(prompt_set) -> None:
    data = catalog()
    genre = {t.id: t.genre for split in SPLITS for t in data.tasks[split]}
    at = {t.id: t.at for split in SPLITS for kind in data.templates[split].values()
          for t in kind}
    for p in _all(prompt_set):
        assert conflicts(p.run_checks()) == [], p.query
        assert not any(genre_conflict(genre[p.task_id], k) for k in p.kinds)
        places = Counter(at[c.template] for c in p.checks)
        assert places["start"] <= 1 and places["paren"] <= 1


def test_every_prompt_can_be_met_by_some_text(prompt_set) -> None:
    unmet = [p.query for p in _all(prompt_set) if satisfy(p.run_checks()) is None]
    assert unmet == []


def test_every_pair_of_kinds_the_rules_allow_can_be_met() -> None:
    """The conflict table covers every pair: kinds it lets stand together, drawn with many
    parameters, are met by some text whenever the parameter rules allow them."""
    data, rng = catalog(), random.Random(5)
    tasks = [t for split in SPLITS for t in data.tasks[split]]
    templates = {k: [t for split in SPLITS for t in data.templates[split][k]]
                 for k in data.kinds()}
    unmet, allowed = [], 0
    for a, b in itertools.combinations(data.kinds(), 2):
        if kind_conflict(a, b):
            continue
        for _ in range(12):
            task = rng.choice(tasks)
            checks = [Check(kind=k, params=draw_params(rng.choice(templates[k]), task,
                                                       data.phrases, rng)) for k in (a, b)]
            if compatible(checks):
                allowed += 1
                if satisfy(checks) is None:
                    unmet.append([(c.kind, c.params) for c in checks])
    assert unmet == [] and allowed > 2000


def _check(kind: str, **params) -> Check:
    return Check(kind=kind, params=params)


@pytest.mark.parametrize("checks", [
    [_check("lowercase"), _check("uppercase")],
    [_check("json"), _check("bullet_count", relation="exactly", n=3)],
    [_check("json"), _check("title")],
    [_check("json"), _check("postscript", marker="P.S.")],
    [_check("json"), _check("paragraph_count", relation="exactly", n=2)],
    [_check("quoted"), _check("starts_with", phrase="Hello")],
    [_check("postscript", marker="P.S."), _check("ends_with", phrase="Bye.")],
    [_check("word_count", relation="at most", n=40),
     _check("paragraph_count", relation="at least", n=5)],
    [_check("keyword", relation="at least", n=1, word="gear"),
     _check("forbidden_word", word="gear")],
    [_check("capital_word_count", relation="at least", n=2), _check("lowercase")],
    [_check("forbidden_word", word="morning"), _check("starts_with", phrase="Good morning")],
    [_check("no_commas"), _check("ends_with", phrase="Thanks, all.")],
    [_check("letter_frequency", relation="at most", n=1, letter="j"),
     _check("ends_with", phrase="Enjoy! Enjoy!")],
    [_check("capital_word_count", relation="at most", n=2),
     _check("section_count", relation="exactly", n=3, marker="SECTION")],
    [_check("sentence_count", relation="exactly", n=1),
     _check("word_count", relation="at least", n=60)],
    [_check("sentence_count", relation="at most", n=2),
     _check("paragraph_count", relation="exactly", n=3)],
], ids=lambda checks: "+".join(c.kind for c in checks))
def test_the_rules_refuse_what_no_text_or_no_reader_would_take(checks) -> None:
    assert conflicts(checks)


def test_the_conflict_table_names_real_kinds_and_no_kind_twice() -> None:
    kinds = set(KIND_WEIGHTS)
    assert all(pair <= kinds and len(pair) == 2 for pair in KIND_CONFLICTS)
    assert kind_conflict("word_count", "word_count")
    assert kind_conflict("json", "starts_with") and not kind_conflict("json", "keyword")


def test_the_command_writes_a_whole_set_and_replaces_its_own(tmp_path: Path, capsys) -> None:
    out = tmp_path / "set"
    assert main(["--out", str(out), "--seed", "3", "--train", "40", "--heldout", "10"]) == 0
    assert sorted(os.listdir(out)) == ["heldout.jsonl", "manifest.json", "train.jsonl"]
    info = json.loads((out / "manifest.json").read_text())
    assert (info["seed"], info["prompts"], info["version"]) == (
        3, {"train": 40, "heldout": 10}, generator.GENERATOR_VERSION)
    train = load(out / "train.jsonl")
    assert [p.record() for p in train] == [p.record() for p in generate(3, 40, 10)[0]]
    record = json.loads((out / "heldout.jsonl").read_text().splitlines()[0])
    assert set(record) >= {"id", "split", "task_id", "query", "checks", "kinds"}
    assert set(record["checks"][0]) >= {"kind", "params", "template"}
    assert main(["--out", str(out), "--train", "5", "--heldout", "2"]) == 0
    assert len(load(out / "train.jsonl")) == 5
    assert sorted(os.listdir(tmp_path)) == ["set"]  # no temporary folder left behind


def test_a_failed_write_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(generator, "manifest", broken)
    assert main(["--out", str(tmp_path / "set"), "--train", "5", "--heldout", "2"]) == 2
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv", [
    ["--train", "5"],
    ["--out", "x", "--train", "-5"],
    ["--out", "x", "--heldout", "many"],
    ["--out", "x", "--train", "200000"],
    ["--out", "{file}"],
    ["--out", "{foreign}"],
])
def test_bad_arguments_get_one_line_and_exit_two(argv, tmp_path: Path, capsys) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("keep me")
    argv = [a.format(file=tmp_path / "file", foreign=tmp_path / "foreign") for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert (tmp_path / "foreign" / "notes.txt").read_text() == "keep me"


def test_output_does_not_depend_on_string_hashing(tmp_path: Path) -> None:
    """Sets and dicts of strings iterate in another order under another hash seed; the
    prompts must not."""
    digests = []
    for hash_seed in ("1", "2"):
        out = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-m", "training.data.prompts", "--out", str(out),
                        "--train", "200", "--heldout", "40"], check=True, env=env, cwd=ROOT,
                       capture_output=True)
        digests.append((out / "train.jsonl").read_bytes() + (out / "heldout.jsonl").read_bytes())
    assert digests[0] == digests[1]


def test_met_checks_pass_and_unmet_fail_on_a_sample(prompt_set) -> None:
    """The satisfier's texts are real evidence: each one passes its own prompt's checks and
    fails some check of a prompt asking for something else."""
    sample = prompt_set[1][:40]
    texts = [satisfy(p.run_checks()) for p in sample]
    assert all(all(o.passed for o in run_checks(t, p.run_checks()))
               for t, p in zip(texts, sample, strict=True))
    crossed = sum(not all(o.passed for o in run_checks(t, p.run_checks()))
                  for t, p in zip(texts[1:] + texts[:1], sample, strict=True))
    assert crossed > len(sample) // 2


def test_the_pre_pass_reads_what_the_templates_ask():
    """Under MRPO the server finds a request's checks with its pre-pass, so every phrasing the
    generator writes, held-out ones included, must be one it reads: each template, said with
    six draws of its parameters over random tasks, is read as its kind at least once and
    nearly every time."""
    data, rng = catalog(), random.Random(0)
    tasks = [t for split in SPLITS for t in data.tasks[split]]
    read, said, never = 0, 0, []
    for split in SPLITS:
        for template in itertools.chain(*data.templates[split].values()):
            hits = 0
            for _ in range(6):
                task = rng.choice(tasks)
                params = draw_params(template, task, data.phrases, rng)
                query = assemble(task, [(template.at, render(template, params, data.phrases, rng))])
                hits += any(c.kind == template.kind for c in prepass(query))
            read, said = read + hits, said + 6
            if not hits:
                never.append(template.id)
    assert never == []
    assert read / said >= 0.98, read / said

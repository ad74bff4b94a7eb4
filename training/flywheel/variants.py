"""More SFT rows from each kept loop, every one checked in code before it is kept.

A variant is the loop's request with its requirements said again by other training templates
(the same kind, group and parameters, so the same answer still meets them), most with one
requirement added. In turn the variants add: one of a kind an exact change meets (an opening
or closing phrase, case, quotes, no commas, a title, a P.S. ...), made on the answer in code
(`rubrics.checks.conform`); nothing; another made in code; and one of a kind no change in
code makes that the answer as it stands happens to meet (a word or paragraph count, a word it
uses or avoids...: the request is relabelled to what the answer does). Half the variants thus
show a whole-text change (case, quotes, a closing phrase) that a draft seldom makes itself.
A recorded answer export left out because it missed some of its request's checks gives rows
too, when it ended before the token limit, holds the task and does not loop: its requests keep
the checks it passed and each adds one requirement (made in code, met as it stands, made in
code), so the model sees many more answers of its own that end in time, each under a request
it meets. A variant that asks for lower case or capitals comes with its twin: the same request
with the direction turned (said by the template's twin, worded alike but for that word, where
it has one) and the answer made the other way in code, so the direction is the one thing the
two rows differ in. A variant is kept only when its answer passes every check of its request
and does not drop the task; held-out templates and tasks are never used, and the held-out SFT
split is left as export wrote it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loops.answer import looping
from rubrics.checks.kinds import KINDS
from rubrics.checks.run import conform, run_checks
from training.data.dataset import KINDS as DATA_KINDS
from training.data.dataset import SPLITS, content_hash, read_manifest, read_rows, write_jsonl
from training.data.prompts import Prompt, PromptCheck, draw_requirement, open_kinds
from training.data.requirements.catalog import Catalog, Task, Template, catalog
from training.data.requirements.draw import assemble, render
from training.data.rows import query_id
from training.rewards.task import drops_task
from training.stages.checkpoints import write_json

MADE_IN_CODE = tuple(sorted(k for k, v in KINDS.items() if v.conform is not None))
TRIES = 8   # draws of a variant before the row settles for fewer
ADDED = ("made", None, "made", "met")   # what the variants of a row add, in turn
RECOVERED = ("made", "met", "made")     # what the rows of a recovered answer add, in turn
CASES = {"lowercase": "uppercase", "uppercase": "lowercase"}   # kind -> its twin's kind


@dataclass(frozen=True, slots=True)
class Variant:
    query: str
    answer: str
    checks: tuple[PromptCheck, ...]   # what the query asks, each with the template saying it
    twin: bool = False   # another variant's request with the case turned the other way


def _templates(data: Catalog) -> dict[str, Template]:
    """The training templates by id."""
    return {t.id: t for ts in data.templates["train"].values() for t in ts}


def _task(prompt: Prompt, data: Catalog) -> Task | None:
    """`prompt`'s base task when it is a training one."""
    return next((t for t in data.tasks["train"] if t.id == prompt.task_id), None)


def _resaid(prompt: Prompt, task: Task, data: Catalog, rng: random.Random
            ) -> list[tuple[Template, PromptCheck]] | None:
    """The prompt's checks, each said by a training template of its kind and group (at most
    one before the task and one in parentheses); None when a check has no such template."""
    by_id = _templates(data)
    taken: set[str] = set()
    out = []
    for said in prompt.checks:
        old = by_id.get(said.template)
        if old is None:
            return None
        options = [t for t in data.templates["train"][said.kind]
                   if t.group == old.group and t.at not in taken]
        if not options:
            return None
        template = rng.choice(options)
        taken |= {template.at} - {"end"}
        out.append((template, PromptCheck(said.kind, said.params, template.id,
                                          render(template, said.params, data.phrases, rng))))
    return out


def _added(task: Task, said: list[tuple[Template, PromptCheck]], made: bool, data: Catalog,
           rng: random.Random) -> tuple[Template, PromptCheck] | None:
    """One more requirement that the rules let stand with the others, of a kind an exact
    change meets (`made`) or of one no change in code makes; None when none fits."""
    templates = data.templates["train"]
    taken = {t.at for t, _ in said} - {"end"}
    checks = [c.check() for _, c in said]
    pool = [k for k in sorted(templates) if (k in MADE_IN_CODE) == made]
    kinds = open_kinds(task, templates, pool, checks, taken)
    return draw_requirement(task, templates, kinds, checks, taken, data, rng) if kinds else None


def variant(prompt: Prompt, answer: str, add: str | None, data: Catalog, rng: random.Random
            ) -> Variant | None:
    """One variant, or None when this draw gives none that holds. `add`: None, or the
    requirement added: "made" (of a kind made in code) or "met" (of another kind, which the
    answer meets as it stands)."""
    task = _task(prompt, data)
    said = _resaid(prompt, task, data, rng) if task is not None else None
    if said is None:
        return None
    if add:
        extra = _added(task, said, add == "made", data, rng)
        if extra is None:
            return None
        said.append(extra)
    return _held(task, prompt.query, answer, said, made=add == "made")


def _held(task: Task, asked: str, answer: str, said: list[tuple[Template, PromptCheck]],
          made: bool) -> Variant | None:
    """The variant stating `said` with `answer` (changed in code to meet them when `made`),
    or None when its request is `asked`'s or its answer misses a check or drops the task."""
    checks = [c.check() for _, c in said]
    text = conform(answer, checks)[0] if made else answer
    query = assemble(task, [(t.at, c.quote) for t, c in said])
    if query == asked or not all(o.passed for o in run_checks(text, checks)):
        return None
    # the model's own words must hold the task: a phrase made in code can name the topic
    if any(drops_task(t, query, checks) is not None for t in {answer, text}):
        return None
    return Variant(query, text, tuple(c for _, c in said))


def twin(prompt: Prompt, one: Variant, data: Catalog, rng: random.Random) -> Variant | None:
    """`one` asking for the other case: the case requirement it adds to `prompt`'s said by its
    template's twin (or, where that has none, by a training template of the other kind at the
    same place) and its answer made so in code; None when `one` adds no case requirement or
    the twin does not hold. (A case the prompt itself asks for is never turned, so its rows
    are not doubled.)"""
    at = next((i for i, c in enumerate(one.checks)
               if c.kind in CASES and i >= len(prompt.checks)), None)
    task = _task(prompt, data)
    if at is None or task is None:
        return None
    by_id = _templates(data)
    said = [(by_id[c.template], c) for c in one.checks]
    old, kind = said[at][0], CASES[one.checks[at].kind]
    options = [t for t in data.templates["train"][kind] if t.id == old.twin] or [
        t for t in data.templates["train"][kind] if t.at == old.at]
    if not options:
        return None
    new = rng.choice(options)
    params = one.checks[at].params
    said[at] = (new, PromptCheck(kind, params, new.id, render(new, params, data.phrases, rng)))
    made = _held(task, one.query, one.answer, said, made=True)
    return replace(made, twin=True) if made is not None else None


def variants(prompt: Prompt, answer: str, count: int, data: Catalog, rng: random.Random,
             slots: tuple[str | None, ...] = ADDED) -> list[Variant]:
    """Up to `count` variants of a kept (request, answer), each with its own request (the
    i-th adds `slots[i % len(slots)]`), and after each one asking for a case its twin."""
    out: dict[str, Variant] = {}
    drawn = 0
    for _ in range(count * TRIES):
        if drawn == count:
            break
        made = variant(prompt, answer, add=slots[drawn % len(slots)], data=data, rng=rng)
        if made is None or made.query in out:
            continue
        out[made.query] = made
        drawn += 1
        other = twin(prompt, made, data, rng)
        if other is not None and other.query not in out:
            out[other.query] = other
    return list(out.values())


def _sft_row(base: dict[str, Any], one: Variant, **more: Any) -> dict[str, Any]:
    """An SFT row holding `one`'s request and answer, with `base`'s other fields (and
    `"twin": true` when `one` is a case twin)."""
    messages = [{"role": "user", "content": one.query}]
    return {**base, "id": query_id(messages), "prompt": messages,
            "completion": [{"role": "assistant", "content": one.answer}],
            **({"twin": True} if one.twin else {}), **more}


def recoverable(prompt: Prompt, row: dict[str, Any]) -> Prompt | None:
    """`prompt` asking only what the recorded answer `row` meets, when the answer ended before
    the token limit, holds the task and does not loop; else None."""
    text, checks = row.get("text") or "", prompt.run_checks()
    if row.get("error") or row.get("finish_reason") == "length" or not text or looping(text):
        return None
    if drops_task(text, prompt.query, checks) is not None:
        return None
    outcomes = run_checks(text, checks)
    return replace(prompt, checks=tuple(c for c, o in zip(prompt.checks, outcomes, strict=True)
                                        if o.passed))


def _recovered(recorded: dict[str, dict[str, Any]], prompts: list[Prompt], seen: set[str],
               count: int, data: Catalog, rng: random.Random) -> list[dict[str, Any]]:
    """Rows from the recorded answers export left out, `count` at most from each."""
    made = []
    for prompt in prompts:
        row = recorded.get(prompt.id)
        asked = recoverable(prompt, row) if row and prompt.query not in seen else None
        if asked is None:
            continue
        for one in variants(asked, row["text"], count, data, rng, slots=RECOVERED):
            if one.query in seen:
                continue
            seen.add(one.query)
            made.append(_sft_row({"loop_id": (row.get("reflection") or {}).get("loop_id"),
                                  "score": None}, one, recovered_from=prompt.id))
    return made


def write_sft_data(out: Path, export: Path, prompts: list[Prompt], count: int,
                   seed: int, recorded: dict[str, dict[str, Any]] | None = None
                   ) -> dict[str, Any]:
    """A copy of the export at `out` whose sft/train.jsonl also holds `count` variants of
    each row whose request is one of `prompts`, and `count // 2` rows from each recorded
    answer (`recorded`, by prompt id) that export left out and that `recoverable` takes;
    returns the counts."""
    data = catalog()
    by_query = {p.query: p for p in prompts}
    rng = random.Random(f"redraft-variants/{seed}")
    rows = read_rows(str(export), "sft", "train")
    # a variant never repeats a request export holds (held-out ones included) or another's
    seen = {r["prompt"][-1]["content"] for split in SPLITS
            for r in read_rows(str(export), "sft", split)}
    made: list[dict[str, Any]] = []
    added = relabelled = twins = 0
    for row in rows:
        prompt = by_query.get(row["prompt"][-1]["content"]) if len(row["prompt"]) == 1 else None
        if prompt is None or count == 0:
            continue
        answer = row["completion"][-1]["content"]
        for one in variants(prompt, answer, count, data, rng):
            if one.query in seen:
                continue
            seen.add(one.query)
            added += one.answer != answer
            twins += one.twin
            relabelled += any(c.kind not in MADE_IN_CODE for c in one.checks[len(prompt.checks):])
            made.append(_sft_row(row, one, variant_of=row["id"]))
    recovered = _recovered(recorded or {}, prompts, seen, count // 2, data, rng)
    for kind in DATA_KINDS:
        for split in SPLITS:
            extra = made + recovered if (kind, split) == ("sft", "train") else []
            write_jsonl(out / kind / f"{split}.jsonl",
                        read_rows(str(export), kind, split) + extra)
    counts = {"rows": len(rows), "variants": len(made), "answers_changed_in_code": added,
              "relabelled": relabelled, "twins": twins, "recovered": len(recovered),
              "recovered_answers": len({r["recovered_from"] for r in recovered})}
    manifest = read_manifest(str(export))
    train = len(rows) + len(made) + len(recovered)
    manifest["counts"] = {**manifest["counts"], "sft": {**manifest["counts"]["sft"],
                                                        "train": train}, "variants": counts}
    manifest["content_hash"] = content_hash(out)
    write_json(out / "manifest.json", manifest)
    return counts

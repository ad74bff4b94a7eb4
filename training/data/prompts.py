"""Prompts with verifiable requirements, at training scale: base writing tasks combined with
one to three requirements said in template words, each requirement's check attached as data
(kind, parameters, the template that said it), never read back out of the text.

Held-out prompts share neither a base task nor a phrasing template with training prompts
(`requirements.catalog` splits both with a fixed seed), and no combination of requirements
that `requirements.rules` refuses is drawn. The same seed and sizes give the same prompts.

    python -m training.data.prompts --out DIR [--seed N] [--train N] [--heldout N]

writes DIR/train.jsonl, DIR/heldout.jsonl and DIR/manifest.json (counts per kind and split,
the seed, the generator's version and the digest of its data), all at once or not at all.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubrics.checks import Check
from training.data.requirements.catalog import SPLIT_SEED, Catalog, Split, Task, Template, catalog
from training.data.requirements.draw import KIND_WEIGHTS, assemble, draw_params, render
from training.data.requirements.rules import compatible, genre_conflict, kind_conflict

GENERATOR_VERSION = "1"
REQUIREMENTS = (1, 2, 3)
REQUIREMENT_WEIGHTS = (3, 4, 3)
TRIES = 60              # draws of a requirement before a prompt settles for fewer
REDRAWS = 50            # redraws of a whole prompt whose query another prompt already has
MAX_PROMPTS = {"train": 100_000, "heldout": 20_000}
FILES = ("train.jsonl", "heldout.jsonl", "manifest.json")


@dataclass(frozen=True, slots=True)
class PromptCheck:
    kind: str
    params: dict[str, Any]
    template: str   # the id of the template that says it
    quote: str      # the words the query says it in

    def check(self) -> Check:
        return Check(kind=self.kind, params=self.params, quote=self.quote, source="user")


@dataclass(frozen=True, slots=True)
class Prompt:
    id: str
    split: Split
    task_id: str
    query: str
    checks: tuple[PromptCheck, ...]

    @property
    def kinds(self) -> list[str]:
        return [c.kind for c in self.checks]

    def run_checks(self) -> tuple[Check, ...]:
        """The checks as `rubrics.checks.run_checks` takes them (source "user")."""
        return tuple(c.check() for c in self.checks)

    def record(self) -> dict[str, Any]:
        return {"id": self.id, "split": self.split, "task_id": self.task_id,
                "query": self.query, "checks": [
                    {"kind": c.kind, "params": c.params, "template": c.template,
                     "quote": c.quote} for c in self.checks], "kinds": self.kinds}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Prompt:
        return cls(id=record["id"], split=record["split"], task_id=record["task_id"],
                   query=record["query"], checks=tuple(PromptCheck(**c)
                                                       for c in record["checks"]))


def open_kinds(task: Task, templates: dict[str, tuple[Template, ...]], kinds: Sequence[str],
               chosen: Sequence[Check], taken: set[str]) -> list[str]:
    """The kinds among `kinds` the task's genre and the checks already chosen let stand, with
    a template whose place (`taken`: before the task, in parentheses) is still free."""
    return [kind for kind in kinds
            if genre_conflict(task.genre, kind) is None
            and all(kind_conflict(kind, c.kind) is None for c in chosen)
            and any(t.at not in taken for t in templates[kind])]


def draw_requirement(task: Task, templates: dict[str, tuple[Template, ...]], kinds: list[str],
                     chosen: Sequence[Check], taken: set[str], data: Catalog,
                     rng: random.Random) -> tuple[Template, PromptCheck] | None:
    """One requirement of one of `kinds` (weighted by `KIND_WEIGHTS`) for the task, said by a
    template in a free place; None when the rules refuse it beside `chosen`."""
    kind = rng.choices(kinds, weights=[KIND_WEIGHTS[k] for k in kinds])[0]
    template = rng.choice([t for t in templates[kind] if t.at not in taken])
    check = Check(kind=kind, params=draw_params(template, task, data.phrases, rng),
                  source="user")
    if not compatible([*chosen, check]):
        return None
    quote = render(template, check.params, data.phrases, rng)
    return template, PromptCheck(kind, check.params, template.id, quote)


def _compose(task: Task, split: Split, data: Catalog, rng: random.Random) -> list[PromptCheck]:
    """One to three requirements for the task that the rules let stand together, each said
    by a template of the split; at most one before the task and one in parentheses."""
    templates = data.templates[split]
    wanted = rng.choices(REQUIREMENTS, weights=REQUIREMENT_WEIGHTS)[0]
    chosen: list[tuple[str, PromptCheck]] = []
    for _ in range(TRIES):
        if len(chosen) == wanted:
            break
        taken = {at for at, _ in chosen} - {"end"}
        checks = [c.check() for _, c in chosen]
        kinds = open_kinds(task, templates, sorted(templates), checks, taken)
        if not kinds:
            break
        drawn = draw_requirement(task, templates, kinds, checks, taken, data, rng)
        if drawn is not None:
            chosen.append((drawn[0].at, drawn[1]))
    return [said for _, said in chosen]


def _draw(split: Split, count: int, seed: int, data: Catalog) -> list[Prompt]:
    rng = random.Random(f"redraft-prompts/{seed}/{split}")
    tasks: list[Task] = []
    seen: set[str] = set()
    prompts: list[Prompt] = []
    at_of = {t.id: t.at for kind in data.templates[split].values() for t in kind}
    while len(prompts) < count:
        for _ in range(REDRAWS):
            if not tasks:  # every task once before any task twice
                tasks = list(data.tasks[split])
                rng.shuffle(tasks)
            task = tasks.pop()
            said = _compose(task, split, data, rng)
            query = assemble(task, [(at_of[c.template], c.quote) for c in said])
            if query not in seen:
                break
        else:
            raise ValueError(f"could not draw {count} distinct {split} prompts "
                             f"(stopped at {len(prompts)})")
        seen.add(query)
        prompts.append(Prompt(id=f"{split}-{len(prompts):05d}", split=split, task_id=task.id,
                              query=query, checks=tuple(said)))
    return prompts


def generate(seed: int = 0, train: int = 2000, heldout: int = 200
             ) -> tuple[list[Prompt], list[Prompt]]:
    """`train` training prompts and `heldout` held-out prompts, the same for the same seed."""
    for split, count in (("train", train), ("heldout", heldout)):
        if not 0 <= count <= MAX_PROMPTS[split]:
            raise ValueError(f"{split} must be between 0 and {MAX_PROMPTS[split]}, not {count}")
    data = catalog()
    return _draw("train", train, seed, data), _draw("heldout", heldout, seed, data)


def manifest(seed: int, train: Sequence[Prompt], heldout: Sequence[Prompt]) -> dict[str, Any]:
    """What a prompt set holds, per split: prompts, checks, checks per kind, tasks and
    templates used; and what made it: the seed, the split seed, the version, the data."""
    data = catalog()
    splits = {"train": train, "heldout": heldout}
    per_kind = {split: Counter(k for p in prompts for k in p.kinds)
                for split, prompts in splits.items()}
    return {"generator": "training.data.prompts", "version": GENERATOR_VERSION,
            "data_sha256": data.digest, "seed": seed, "split_seed": SPLIT_SEED,
            "prompts": {s: len(p) for s, p in splits.items()},
            "checks": {s: sum(len(x.checks) for x in p) for s, p in splits.items()},
            "kinds": {kind: {s: per_kind[s][kind] for s in splits} for kind in data.kinds()},
            "tasks": {s: len({x.task_id for x in p}) for s, p in splits.items()},
            "templates": {s: len({c.template for x in p for c in x.checks})
                          for s, p in splits.items()}}


def load(path: str | Path) -> list[Prompt]:
    """Prompts from a train.jsonl or heldout.jsonl this module wrote."""
    with open(path, encoding="utf-8") as fh:
        return [Prompt.from_record(json.loads(line)) for line in fh if line.strip()]


def write(out: str | Path, seed: int, train: int, heldout: int) -> dict[str, Any]:
    """Generate and write the set to `out`, replacing a set written there before; written
    into a temporary folder beside it and renamed, so `out` is never half written."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or not set(os.listdir(out)) <= set(FILES)):
        raise ValueError(f"{out} exists and is not a prompt set this command wrote")
    train_set, heldout_set = generate(seed, train, heldout)
    info = manifest(seed, train_set, heldout_set)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, prompts in (("train.jsonl", train_set), ("heldout.jsonl", heldout_set)):
            with open(tmp / name, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(p.record(), ensure_ascii=False) + "\n"
                              for p in prompts)
        (tmp / "manifest.json").write_text(json.dumps(info, indent=2) + "\n", "utf-8")
        old = out.with_name(f".{out.name}.old") if out.exists() else None
        if old:
            shutil.rmtree(old, ignore_errors=True)
            os.rename(out, old)
        os.rename(tmp, out)
        if old:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message}\n")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="python -m training.data.prompts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder to write the prompt set to")
    parser.add_argument("--seed", type=_count, default=0, help="seed the prompts are drawn with")
    parser.add_argument("--train", type=_count, default=2000, help="training prompts")
    parser.add_argument("--heldout", type=_count, default=200, help="held-out prompts")
    args = parser.parse_args(argv)
    try:
        info = write(args.out, args.seed, args.train, args.heldout)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"out": str(args.out), **{k: info[k] for k in ("prompts", "checks")}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

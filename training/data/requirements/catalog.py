"""The generator's data: base writing tasks, phrasing templates per check kind, and the word
pools parameters are drawn from; and the fixed split of tasks and templates into the part
training prompts are made of and the part held-out prompts are made of.

The split does not depend on the seed prompts are drawn with: whatever seed a run uses, no
held-out prompt shares a base task or a phrasing template with any training prompt, and the
held-out set always measures the same unseen tasks and phrasings."""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Literal

Split = Literal["train", "heldout"]
SPLITS: tuple[Split, ...] = ("train", "heldout")
# fixed, so the held-out tasks and templates stay the same from run to run and seed to seed
SPLIT_SEED = 7919
HELDOUT_TASKS = 0.2       # share of each genre's tasks held out
HELDOUT_TEMPLATES = 0.25  # share of each (kind, group)'s templates held out, at least one
DATA_FILES = ("tasks.jsonl", "templates.jsonl", "phrases.json")


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    genre: str
    text: str                     # the request, ending with its punctuation
    keywords: tuple[str, ...]     # topic words a keyword requirement can name
    passage: str | None = None    # the text a summary task is about, set below the request


@dataclass(frozen=True, slots=True)
class Template:
    id: str
    kind: str
    group: str   # which parameters it states: a relation, "present", "divider" or "plain"
    at: str      # "end" (a sentence after the task), "start" (before it), "paren" (inside it)
    text: str    # slots: {n} {upper} {times} {word} {phrase} {marker} {letter} {language}
    train_only: bool = False   # added after the split was drawn: training only, outside the draw
    twin: str | None = None    # a template of the opposite kind worded alike but for the direction


@dataclass(frozen=True, slots=True)
class Catalog:
    tasks: dict[Split, tuple[Task, ...]]
    templates: dict[Split, dict[str, tuple[Template, ...]]]   # split -> kind -> templates
    phrases: dict[str, Any]
    digest: str   # sha256 of the data files, so a prompt set names the data it came from

    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted(self.templates["train"]))


def _read(name: str) -> str:
    return files("training.data.requirements").joinpath(name).read_text("utf-8")


def _jsonl(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _read(name).splitlines() if line.strip()]


def _held_out(ids: list[str], share: float, rng: random.Random) -> set[str]:
    """A fixed share of `ids` (at least one, never all), drawn from their sorted order."""
    ordered = sorted(ids)
    rng.shuffle(ordered)
    count = min(len(ordered) - 1, max(1, round(len(ordered) * share)))
    return set(ordered[:count])


def split_tasks(tasks: list[Task]) -> dict[Split, tuple[Task, ...]]:
    """Each genre's tasks split so both sides hold every genre."""
    rng = random.Random(SPLIT_SEED)
    by_genre: dict[str, list[str]] = defaultdict(list)
    for task in tasks:
        by_genre[task.genre].append(task.id)
    held = set().union(*(_held_out(ids, HELDOUT_TASKS, rng)
                         for _, ids in sorted(by_genre.items())))
    return {"train": tuple(t for t in tasks if t.id not in held),
            "heldout": tuple(t for t in tasks if t.id in held)}


def split_templates(templates: list[Template]) -> dict[Split, dict[str, tuple[Template, ...]]]:
    """Each (kind, group)'s templates split, so both sides state every kind and relation.
    Templates marked `train_only` go to training and take no part in the draw, so adding one
    leaves the held-out templates (and so the held-out prompts) as they were."""
    rng = random.Random(SPLIT_SEED + 1)
    by_group: dict[tuple[str, str], list[str]] = defaultdict(list)
    for template in templates:
        if not template.train_only:
            by_group[(template.kind, template.group)].append(template.id)
    held = set().union(*(_held_out(ids, HELDOUT_TEMPLATES, rng)
                         for _, ids in sorted(by_group.items())))
    out: dict[Split, dict[str, tuple[Template, ...]]] = {}
    for split in SPLITS:
        kinds: dict[str, list[Template]] = defaultdict(list)
        for template in templates:
            if (template.id in held) == (split == "heldout"):
                kinds[template.kind].append(template)
        out[split] = {kind: tuple(found) for kind, found in sorted(kinds.items())}
    return out


@cache
def catalog() -> Catalog:
    """The packaged data, loaded once and split."""
    tasks = [Task(id=r["id"], genre=r["genre"], text=r["text"], keywords=tuple(r["keywords"]),
                  passage=r.get("passage")) for r in _jsonl("tasks.jsonl")]
    templates = [Template(**r) for r in _jsonl("templates.jsonl")]
    digest = hashlib.sha256()
    for name in DATA_FILES:
        digest.update(_read(name).encode("utf-8"))
    return Catalog(tasks=split_tasks(tasks), templates=split_templates(templates),
                   phrases=json.loads(_read("phrases.json")), digest=digest.hexdigest())

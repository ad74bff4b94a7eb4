"""Dynamic reference scheduling (Writing-RL, Lei et al.): a curriculum of references per prompt.

Each prompt's references are its loop's scored candidates sorted by ascending score (the draft
y0 usually first, then the better rewrites, the best text y* last). A pointer per prompt starts
at the weakest reference; when a completion beats the current reference in the pairwise
comparison, the pointer moves to the next stronger one. The pointers are saved with each
checkpoint (`reference_pointers.json`), restored on resume, and reported as how many prompts
reached which stage.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

POINTERS_FILE = "reference_pointers.json"


def ladder(row: Mapping[str, Any]) -> list[str]:
    """A prompt's references, weakest first: scored candidates by score, then y* if new.

    Equal texts appear once (at their first, weakest place); candidates never scored are not
    references (nothing says how strong they are).
    """
    scored = sorted((c for c in row.get("candidates") or () if c.get("score") is not None),
                    key=lambda c: (c["score"], c["position"]))
    texts: list[str] = []
    for text in [*(c["text"] for c in scored), row.get("reference")]:
        if isinstance(text, str) and text.strip() and text not in texts:
            texts.append(text)
    return texts


class ReferenceScheduler:
    """Per-prompt pointers into the reference ladders; `promote` moves the winners up."""

    def __init__(self, ladders: Mapping[str, list[str]]) -> None:
        self.ladders = {k: v for k, v in ladders.items() if v}
        self.pointers = dict.fromkeys(self.ladders, 0)
        self.promotions = 0

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> ReferenceScheduler:
        return cls({str(row["id"]): ladder(row) for row in rows})

    def current(self, prompt_id: str) -> str | None:
        """The reference a completion for this prompt is compared with now (None: unknown id)."""
        refs = self.ladders.get(prompt_id)
        return refs[self.pointers[prompt_id]] if refs else None

    def stage(self, prompt_id: str) -> int:
        return self.pointers.get(prompt_id, 0)

    def promote(self, won: Iterable[str]) -> list[str]:
        """Move each prompt in `won` (once, however many of its completions won) one reference
        up, unless it is already at its strongest. Returns the prompts that moved."""
        moved = []
        for prompt_id in dict.fromkeys(won):
            refs = self.ladders.get(prompt_id)
            if refs and self.pointers[prompt_id] < len(refs) - 1:
                self.pointers[prompt_id] += 1
                moved.append(prompt_id)
        self.promotions += len(moved)
        return moved

    def report(self) -> dict[str, Any]:
        """How many prompts sit at each stage, and how many reached their strongest reference."""
        stages = Counter(self.pointers.values())
        top = sum(1 for k, p in self.pointers.items() if p == len(self.ladders[k]) - 1)
        return {"prompts": len(self.pointers), "promotions": self.promotions,
                "at_stage": {str(s): n for s, n in sorted(stages.items())},
                "at_strongest": top}

    def state_dict(self) -> dict[str, Any]:
        return {"pointers": dict(self.pointers), "promotions": self.promotions}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore saved pointers; prompts no longer in the data are ignored, each pointer is
        clamped onto its ladder (the data may have been re-exported with fewer candidates)."""
        for prompt_id, pointer in dict(state.get("pointers", {})).items():
            if prompt_id in self.ladders:
                top = len(self.ladders[prompt_id]) - 1
                self.pointers[prompt_id] = max(0, min(int(pointer), top))
        self.promotions = int(state.get("promotions", 0))

    def save(self, directory: str | Path) -> Path:
        path = Path(directory) / POINTERS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**self.state_dict(), "report": self.report()}, indent=1))
        tmp.replace(path)
        return path

    def load(self, directory: str | Path) -> bool:
        path = Path(directory) / POINTERS_FILE
        if not path.is_file():
            return False
        self.load_state_dict(json.loads(path.read_text()))
        return True


class SchedulerCallback(TrainerCallback):
    """Saves the pointers into each checkpoint and into the output directory at the end."""

    def __init__(self, scheduler: ReferenceScheduler) -> None:
        self.scheduler = scheduler

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # A resumed run starts at its checkpoint's step: take that checkpoint's pointers.
        if state.global_step > 0:
            self.scheduler.load(Path(args.output_dir) / f"checkpoint-{state.global_step}")

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            self.scheduler.save(Path(args.output_dir) / f"checkpoint-{state.global_step}")

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            self.scheduler.save(args.output_dir)

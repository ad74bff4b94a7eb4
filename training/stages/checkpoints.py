"""Stage directories and checkpoints.

A stage writes into `OUT.partial` and renames it to `OUT` only when it succeeds, so `OUT`
is either absent or complete. A failed or interrupted training run leaves `OUT.partial`
(with TRL's resumable checkpoints under `checkpoints/`) for `--resume`; bad input removes it.
The final checkpoint is a plain Hugging Face directory (config, safetensors, tokenizer with
its chat template) that the `local` backend and `vllm serve` load as they are.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from training.errors import UsageError

FINAL = "final"


def is_main_process() -> bool:
    """True outside distributed runs and on rank 0 under `accelerate launch` / torchrun."""
    return int(os.environ.get("RANK", "0")) == 0


def wait_for_everyone() -> None:
    """A barrier across the processes of an `accelerate launch`; nothing in one process."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        from accelerate import PartialState

        PartialState().wait_for_everyone()


class StageDir:
    """OUT.partial → OUT. Under `accelerate launch` only the main process touches the
    directories; the others wait for it."""

    def __init__(self, out: str | Path, *, overwrite: bool = False, resume: bool = False) -> None:
        self.out = Path(out)
        self.partial = self.out.with_name(self.out.name + ".partial")
        self.overwrite, self.resume = overwrite, resume

    def check(self) -> None:
        """Fail early when OUT is in the way."""
        if self.out.exists() and not self.overwrite:
            raise UsageError(f"{self.out} exists: pass --overwrite to replace it")
        if self.out.exists() and not self.out.is_dir():
            raise UsageError(f"{self.out} exists and is not a directory")

    def open(self) -> Path:
        """Check OUT and return the directory to write into."""
        self.check()
        if self.resume and not self.partial.exists():
            raise UsageError(f"--resume: no interrupted run at {self.partial}")
        if is_main_process():
            if self.partial.exists() and not self.resume:
                shutil.rmtree(self.partial)
            self.partial.mkdir(parents=True, exist_ok=True)
        wait_for_everyone()
        return self.partial

    def commit(self) -> Path:
        """Make the finished stage visible as OUT (replacing an old one under --overwrite)."""
        wait_for_everyone()
        if not is_main_process():
            return self.out
        old = None
        if self.out.exists():
            old = self.out.with_name(self.out.name + ".old")
            if old.exists():
                shutil.rmtree(old)
            self.out.rename(old)
        self.partial.rename(self.out)
        if old is not None:
            shutil.rmtree(old)
        return self.out

    def discard(self) -> None:
        if is_main_process():
            shutil.rmtree(self.partial, ignore_errors=True)


def write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")


def save_final(source: Any, tokenizer: Any, path: Path, *, merge: bool) -> Path:
    """Write the servable checkpoint; a LoRA adapter is merged into the weights on `merge`.

    `source` is a TRL trainer (preferred: `save_model` gathers ZeRO-3 shards and writes on
    the main process only) or a plain model."""
    if not hasattr(source, "save_model"):
        model = source.merge_and_unload() if merge and hasattr(source, "merge_and_unload") \
            else source
        model.save_pretrained(path, safe_serialization=True)
        tokenizer.save_pretrained(path)
        return path
    source.save_model(str(path))
    if source.is_world_process_zero():
        if merge and (path / "adapter_config.json").is_file():
            _merge_adapter(path)
        tokenizer.save_pretrained(path)
    source.accelerator.wait_for_everyone()
    return path


def _merge_adapter(path: Path) -> None:
    """Replace the adapter saved in `path` by its base model with the adapter merged in."""
    from peft import AutoPeftModelForCausalLM

    model = AutoPeftModelForCausalLM.from_pretrained(str(path)).merge_and_unload()
    for name in ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin"):
        (path / name).unlink(missing_ok=True)
    model.save_pretrained(path, safe_serialization=True)

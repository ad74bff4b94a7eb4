"""The flywheel's servers on llama.cpp: a model folder converted to a GGUF file once, served by
`llama-server`, with `redraft serve` in front of it on its OpenAI-compatible backend.

On a CPU, llama.cpp decodes a small model several times faster than the transformers local
backend, and recording and evaluating are bound by decoding. The base model and the trained
checkpoint go through the same path (Hugging Face folder → GGUF at `--gguf-type` → one
`llama-server`), so their answers differ by their weights only. Neither tool is a dependency:
`--llama-server` names the binary and `--gguf-converter` llama.cpp's `convert_hf_to_gguf.py`,
both from llama.cpp's source tree (docs/flywheel.md builds them).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from training.flywheel.server import READY_SECONDS, ServedProcess, Server

ALIAS = "model"
LOG = "llama-server.log"


def to_gguf(folder: Path, out: Path, converter: Path, outtype: str) -> Path:
    """`folder` as one GGUF file at `out` (kept: a second call reuses it)."""
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    done = subprocess.run(
        [sys.executable, str(converter), str(folder), "--outfile", str(partial),
         "--outtype", outtype], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"{converter} could not convert {folder} to GGUF "
                           f"(exit {done.returncode}):\n{done.stderr[-2000:]}")
    partial.replace(out)
    return out


class LlamaServer(ServedProcess):
    """`llama-server` on one GGUF file as model `model`: one slot per request in flight, a
    context of `context` tokens per slot, no prompt cache (a greedy answer does not depend on
    the request before it); ready when /health answers 200."""

    def __init__(self, binary: Path, gguf: Path, log_dir: Path, *, slots: int = 1,
                 threads: int = 0, context: int = 4096,
                 ready_seconds: float = READY_SECONDS) -> None:
        super().__init__(log_dir / LOG, ready_seconds)
        self.name = str(binary)
        self.command = [str(binary), "-m", str(gguf), "--alias", ALIAS, "--host", "127.0.0.1",
                        "--port", str(self.port), "--parallel", str(slots),
                        "-c", str(context * slots)]
        if threads:
            self.command += ["-t", str(threads)]
        self.command.append("--no-cache-prompt")  # an answer never depends on the one before

    def ready(self, http: httpx.Client) -> bool:
        return http.get("/health").status_code == 200


def base_gguf(run: Path, config: Any) -> Path:
    """Where the base model's GGUF file goes: beside its converted folder, kept by
    --overwrite (the same folder converts to the same file)."""
    return run / "models" / f"base.{config.gguf_type}.gguf"


def trained_gguf(work: Path, config: Any) -> Path:
    """Where the trained checkpoint's GGUF file goes: inside the evaluation stage."""
    return work / "gguf" / f"trained.{config.gguf_type}.gguf"


@contextmanager
def served(config: Any, model: Path, data_dir: Path, gguf: Path, *,
           batched: int = 0) -> Iterator[Server]:
    """`redraft serve` on `model` for a flywheel stage: on the local backend, or, with
    `--llama-server`, on llama-server serving `model` converted to `gguf`: one process of one
    slot per request in flight (`--threads` shared among them), so that no answer is decoded
    in a batch with another and a greedy answer is the same whatever runs beside it.
    `batched` > 0: instead, one process decoding that many requests in one batch (about twice
    the tokens per second of single slots on 2 cores), for samples no figure must repeat."""
    in_flight = batched or config.concurrency
    options = {"concurrency": in_flight, "threads": config.threads,
               "device": config.device, "max_tokens": config.max_tokens,
               "judge_max_tokens": config.judge_max_tokens}
    if not config.llama_server:
        with Server(model, data_dir, **options) as server:
            yield server
        return
    to_gguf(model, gguf, Path(config.gguf_converter).expanduser(), config.gguf_type)
    binary = Path(config.llama_server).expanduser()
    if batched:
        shapes = [(batched, config.threads)]
    else:
        threads = max(1, config.threads // config.concurrency) if config.threads else 0
        shapes = [(1, threads)] * config.concurrency
    with ExitStack() as stack:
        engines = [stack.enter_context(LlamaServer(binary, gguf, data_dir / f"engine-{i}",
                                                   slots=slots, threads=threads))
                   for i, (slots, threads) in enumerate(shapes)]
        urls = ",".join(e.base_url for e in engines)
        yield stack.enter_context(Server(model, data_dir, upstream=(urls, ALIAS), **options))

"""Greedy decoding speed of the local engine beside transformers and llama.cpp, on one model, in
one run, one JSON line.

    python -m bench.peers.engines [--llama-cpp-python PYTHON | --llama-server PATH]
        [--model FOLDER_OR_GGUF] [--threads 2] [--tokens 160] [--repeats 3]

The same model (default: the embedded SmolLM2-135M-Instruct), the same chat prompt, the same
number of new tokens, one after the other on the same cores:

- `transformers`: `model.generate`, greedy, fp32 (what the local backend ran before its engine);
- `local`: the local backend (`generation.local`), greedy, its default int8 decode weights;
  and `local_pair`: two requests at once, their tokens together over the wall time;
- `llama_cpp`, when a server is given: the model's GGUF file (the packaged Q4_1 one for the
  default) served by llama-cpp-python's server (`--llama-cpp-python`, its venv's python) or
  llama.cpp's `llama-server` (`--llama-server`), one slot, `--threads` threads, asked through its
  OpenAI-compatible API with `ignore_eos`.

Each figure is the best of `--repeats` wall times of whole answers (prompt included), as tokens
per second; the ratios put the local engine beside the others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

PROMPT = "Write a story about a dragon who loves tea. Use at least 5 paragraphs."
MESSAGES = [{"role": "user", "content": PROMPT}]


def _transformers(folder: Path, tokens: int, threads: int, repeats: int) -> float:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    ids = tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True,
                                        return_tensors="pt", return_dict=True)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            started = time.perf_counter()
            model.generate(**ids, max_new_tokens=tokens, min_new_tokens=tokens,
                           do_sample=False)
            best = min(best, time.perf_counter() - started)
    return tokens / best


def _local(folder: Path, tokens: int, threads: int, repeats: int) -> tuple[float, float]:
    """(one request's rate, two requests' rate in all) on the local backend."""
    from generation.local import LocalBackend
    from generation.types import ChatParams

    async def run() -> tuple[float, float]:
        backend = LocalBackend(str(folder), device="cpu", threads=threads, concurrency=2)
        await backend.start()
        params = ChatParams(max_tokens=tokens, temperature=0)
        sampled = ChatParams(max_tokens=tokens, temperature=0.7, seed=1)
        one = two = 0.0
        try:
            for _ in range(repeats):
                started = time.perf_counter()
                reply = await backend.chat(MESSAGES, params)
                one = max(one, reply.usage.completion_tokens / (time.perf_counter() - started))
                started = time.perf_counter()
                pair = await asyncio.gather(backend.chat(MESSAGES, params),
                                            backend.chat(MESSAGES, sampled))
                made = sum(r.usage.completion_tokens for r in pair)
                two = max(two, made / (time.perf_counter() - started))
        finally:
            await backend.aclose()
        return one, two

    return asyncio.run(run())


def _apart(measure: Any, *args: Any) -> Any:
    """`measure(*args)` in a fresh process."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        return pool.submit(measure, *args).result()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _llama_cpp(gguf: Path, args: argparse.Namespace) -> float:
    import httpx

    from generation.supervisor import stop_process

    port = _free_port()
    if args.llama_cpp_python:
        command = [args.llama_cpp_python, "-m", "llama_cpp.server", "--model", str(gguf),
                   "--model_alias", "m", "--n_ctx", "2048", "--n_threads", str(args.threads),
                   "--host", "127.0.0.1", "--port", str(port)]
    else:
        command = [args.llama_server, "-m", str(gguf), "--alias", "m", "-c", "2048",
                   "-t", str(args.threads), "--host", "127.0.0.1", "--port", str(port),
                   "--parallel", "1", "--no-cache-prompt"]
    body = {"model": "m", "messages": MESSAGES, "max_tokens": args.tokens, "temperature": 0,
            "ignore_eos": True}
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(command, stdout=log, stderr=log)
        try:
            base = f"http://127.0.0.1:{port}/v1"
            with httpx.Client(base_url=base, timeout=600) as http:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    try:
                        if http.get("/models").status_code == 200:
                            break
                    except httpx.TransportError:
                        time.sleep(0.5)
                best = float("inf")
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    reply = http.post("/chat/completions", json=body).json()
                    best = min(best, time.perf_counter() - started)
                    made = reply["usage"]["completion_tokens"]
            return made / best
        finally:
            stop_process(proc, timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.engines",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    server = parser.add_mutually_exclusive_group()
    server.add_argument("--llama-cpp-python", default=None,
                        help="the python of a venv with llama-cpp-python[server]")
    server.add_argument("--llama-server", default=None, help="llama.cpp's llama-server")
    parser.add_argument("--model", default=None, help="a model folder or .gguf file")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from generation.local.source import cached_folder, locate

    source = locate(args.model or "smollm2-135m-instruct")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(source.location)
        if source.kind == "gguf":
            folder = cached_folder(folder, Path(tmp) / "models")
        # each in a process of its own: an OpenMP team left by one would slow the next
        hf = _apart(_transformers, folder, args.tokens, args.threads, args.repeats)
        one, two = _apart(_local, folder, args.tokens, args.threads, args.repeats)
        peer = None
        if (args.llama_cpp_python or args.llama_server) and source.kind == "gguf":
            peer = _llama_cpp(Path(source.location), args)
    out = {"bench": "peers.engines", "model": args.model or "SmolLM2-135M-Instruct",
           "tokens": args.tokens, "threads": args.threads,
           "transformers_tokens_per_s": round(hf, 1), "local_tokens_per_s": round(one, 1),
           "local_pair_tokens_per_s": round(two, 1),
           "local_over_transformers": round(one / hf, 2),
           "pair_over_one": round(two / one, 2)}
    if peer is not None:
        out.update(llama_cpp=("llama-cpp-python" if args.llama_cpp_python else "llama-server"),
                   llama_cpp_tokens_per_s=round(peer, 1),
                   local_over_llama_cpp=round(one / peer, 2))
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""Greedy decoding speed of the flywheel's two engines on one model, side by side, one JSON line.

    python -m bench.peers.engines --llama-server PATH --gguf-converter PATH
        [--model FOLDER_OR_GGUF] [--gguf-type q8_0] [--threads 2] [--tokens 160] [--repeats 3]

The same model (default: the embedded SmolLM2-135M-Instruct, as the flywheel converts it),
the same chat prompt, the same number of new tokens: first the transformers generation the
local backend runs (`model.generate`, greedy, `--threads` torch threads), then the model
converted to GGUF and served by llama-server (one slot, `--threads` threads, no prompt
cache), asked through its OpenAI-compatible API. Each figure is the best of `--repeats`
wall times of one whole answer (prompt included), as tokens per second.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

PROMPT = "Write a story about a dragon who loves tea. Use at least 5 paragraphs."


def _transformers(folder: Path, tokens: int, threads: int, repeats: int) -> float:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    ids = tokenizer.apply_chat_template([{"role": "user", "content": PROMPT}],
                                        add_generation_prompt=True, return_tensors="pt",
                                        return_dict=True)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            started = time.perf_counter()
            model.generate(**ids, max_new_tokens=tokens, min_new_tokens=tokens,
                           do_sample=False)
            best = min(best, time.perf_counter() - started)
    return tokens / best


def _llama_server(folder: Path, args: argparse.Namespace, work: Path) -> float:
    import httpx

    from training.flywheel.llamacpp import ALIAS, LlamaServer, to_gguf

    gguf = to_gguf(folder, work / f"model.{args.gguf_type}.gguf", Path(args.gguf_converter),
                   args.gguf_type)
    body = {"model": ALIAS, "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": args.tokens, "temperature": 0, "ignore_eos": True}
    best = float("inf")
    with LlamaServer(Path(args.llama_server), gguf, work, threads=args.threads) as server, \
            httpx.Client(base_url=server.base_url, timeout=600) as http:
        for _ in range(args.repeats):
            started = time.perf_counter()
            reply = http.post("/chat/completions", json=body).json()
            best = min(best, time.perf_counter() - started)
            assert reply["usage"]["completion_tokens"] == args.tokens, reply["usage"]
    return args.tokens / best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.engines",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llama-server", required=True)
    parser.add_argument("--gguf-converter", required=True)
    parser.add_argument("--model", default=None, help="a model folder or .gguf file")
    parser.add_argument("--gguf-type", default="q8_0", choices=("f32", "f16", "bf16", "q8_0"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from training.flywheel.server import model_folder

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = model_folder(args.model, work / "models")
        local = _transformers(folder, args.tokens, args.threads, args.repeats)
        llama = _llama_server(folder, args, work)
    print(json.dumps({"bench": "peers.engines", "model": str(args.model or "SmolLM2-135M"),
                      "tokens": args.tokens, "threads": args.threads,
                      "gguf_type": args.gguf_type,
                      "transformers_tokens_per_s": round(local, 1),
                      "llama_server_tokens_per_s": round(llama, 1),
                      "ratio": round(llama / local, 2)}))


if __name__ == "__main__":
    main()

"""Memory-bank benchmark: build, add, search and recall@5 of the vector index; one JSON line.

    python -m bench.memory                          # 10k, 100k, 1M x 384; 10k, 100k x 1024
    python -m bench.memory --skip ''                # ... and 1M x 1024 (~20 min)
    python -m bench.memory --sizes 10000 --dims 384 --no-real

Synthetic vectors are clustered, not uniform: 100 points per cluster around random unit
centres (noise of the same norm as the centre, so points of a cluster have cosine ~0.5).
Uniform random unit vectors in hundreds of dimensions are all nearly orthogonal, so their
"top 5" is noise that no approximate index (nor a real embedding model) would produce.
Every figure goes through `memory.index.VectorIndex` (worker thread and lock included).
The real set embeds the WritingBench queries with the bundled MiniLM: half are stored as
experiences in SQLite (next to the largest 384-dim synthetic set), the other half recall
them, which also times the loop's recall step without its LLM call (embed, search, load),
in several rounds, each part also alone. The load average at start and end is reported: on
a 2-core machine a busy neighbour moves every latency figure.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from memory.index import VectorIndex, digest
from memory.shard import IndexConfig

QUERIES = Path(__file__).resolve().parent.parent / "rubrics/packs/writingbench/writingbench.jsonl"


def progress(message: str) -> None:
    print(f"[bench.memory] {message}", file=sys.stderr, flush=True)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def clustered(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    dim = centres.shape[1]
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        noise = (2 * rng.random((stop - start, dim), dtype=np.float32) - 1) * np.sqrt(3 / dim)
        block = centres[rng.integers(0, len(centres), stop - start)] + noise
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3)}


def recall_at(found: list[list[str]], truth: np.ndarray, ids: list[str], k: int = 5) -> float:
    return float(np.mean([len(set(f) & {ids[j] for j in t[:k]}) / k
                          for f, t in zip(found, truth, strict=True)]))


async def timed_search(index: VectorIndex, namespace: str, queries: np.ndarray,
                       k: int = 5) -> tuple[list[list[str]], list[float]]:
    found, times = [], []
    for row in range(len(queries)):
        t0 = time.perf_counter()
        hits = (await index.search(namespace, queries[row:row + 1], k))[0]
        times.append(time.perf_counter() - t0)
        found.append([i for i, _, _ in hits])
    return found, times


async def one_size(size: int, dim: int, args: argparse.Namespace, keep: bool) -> tuple[dict, Any]:
    faiss = __import__("faiss")
    rng = np.random.default_rng(args.seed)
    centres = rng.standard_normal((max(10, size // 100), dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    progress(f"{size} x {dim}: generating")
    vectors, queries = clustered(rng, centres, size), clustered(rng, centres, args.queries)
    ids = [f"s{i:07d}" for i in range(size)]
    _, truth = faiss.knn(queries, vectors, 5, metric=faiss.METRIC_INNER_PRODUCT)
    config = IndexConfig(approximate_from=args.approximate_from)
    index = VectorIndex(tempfile.mkdtemp(prefix="bench-memory-"), "synthetic", dim, config)
    base_rss = rss_mb()
    progress(f"{size} x {dim}: building")
    t0 = time.perf_counter()
    await index.upsert("bench", ids, vectors, [0] * size)
    await index.settle()
    build_s = time.perf_counter() - t0
    extra = clustered(rng, centres, args.adds)
    t0 = time.perf_counter()
    for row in range(args.adds):
        await index.upsert("bench", [f"x{row:07d}"], extra[row:row + 1], [0])
    add_s = time.perf_counter() - t0
    await index.remove("bench", [f"x{row:07d}" for row in range(args.adds)])
    progress(f"{size} x {dim}: searching")
    await timed_search(index, "bench", queries[:20])  # warm caches
    found, times = await timed_search(index, "bench", queries)
    result = {"size": size, "dim": dim, "index": index.stats().namespaces["bench"]["kind"],
              "build_s": round(build_s, 2), "build_vectors_per_s": round(size / build_s),
              "add_one_per_s": round(args.adds / add_s), **percentiles(times),
              "recall_at_5": round(recall_at(found, truth, ids), 4),
              "rss_mb": round(rss_mb()), "index_rss_mb": round(rss_mb() - base_rss)}
    progress(json.dumps(result))
    del vectors
    if not keep:
        del index
        gc.collect()
        return result, None
    return result, index


async def real_set(index: VectorIndex | None, args: argparse.Namespace) -> dict:
    from memory import MemoryBank, build_embedder
    from store import ExperienceRecord, Store

    lines = [json.loads(x) for x in QUERIES.read_text().splitlines() if x.strip()]
    texts = [q["query"][:2000] for q in lines]
    progress(f"real set: embedding {len(texts)} WritingBench queries with MiniLM")
    embedder = await asyncio.to_thread(build_embedder, "default", bf16=args.bf16)
    t0 = time.perf_counter()
    vectors = np.concatenate([await embedder.embed(texts[i:i + 64])
                              for i in range(0, len(texts), 64)])
    embed_s = time.perf_counter() - t0
    stored, asked = vectors[0::2], vectors[1::2]
    # Recall quality on real geometry: an index of the real vectors alone, forced to IVF
    # (the shared synthetic one was trained on synthetic clusters), against exact search.
    alone = VectorIndex(tempfile.mkdtemp(prefix="bench-memory-"), embedder.name, 384,
                        IndexConfig(approximate_from=100))
    await alone.upsert("bench", [f"r{i}" for i in range(len(stored))], stored,
                       [0] * len(stored))
    found, times = await timed_search(alone, "bench", asked)
    real_recall = float(np.mean([len(set(f) & set(e)) / 5 for f, e in
                                 zip(found, exact_ids(alone, asked), strict=True)]))
    # Keys are short LLM summaries of a task, not whole requests: the first words stand in
    # (the first characters for Chinese, which has no spaces: 2 per word, a token each).
    keys = [" ".join(t.split()[:args.key_words]) if q.get("language") != "zh"
            else t[:2 * args.key_words] for q, t in zip(lines, texts, strict=True)]
    if index is None:
        index = VectorIndex(tempfile.mkdtemp(prefix="bench-memory-"), embedder.name, 384)
    index.model = embedder.name
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"sqlite+aiosqlite:///{tmp}/bench.db")
        records = [ExperienceRecord(namespace="bench", key=texts[i], text="experience text",
                                    embedding_model=embedder.name)
                   for i in range(0, len(texts), 2)]
        await store.experiences.add_many(records)
        await index.upsert("bench", [r.id for r in records], stored,
                           [digest(r.key) for r in records])
        await index.settle()
        bank = MemoryBank(store.experiences, embedder, index)
        asked_keys = keys[1::2]
        for key in asked_keys[:10]:  # warm up: first forward passes allocate
            await bank.recall(key, "bench", k=5, count=False)
        rounds, found_any = [], False
        for _ in range(args.rounds):
            step, embed_only, search_only, load_only = [], [], [], []
            for key in asked_keys:
                t0 = time.perf_counter()
                hits = await bank.recall(key, "bench", k=5, count=False)
                step.append(time.perf_counter() - t0)
                found_any = found_any or bool(hits)
            for key in asked_keys:
                t0 = time.perf_counter()
                vector = await embedder.embed([key])
                t1 = time.perf_counter()
                found = (await index.search("bench", vector, 5))[0]
                t2 = time.perf_counter()
                await store.experiences.get_many([i for i, _, _ in found], "bench")
                t3 = time.perf_counter()
                embed_only.append(t1 - t0)
                search_only.append(t2 - t1)
                load_only.append(t3 - t2)
            rounds.append({"step": percentiles(step), "embed": percentiles(embed_only),
                           "search": percentiles(search_only), "load": percentiles(load_only)})
            progress(f"recall step round: {json.dumps(rounds[-1])}")
        await store.close()
    return {"queries": len(texts), "recall_step_index_size": index.stats().count,
            "embed_per_query_ms": round(embed_s / len(texts) * 1000, 2),
            "ivf_search": percentiles(times), "ivf_recall_at_5": round(real_recall, 4),
            "recall_step_key_words": args.key_words,
            "recall_step_p50_ms": round(float(np.median([r["step"]["p50_ms"]
                                                         for r in rounds])), 3),
            "recall_step_rounds": rounds, "recall_step_found_hits": found_any}


def exact_ids(index: VectorIndex, queries: np.ndarray) -> list[list[str]]:
    """Exact top 5 ids over everything in the benchmark namespace."""
    faiss = __import__("faiss")
    shard = index._shards["bench"]
    labels, vectors = shard.contents()
    _, top = faiss.knn(queries, vectors, 5, metric=faiss.METRIC_INNER_PRODUCT)
    return [[shard.ids[int(labels[j])] for j in row] for row in top]


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--dims", default="384,1024")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--adds", type=int, default=500, help="single-vector adds timed")
    parser.add_argument("--approximate-from", type=int, default=IndexConfig().approximate_from)
    parser.add_argument("--key-words", type=int, default=24,
                        help="words of each query used as its key in the recall step")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the recall step")
    parser.add_argument("--no-real", action="store_true", help="skip the MiniLM sanity set")
    parser.add_argument("--bf16", action="store_true", help="MiniLM in bfloat16 autocast")
    parser.add_argument("--skip", default="1000000x1024",
                        help="SIZExDIM pairs left out (comma-separated; '' for none): 1M x "
                             "1024 alone builds for ~8 min on 2 cores")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    dims = [int(d) for d in args.dims.split(",")]
    started, load_at_start = time.perf_counter(), load()
    out: dict[str, Any] = {"bench": "memory", "cpus": os.cpu_count(), "synthetic": []}
    skip = {tuple(int(x) for x in pair.split("x")) for pair in args.skip.split(",") if pair}
    out["skipped"] = sorted(f"{size}x{dim}" for size, dim in skip)
    for dim in dims:
        for size in sizes:
            if (size, dim) in skip:
                continue
            keep = not args.no_real and dim == 384 and size == max(sizes)
            result, index = await one_size(size, dim, args, keep)
            out["synthetic"].append(result)
            if index is not None:
                # Right away, so that the big index is gone before the next one is built.
                out["writingbench_minilm"] = await real_set(index, args)
                del index
                gc.collect()
    if not args.no_real and "writingbench_minilm" not in out:
        out["writingbench_minilm"] = await real_set(None, args)
    out["load_average_1_5_15"] = {"start": load_at_start, "end": load()}
    out["total_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())

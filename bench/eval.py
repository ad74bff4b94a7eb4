"""The eval harness's own speed: queries/s at concurrency 8 against a fake at 200 ms per call.

The fake upstream (writer responder, its own process) stands in for both the redraft server
(one 200 ms call per answer: the `direct` method) and the judge (five per-criterion calls,
200 ms each, issued in parallel), so one query costs at best 2 x 200 ms and the ideal rate is
concurrency / 0.4 s. Prints one JSON line; the harness's progress bar is off.

    python -m bench.eval [--queries 64] [--concurrency 8] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from bench.fakes.upstream import run_subprocess
from evals.results import read_results
from evals.runner import RunOptions, run


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--queries", type=int, default=64)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--latency", type=float, default=0.2, help="seconds per upstream call")
    args = p.parse_args(argv)
    with run_subprocess(latency=args.latency, responder="writer") as fake, \
            tempfile.TemporaryDirectory() as tmp:
        options = RunOptions(server=fake.base_url, model="fake-model", judge_url=fake.base_url,
                             judge_model="fake-model", out=Path(tmp) / "out",
                             methods=("direct",), limit=args.queries,
                             concurrency=args.concurrency)
        started = time.perf_counter()
        asyncio.run(run(options, progress=False))
        seconds = time.perf_counter() - started
        rows = read_results(options.out)
    scored = sum(r["status"] == "ok" for r in rows.values())
    ideal = args.concurrency / (2 * args.latency)
    print(json.dumps({
        "bench": "eval", "queries": len(rows), "scored": scored,
        "concurrency": args.concurrency, "latency_per_call_s": args.latency,
        "seconds": round(seconds, 3), "queries_per_s": round(len(rows) / seconds, 2),
        "ideal_queries_per_s": round(ideal, 2),
        "efficiency": round(len(rows) / seconds / ideal, 3),
        "judge_calls": sum(r["judge"]["calls"] for r in rows.values())}))


if __name__ == "__main__":
    main()

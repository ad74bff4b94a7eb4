"""`redraft eval ...` (also `python -m evals ...`): run, report, compare. Bad input exits 2."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
from pathlib import Path

from evals.methods import METHODS, parse_list
from evals.queries import UsageError

RUN_HELP = """examples:
  redraft eval --server http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct \\
      --judge-url http://10.0.0.5:8000/v1 --judge-model Qwen/Qwen2.5-72B-Instruct --sample 100
  redraft eval report runs/qwen7b
  redraft eval --compare runs/before runs/after"""


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="redraft eval", epilog=RUN_HELP, formatter_class=argparse.RawTextHelpFormatter,
        description="WritingBench through a running redraft server, scored by a judge model "
                    "(Writer-R1's Tables 3-6).")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), type=Path,
                   help="compare two output directories and exit")
    p.add_argument("--server", help="the redraft server's base URL, e.g. http://host:8000/v1 "
                   "(the /v1 may be left out)")
    p.add_argument("--api-key", default=os.environ.get("REDRAFT_EVAL_API_KEY", "unused"),
                   help="key for the server (env REDRAFT_EVAL_API_KEY)")
    p.add_argument("--model", help="model name to request from the server")
    p.add_argument("--judge-url", help="OpenAI-compatible base URL of the judge")
    p.add_argument("--judge-model", help="the judge's model name")
    p.add_argument("--judge-api-key", default=os.environ.get("REDRAFT_EVAL_JUDGE_API_KEY"),
                   help="key for the judge (env REDRAFT_EVAL_JUDGE_API_KEY)")
    p.add_argument("--methods", default=",".join(METHODS),
                   help=f"comma-separated, of {', '.join(METHODS)} (default: all)")
    p.add_argument("--max-rounds", default="5", help="T, comma-separated to sweep (Table 4)")
    p.add_argument("--threshold", default="0.9", help="τ, comma-separated to sweep (Table 5)")
    pick = p.add_mutually_exclusive_group()
    pick.add_argument("--limit", type=int, help="the first N queries")
    pick.add_argument("--sample", type=int, help="N queries drawn with --seed")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--language", default="all", choices=["en", "zh", "all"])
    p.add_argument("--domain", help="D1..D6 or a domain's name")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    p.add_argument("--judge-attempts", type=int, default=3,
                   help="judgements tried before a query's score is recorded as missing")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per server request")
    p.add_argument("--out", type=Path, default=Path("eval-out"), help="output directory")
    p.add_argument("--resume", action="store_true", help="skip what results.jsonl already has")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _report(argv: list[str]) -> int:
    _require_extra()
    p = argparse.ArgumentParser(prog="redraft eval report",
                                description="Rebuild summary.json, table.md and the figures.")
    p.add_argument("dir", type=Path)
    args = p.parse_args(argv)
    from evals.report import build

    _, figures = build(args.dir)
    print((args.dir / "table.md").read_text(encoding="utf-8"))
    for path in figures:
        print(f"figure: {path}")
    return 0


def _compare(before: Path, after: Path) -> int:
    from evals.compare import compare, render

    print(render(compare(before, after)), end="")
    return 0


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    _require_extra()
    missing = [flag for flag, value in (("--server", args.server), ("--model", args.model),
                                        ("--judge-url", args.judge_url),
                                        ("--judge-model", args.judge_model)) if not value]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    from evals.report import build
    from evals.runner import RunOptions, run

    options = RunOptions(
        server=args.server, api_key=args.api_key, model=args.model, judge_url=args.judge_url,
        judge_model=args.judge_model, judge_api_key=args.judge_api_key, out=args.out,
        methods=tuple(m.strip() for m in args.methods.split(",") if m.strip()),
        max_rounds=tuple(parse_list(args.max_rounds, int, "--max-rounds")),
        thresholds=tuple(parse_list(args.threshold, float, "--threshold")),
        limit=args.limit, sample=args.sample, seed=args.seed, language=args.language,
        domain=args.domain, concurrency=args.concurrency, resume=args.resume,
        request_timeout=args.timeout, judge_attempts=args.judge_attempts)
    asyncio.run(run(options, progress=not args.quiet))
    _, figures = build(args.out)
    print((args.out / "table.md").read_text(encoding="utf-8"))
    for path in figures:
        print(f"figure: {path}")
    return 0


def _require_extra() -> None:
    """The harness draws figures and a progress bar: both come with the `eval` extra."""
    missing = [name for name in ("matplotlib", "tqdm") if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(f"{' and '.join(missing)} not installed: redraft eval needs the eval "
                         "extra (pip install 'redraft[eval]', or -e '.[eval]' in a checkout)")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["report"]:
            return _report(argv[1:])
        parser = _run_parser()
        args = parser.parse_args(argv)
        if args.compare:
            return _compare(*args.compare)
        return _run(args, parser)
    except UsageError as exc:
        print(f"redraft eval: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("redraft eval: interrupted; --resume carries on from results.jsonl",
              file=sys.stderr)
        return 130

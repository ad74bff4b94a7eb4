"""Whether the loop meets requirements that code can verify: short requests with labelled
checks (`tests/data/checks/verifiable_short.jsonl`), answered directly and by MRPO on a real
model; prompt-level pass rate (every labelled check passes) and check-level pass rate per
method, one JSON line. A third method, `conformed`, is the direct answer with the exact
changes of `rubrics.checks.conform` for the checks the pre-pass finds: what code alone does,
with no call, so that the loop's gain splits into what code meets and what the reviser does.

    python -m bench.checks_pass --model /work/models/smollm2 --max-tokens 160 --max-rounds 2
    python -m bench.checks_pass --upstream http://127.0.0.1:8080/v1 --model NAME
    python -m bench.checks_pass ... --evaluation checks   # scored by the checks, no judge
    python -m bench.checks_pass --rows answers.jsonl     # the summary of an --out file

The labels are what is scored; the loop sees only the request and finds its checks itself
(pre-pass and checklist agents), so `loop_check_recall` says how many of the labelled checks
the loop's own checklist carried. For MRPO also: answers whose draft failed a labelled check
and that pass it (`fixed`), the reverse (`broken`), the rewrites that pass more labelled
checks than the draft (`rewrites_better`) and how many of them the judge scored below the
draft on content (`better_judged_lower`: the bounded check bonus cannot carry them), the
draft scored against direct (temperature 0: the draft is the direct answer, met in code
where the loop conforms; the bench keeps each greedy answer, so that a server whose greedy
output drifts between two identical requests still gives the loop the direct answer as its
draft: MRPO's seconds then leave out the draft's decoding, its tokens count it), answers with
checks met in code (`conformed_answers`) and the labelled checks so met (`met_in_code`),
rounds, degraded loops, hidden calls and seconds.
`--no-conform` runs the loop without the exact changes. Memory is off (a fresh bank recalls
nothing in a few dozen queries). With `--out` every answer is written to a JSON-lines file
as it comes, so a long run killed halfway still leaves its rows; per-query lines go to
stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.settings import ReflectionSettings
from bench.checks_extraction import labels, load
from bench.quality import open_backend
from generation.types import ChatParams
from loops.checklists import ChecklistProvider
from loops.controller import ReflectionLoop
from loops.options import LoopOptions
from loops.probes.reviser import ReviserStatus
from rubrics.cache import MemoryChecklistCache
from rubrics.checks import Check, conform, run_checks
from rubrics.checks.prepass import prepass
from rubrics.packs import PackLibrary
from store import Store

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "checks" / \
    "verifiable_short.jsonl"
METHODS = ("direct", "conformed", "mrpo")


def passes(text: str, checks: list[Check]) -> list[bool]:
    return [o.passed for o in run_checks(text, checks)]


def outcome(text: str, checks: list[Check]) -> dict[str, Any]:
    """The labelled checks on one answer: each pass/fail, and the failures in words."""
    results = run_checks(text, checks)
    return {"passed": [o.passed for o in results],
            "failed": [o.line() for o in results if not o.passed]}


async def answer_direct(writer: Any, messages: list, params: ChatParams) -> dict[str, Any]:
    started = time.monotonic()
    completion = await writer.chat(messages, params)
    return {"answer": completion.text, "calls": 1,
            "tokens": completion.usage.total_tokens,
            "seconds": round(time.monotonic() - started, 2)}


class Replayed:
    """The writer with its greedy answers kept: the same request at temperature 0 asked again
    gets the answer it got. A greedy answer should not change, but a server's numerics can
    (llama-server, its prompt cache warm for the repeat, gave another text for a third of
    these requests), and then `conformed` and the loop would start from different texts; kept,
    the loop's draft is the direct answer and MRPO against `conformed` is the loop's own
    gain. Sampled calls (the loop's varied rewrites) always go to the upstream."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kept: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def chat(self, messages, params, schema=None):  # type: ignore[no-untyped-def]
        if params.temperature not in (0, 0.0):
            return await self.inner.chat(messages, params, schema)
        key = json.dumps([messages, repr(params), schema], sort_keys=True, default=str)
        if key not in self.kept:
            self.kept[key] = await self.inner.chat(messages, params, schema)
        return self.kept[key]


def answer_conformed(query: str, direct: dict[str, Any]) -> dict[str, Any]:
    """The direct answer with the exact changes for the checks the pre-pass finds in the
    request: no call beyond the direct one."""
    text, met = conform(direct["answer"], prepass(query))
    return {**{k: direct[k] for k in ("calls", "tokens", "seconds")}, "answer": text,
            "conformed": list(met)}


async def answer_mrpo(loop: ReflectionLoop, messages: list, params: ChatParams,
                      options: LoopOptions, wanted: list[Check]) -> dict[str, Any]:
    started = time.monotonic()
    trace = await loop.run(messages, params, options, namespace="bench")
    draft = next((c for c in trace.candidates if c.kind == "draft"), trace.answer)
    carried = {c.key() for c in trace.checklist.checks}
    drafted = sum(passes(draft.text, wanted))
    rewrites = [c for c in trace.candidates if c.kind != "draft" and c.score is not None]
    better = [c for c in rewrites if sum(passes(c.text, wanted)) > drafted]
    met = set(trace.answer.conformed)
    return {"answer": trace.answer.text, "draft": draft.text,
            "conformed": sorted(met),
            "met_in_code": sum(ok for c, ok in zip(wanted, passes(trace.answer.text, wanted),
                                                   strict=True) if c.kind in met),
            "draft_passed": passes(draft.text, wanted),
            # rewrites that pass more labelled checks than the draft, and how many of those
            # the judge scored below the draft on content
            "rewrites": len(rewrites), "rewrites_better": len(better),
            "better_judged_lower": sum(1 for c in better
                                       if (c.score or 0.0) < (draft.score or 0.0)),
            "calls": trace.ledger.total_calls, "tokens": trace.ledger.total.total_tokens,
            "rounds": trace.rounds, "stop": trace.stop_reason,
            "degraded": trace.stop_reason == "degraded",
            "answer_kind": trace.answer.kind,
            # every text the loop wrote, for reading the rewrites: kind, round, the labelled
            # checks it fails
            "candidates": [{"kind": c.kind, "round": c.round, "retried": c.retried,
                            "text": c.text, "failed": outcome(c.text, wanted)["failed"]}
                           for c in trace.candidates],
            "loop_checks": len(trace.checklist.checks),
            "loop_carried": sum(c.key() in carried for c in wanted),
            "seconds": round(time.monotonic() - started, 2)}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass rates over the answers of one method, and what the answers cost."""
    checks = [p for r in rows for p in r["passed"]]
    out: dict[str, Any] = {
        "prompt_pass_rate": round(sum(all(r["passed"]) for r in rows) / len(rows), 4),
        "check_pass_rate": round(sum(checks) / len(checks), 4) if checks else None,
        "calls": round(statistics.mean(r["calls"] for r in rows), 2),
        "tokens": round(statistics.mean(r["tokens"] for r in rows), 1),
        "seconds": round(statistics.mean(r["seconds"] for r in rows), 2),
    }
    if "draft_passed" in rows[0]:
        pairs = [(d, a) for r in rows for d, a in
                 zip(r["draft_passed"], r["passed"], strict=True)]
        out.update(
            draft_prompt_pass_rate=round(sum(all(r["draft_passed"]) for r in rows)
                                         / len(rows), 4),
            fixed=sum(1 for d, a in pairs if a and not d),
            broken=sum(1 for d, a in pairs if d and not a),
            rounds=round(statistics.mean(r["rounds"] for r in rows), 2),
            degraded=sum(r["degraded"] for r in rows),
            rewrite_answers=sum(r["answer_kind"] != "draft" for r in rows),
            conformed_answers=sum(bool(r.get("conformed")) for r in rows),
            met_in_code=sum(r.get("met_in_code", 0) for r in rows),
            rewrites=sum(r.get("rewrites", 0) for r in rows),
            rewrites_better=sum(r.get("rewrites_better", 0) for r in rows),
            better_judged_lower=sum(r.get("better_judged_lower", 0) for r in rows),
            loop_check_recall=round(sum(r["loop_carried"] for r in rows) / len(checks), 4)
            if checks else None)
    return out


def _loop(writer: Any, judge: Any, judge_params: ChatParams, store: Store,
          retries: int, reviser: ReviserStatus | None = None) -> ReflectionLoop:
    provider = ChecklistProvider(judge, judge_params, PackLibrary(), MemoryChecklistCache(),
                                 store.checklists, retries=retries)
    return ReflectionLoop(writer, judge, provider, judge_params=judge_params, retries=retries,
                          reviser_status=reviser)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rows_in = load(args.data)
    if args.language:
        rows_in = [r for r in rows_in if r["language"] == args.language]
    rows_in = [r for r in rows_in if r["checks"]][:args.queries or None]
    writer = await open_backend(args.model, args.upstream, args.max_tokens)
    # an upstream's name is the one given (a busy single-slot server may not answer /models)
    name = args.model if args.upstream else (await writer.models())[0]
    params = ChatParams(model=name, temperature=0.0, max_tokens=args.max_tokens)
    judge_params = ChatParams(model=name, temperature=0.0, max_tokens=args.judge_max_tokens)
    # `auto` with the server's default token budget relative to the draft; not its time
    # budget: the draft is replayed here (`Replayed`), so it has no seconds of its own to go by
    defaults = ReflectionSettings()
    auto = args.evaluation == "auto"
    ratio = args.token_budget_ratio or defaults.token_budget_ratio
    options = LoopOptions(max_rounds=args.max_rounds, threshold=args.threshold, memory=False,
                          checklist_mode=args.checklist_mode, conform=not args.no_conform,
                          evaluation=args.evaluation, candidates=args.candidates,
                          token_budget_ratio=ratio if auto else None,
                          time_budget_ratio=None)
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in METHODS}
    reviser: ReviserStatus | None = None
    out = args.out.open("a", encoding="utf-8") if args.out else None
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        try:
            writer = Replayed(writer)
            if auto:
                # as the server runs `auto`: a revision only once the writer passed its probe
                reviser = ReviserStatus(writer, params, name)
                print(json.dumps({"reviser_probe": (await reviser.run()).line()}),
                      file=sys.stderr, flush=True)
            loop = _loop(writer, writer, judge_params, store, args.retries, reviser)
            for item in rows_in:
                wanted = labels(item)
                messages = [{"role": "user", "content": item["query"]}]
                direct: dict[str, Any] = {}
                for method in METHODS:
                    if method == "direct":
                        row = direct = await answer_direct(writer, messages, params)
                    elif method == "conformed":
                        row = answer_conformed(item["query"], direct)
                    else:
                        row = await answer_mrpo(loop, messages, params, options, wanted)
                    row.update(outcome(row["answer"], wanted), query=item["id"], method=method)
                    rows[method].append(row)
                    if out:
                        out.write(json.dumps(row, ensure_ascii=False) + "\n")
                        out.flush()
                    print(json.dumps({k: v for k, v in row.items()
                                      if k not in ("answer", "draft")}, ensure_ascii=False),
                          file=sys.stderr, flush=True)
        finally:
            await store.close()
            if out:
                out.close()
    return {"bench": "checks_pass", "model": name, "data": args.data.name,
            "queries": len(rows_in), "checks": sum(len(r["checks"]) for r in rows_in),
            "max_tokens": args.max_tokens, "max_rounds": args.max_rounds,
            "threshold": args.threshold, "candidates": args.candidates,
            "checklist_mode": args.checklist_mode,
            "evaluation": args.evaluation, "conform": not args.no_conform,
            **({"reviser_probe": reviser.line()} if reviser is not None else {}),
            **{m: summary(rows[m]) for m in METHODS if rows[m]}}


def from_rows(path: Path) -> dict[str, Any]:
    """The summary of the answers an earlier run wrote with `--out` (a run stopped halfway
    included): only queries answered directly and by MRPO count; `conformed` where every one
    of those has it (files written before it was a method do not)."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.setdefault(row["query"], {})[row["method"]] = row
    done = [r for r in rows.values() if "direct" in r and "mrpo" in r]
    methods = [m for m in METHODS if done and all(m in r for r in done)]
    return {"bench": "checks_pass", "rows": path.name, "queries": len(done),
            **{m: summary([r[m] for r in done]) for m in methods}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="local HF folder, or the upstream's name")
    parser.add_argument("--upstream", help="an OpenAI-compatible base URL")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--queries", type=int, default=0, help="only the first N (0: all)")
    parser.add_argument("--language", choices=("en", "zh"))
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--judge-max-tokens", type=int, default=384,
                        help="the ceiling on each hidden call's schema-derived budget")
    parser.add_argument("--max-rounds", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=1,
                        help="k rewrites per round, the first as asked, the others varied")
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--checklist-mode", default="three_agent",
                        choices=("three_agent", "fused"))
    parser.add_argument("--evaluation", default="joint", choices=("joint", "checks", "auto"),
                        help="checks: the request's own checks score the loop, no judge")
    parser.add_argument("--token-budget-ratio", type=float, default=None,
                        help="under auto: the loop's tokens as a multiple of its draft's "
                             "(default: the server's)")
    parser.add_argument("--retries", type=int, default=1)
    parser.add_argument("--no-conform", action="store_true",
                        help="the loop without the exact changes that meet form checks")
    parser.add_argument("--out", type=Path, help="append every answer here as JSON lines")
    parser.add_argument("--rows", type=Path,
                        help="summarise the answers an earlier --out file holds; no model")
    args = parser.parse_args(argv)
    if args.rows:
        print(json.dumps(from_rows(args.rows), ensure_ascii=False))
        return
    if not args.model:
        parser.exit(2, "bench.checks_pass: --model is required (or --rows FILE)\n")
    if args.queries < 0 or args.max_tokens < 1 or args.max_rounds < 0 or args.candidates < 1:
        parser.exit(2, "bench.checks_pass: --queries must be >= 0, --max-tokens >= 1, "
                       "--max-rounds >= 0, --candidates >= 1\n")
    print(json.dumps(asyncio.run(run(args)), ensure_ascii=False))


if __name__ == "__main__":
    main()

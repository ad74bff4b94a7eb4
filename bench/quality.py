"""Answer quality on a real model: WritingBench queries answered directly and by the loop in
each evaluation mode asked for (`auto`, the server's default; `checks`; the `holistic`
baseline; `joint`, MRPO as the paper runs it), each answer scored by a judge on the query's own
WritingBench criteria; one JSON line.

    python -m bench.quality --model /work/models/smollm2 --queries 3 --max-tokens 96 \\
        --max-rounds 1
    python -m bench.quality --upstream http://127.0.0.1:8080/v1 --model NAME --queries 10
    python -m bench.quality --model W --judge-model J     # a judge other than the writer
    python -m bench.quality ... --methods direct,auto     # only these
    python -m bench.quality ... --domain Slogans --methods direct,joint --memory

`--model` is a local Hugging Face folder (the local backend) unless `--upstream` is given, then
it is the upstream's model name. The shortest English queries of the pack are used (a small
model on a CPU is slow). Per method: the mean judge score (0..1, the WritingBench mean
criterion score / 10), the share of answers that repeat the loop's scaffolding
(`loops.answer.scaffolding`), and for the loops the share of generic bands in generated
checklists (and of bands the repair had to write from the dimension's description because the
agent's were generic), pack fallbacks, degraded loops, rewrites the judge was asked again about
(scored exactly like their parent), rounds, hidden calls and tokens, and latency (with seconds
and tokens by stage on stderr; with `--out FILE` every answer's text too). Memory is off (a
fresh bank remembers nothing in a few unrelated queries) unless `--memory` is given: then each
loop method also runs as `METHOD+memory`, with memory on and one bank kept over the queries in
their order (each loop remembers what it learned before the next query is asked), so a sequence
of related requests (`--domain`: one WritingBench subdomain, shortest first) shows what
recalled experiences change, beside the same method with memory off. It runs right after that
method on each query and takes the checklist that run built from the cache, so both are scored
on the same rubric; its tokens leave out the checklist's (`stage_tokens`). The judge is not
counted in the loop's figures. `auto` runs as the server runs it: the judge's and the reviser's
probes first (their lines are printed as `judge_probe` and `reviser_probe`), the draft-relative
budgets of the server's defaults, the judge asked only when it passed its probe and a judged
round fits the budget, and a revision of a text scored in code only when the writer passed its
probe.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.memory_setup import memory_step, open_memory
from app.openai.reflection import loop_options
from app.openai.wire import ReflectionOptions
from app.settings import DataSettings, ReflectionSettings, Settings
from evals.judge import Judge
from evals.queries import load_queries
from generation.types import ChatParams
from loops.answer import scaffolding
from loops.checklists import ChecklistProvider
from loops.controller import ReflectionLoop
from loops.judges.calibration import JudgeStatus
from loops.memory_step import MemoryStep
from loops.probes.reviser import ReviserStatus
from loops.record import to_record
from loops.trace import LoopTrace
from rubrics.cache import MemoryChecklistCache
from rubrics.packs import PackLibrary
from rubrics.repair import generic_band, level_band
from store import Store
from store.loops import LoopRepository

METHODS = ("direct", "auto", "checks", "holistic", "joint")
MEMORY = "+memory"  # a loop method run with memory on: `joint+memory`


async def open_backend(model: str, upstream: str | None, max_tokens: int) -> Any:
    if upstream:
        from generation.openai import OpenAIBackend
        # as the server does by default: the structured form the upstream keeps
        backend = OpenAIBackend([upstream], model=model, structured="auto",
                                structured_probe_timeout=300)
        await backend.start()
        return backend
    from generation.local import LocalBackend
    backend = LocalBackend(model, device="cpu", max_new_tokens=max_tokens * 8)
    await backend.start()
    return backend


async def run(args: argparse.Namespace) -> dict[str, Any]:
    queries = sorted((q for q in load_queries() if q.language == "en"
                      and args.domain in (None, q.domain2)),
                     key=lambda q: len(q.query))[:args.queries]
    if not queries:
        raise SystemExit(f"bench.quality: no English query in subdomain {args.domain!r}")
    writer = await open_backend(args.model, args.upstream, args.max_tokens)
    judge_backend = writer if not args.judge_model else await open_backend(
        args.judge_model, args.judge_upstream or args.upstream, args.max_tokens)
    # an upstream's name is the one given (a busy single-slot server may not answer /models)
    writer_name = args.model if args.upstream else (await writer.models())[0]
    judge_name = (await judge_backend.models())[0]
    params = ChatParams(model=writer_name, temperature=0.0, max_tokens=args.max_tokens)
    judge_params = ChatParams(model=judge_name, temperature=0.0,
                              max_tokens=args.judge_max_tokens)
    # The scorer's evidence is not used here, only its scores: a short answer is enough.
    score_params = judge_params.with_(max_tokens=args.score_max_tokens)
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        bank = None
        try:
            provider = ChecklistProvider(judge_backend, judge_params, PackLibrary(),
                                         MemoryChecklistCache(), store.checklists,
                                         retries=args.retries)
            status = reviser = None
            if "auto" in args.methods:
                # what `auto` asks before it calls the judge or asks for a revision, probed as
                # the server probes it
                status = JudgeStatus(judge_backend, judge_params, judge_name)
                print(json.dumps({"judge_probe": (await status.run()).line()}),
                      file=sys.stderr, flush=True)
                reviser = ReviserStatus(writer, params, writer_name)
                print(json.dumps({"reviser_probe": (await reviser.run()).line()}),
                      file=sys.stderr, flush=True)
            step = memory = None
            if any(m.endswith(MEMORY) for m in args.methods):
                # the server's bank (embedder, FAISS index) over this run's database
                settings = Settings(data=DataSettings(dir=Path(tmp)))
                bank = await open_memory(settings, store.experiences, None)
                step = memory_step(settings, bank, judge_backend, writer, judge_params)
                memory = Remembering(step, store.loops)
            # one loop for every method: it recalls only for a method whose options turn
            # memory on (`METHOD+memory`)
            loop = ReflectionLoop(writer, judge_backend, provider, judge_params=judge_params,
                                  retries=args.retries, judge_status=status,
                                  reviser_status=reviser, memory=step)
            judge = Judge(judge_backend, score_params, attempts=1, concurrency=1)
            rows: dict[str, list[dict[str, Any]]] = {m: [] for m in args.methods}
            for q in queries:
                messages = [{"role": "user", "content": q.query}]
                for method in args.methods:
                    row = await one(method, loop, writer, judge, q, messages, params, args,
                                    memory if method.endswith(MEMORY) else None)
                    rows[method].append(row)
                    print(json.dumps({"query": q.id, "method": method,
                                      **{k: v for k, v in row.items() if k != "answer"}}),
                          file=sys.stderr, flush=True)
                    if args.out:
                        with args.out.open("a", encoding="utf-8") as out:
                            out.write(json.dumps({"query": q.id, "method": method, **row},
                                                 ensure_ascii=False) + "\n")
        finally:
            if bank is not None:
                await bank.aclose()
            await store.close()
    return {"model": writer_name, "judge": judge_name, "queries": len(queries),
            "max_tokens": args.max_tokens, "judge_max_tokens": args.judge_max_tokens,
            "max_rounds": args.max_rounds,
            **({"judge_probe": status.line()} if status is not None else {}),
            **({"reviser_probe": reviser.line()} if reviser is not None else {}),
            **{m: summary(rows[m]) for m in args.methods}}


async def one(method: str, loop: ReflectionLoop, writer: Any, judge: Judge, q: Any,
              messages: list, params: ChatParams, args: argparse.Namespace,
              memory: Remembering | None = None) -> dict[str, Any]:
    started = time.monotonic()
    row: dict[str, Any] = {}
    if method == "direct":
        completion = await writer.chat(messages, params)
        answer = completion.text
        row.update(calls=1, tokens=completion.usage.total_tokens)
    else:
        # as the server maps a request's `reflection` object (its default budgets included)
        options = loop_options(ReflectionOptions(max_rounds=args.max_rounds,
                                                 threshold=args.threshold,
                                                 memory=method.endswith(MEMORY),
                                                 evaluation=method.removesuffix(MEMORY)),
                               ReflectionSettings())
        trace = await loop.run(messages, params, options, namespace="bench")
        answer = trace.answer.text
        bands = [b.description for d in trace.checklist.dimensions for b in d.bands] \
            if trace.checklist_source == "generated" else []
        row.update(calls=trace.ledger.total_calls, tokens=trace.ledger.total.total_tokens,
                   rounds=trace.rounds, answer_kind=trace.answer.kind,
                   answer_round=trace.answer.round, degraded=trace.stop_reason == "degraded",
                   stop=trace.stop_reason, checklist=trace.checklist_source,
                   bands=len(bands), generic_bands=sum(generic_band(b) for b in bands),
                   repaired_bands=sum(level_band(b) for b in bands),
                   rejudged=sum(c.rejudged for c in trace.candidates),
                   degradations=[d.line() for d in trace.degradations],
                   stage_seconds={k: round(v, 1) for k, v in trace.ledger.seconds.items()
                                  if v},
                   stage_tokens={k: u.total_tokens for k, u in trace.ledger.usage.items()
                                 if u.total_tokens})
    row["seconds"] = round(time.monotonic() - started, 2)
    if memory is not None:
        # after the answer, as the server remembers: off the answer's seconds and tokens
        row.update(await remembered(memory, trace, params.model or ""))
    row["scaffolding"] = bool(scaffolding(answer, q.query))
    judged = await judge.judge(q, answer)
    row["score"] = judged.score
    row["answer"] = answer
    return row


@dataclass(frozen=True, slots=True)
class Remembering:
    """Memory as the server keeps it: the loop recorded, then what it learned remembered
    (an experience names the loop it came from)."""
    step: MemoryStep
    loops: LoopRepository


async def remembered(memory: Remembering, trace: LoopTrace, model: str) -> dict[str, Any]:
    """What memory did in one loop: experiences recalled above the floor and selected, the
    memory rewrite's gain over the draft, and whether the loop left an experience."""
    recalled = trace.recalled
    await memory.loops.save(to_record(trace, namespace="bench", request={"bench": "quality"},
                                      model=model, backend="bench"))
    kept = await memory.step.after_loop(trace, "bench") if trace.memory else None
    return {"recalled": len(recalled.hits) if recalled is not None else 0,
            "selected": len(recalled.selected) if recalled is not None else 0,
            "memory_gain": trace.experiences.get("memory_gain"),
            "remembered": kept is not None}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [r["score"] for r in rows if r["score"] is not None]
    out: dict[str, Any] = {
        "score": round(statistics.mean(scores), 4) if scores else None,
        "judged": len(scores),
        "scaffolding_share": round(sum(r["scaffolding"] for r in rows) / len(rows), 4),
        "calls": round(statistics.mean(r["calls"] for r in rows), 2),
        "tokens": round(statistics.mean(r["tokens"] for r in rows), 1),
        "seconds": round(statistics.mean(r["seconds"] for r in rows), 2),
    }
    if "rounds" in rows[0]:
        bands = sum(r["bands"] for r in rows)
        out.update(rounds=round(statistics.mean(r["rounds"] for r in rows), 2),
                   degraded=sum(r["degraded"] for r in rows),
                   generated_checklists=sum(r["checklist"] == "generated" for r in rows),
                   pack_fallbacks=sum(r["checklist"] == "pack" for r in rows),
                   generic_band_share=round(sum(r["generic_bands"] for r in rows) / bands, 4)
                   if bands else None,
                   repaired_band_share=round(sum(r["repaired_bands"] for r in rows) / bands, 4)
                   if bands else None,
                   rejudged=sum(r["rejudged"] for r in rows),
                   rewrite_answers=sum(r["answer_kind"] != "draft" for r in rows),
                   stops=dict(Counter(r["stop"] for r in rows)))
    if "remembered" in rows[0]:
        gains = [r["memory_gain"] for r in rows if r["memory_gain"] is not None]
        out.update(recalled=sum(r["recalled"] > 0 for r in rows),
                   selected=sum(r["selected"] > 0 for r in rows),
                   memory_gain=round(statistics.mean(gains), 4) if gains else None,
                   remembered=sum(r["remembered"] for r in rows))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="local HF folder, or the upstream's name")
    parser.add_argument("--upstream", help="an OpenAI-compatible base URL")
    parser.add_argument("--judge-model", help="the judge (default: the writer)")
    parser.add_argument("--judge-upstream")
    parser.add_argument("--queries", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--judge-max-tokens", type=int, default=384,
                        help="the ceiling on each hidden call's schema-derived budget")
    parser.add_argument("--score-max-tokens", type=int, default=64,
                        help="the WritingBench scorer's answer (only its scores are used)")
    parser.add_argument("--max-rounds", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--retries", type=int, default=1)
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated, in the order run (default: {','.join(METHODS)})")
    parser.add_argument("--domain", help="only this WritingBench subdomain's queries (a "
                                         "sequence of related requests), e.g. Slogans")
    parser.add_argument("--memory", action="store_true",
                        help="also run each loop method but holistic with memory on, as "
                             "METHOD+memory, one bank kept over the queries in order")
    parser.add_argument("--out", type=Path,
                        help="append every answer (its text, score and loop figures) here as "
                             "JSON lines, to read what each method wrote")
    args = parser.parse_args()
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(args.methods) - set(METHODS))
    if unknown or not args.methods:
        parser.exit(2, f"bench.quality: --methods takes {', '.join(METHODS)}; "
                       f"got {', '.join(unknown) or 'none'}\n")
    if args.queries < 1 or args.max_tokens < 1 or args.max_rounds < 0:
        parser.exit(2, "bench.quality: --queries, --max-tokens must be >= 1, "
                       "--max-rounds >= 0\n")
    if args.memory:
        args.methods += [m + MEMORY for m in args.methods if m not in ("direct", "holistic")]
        if not any(m.endswith(MEMORY) for m in args.methods):
            parser.exit(2, "bench.quality: --memory needs a loop method other than holistic "
                           "in --methods (auto, checks or joint)\n")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()

"""The harness: every (query, variant) through the server's API, then the judge; one line each.

The server is reached the way users reach it, with the official `openai` client; the loop's
options ride in `extra_body`. Lines are appended as they finish, so a killed run loses at most
the requests in flight and `--resume` carries on from the file.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import openai
from tqdm import tqdm

from evals.judge import Judge
from evals.methods import Variant, variants
from evals.queries import EvalQuery, UsageError, load_queries, select
from evals.results import RESULTS, RUN, drop_torn_tail, read_results, read_run, write_json
from generation.base import Backend
from generation.errors import RedraftError
from generation.openai import OpenAIBackend
from generation.types import ChatParams

_CONFIG_ERRORS = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)


@dataclass(frozen=True, slots=True)
class RunOptions:
    server: str
    model: str
    judge_url: str
    judge_model: str
    out: Path
    api_key: str = field(default="unused", repr=False)
    judge_api_key: str | None = field(default=None, repr=False)
    methods: tuple[str, ...] = ("direct", "holistic", "mrpo", "mrpo-human")
    max_rounds: tuple[int, ...] = (5,)
    thresholds: tuple[float, ...] = (0.9,)
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    language: str = "all"
    domain: str | None = None
    concurrency: int = 8
    resume: bool = False
    request_timeout: float = 900.0
    judge_attempts: int = 3

    def recorded(self) -> dict[str, Any]:
        """Every option but the keys (what `summary.json` keeps to reproduce the run)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("api_key", "judge_api_key")}
        out["out"] = str(self.out)
        return out


def redraft_version() -> str:
    try:
        return metadata.version("redraft")
    except metadata.PackageNotFoundError:
        return "unknown"


class Harness:
    def __init__(self, options: RunOptions, client: openai.AsyncOpenAI, judge: Judge) -> None:
        self.options = options
        self.client = client
        self.judge = judge

    async def row(self, query: EvalQuery, variant: Variant,
                  prior: dict[str, Any] | None) -> dict[str, Any]:
        """A whole result line; a prior line whose judge failed is judged again, not re-asked."""
        if prior is not None and prior.get("answer") is not None:
            row = {k: v for k, v in prior.items() if k not in ("scores", "score", "judge")}
        else:
            row = await self._ask(query, variant)
        if row.get("answer") is None:
            return row
        judged = await self.judge.judge(query, row["answer"])
        row.update(scores=judged.scores, score=judged.score, evidence=judged.evidence,
                   judge=judged.as_dict(), status="ok" if judged.scores else "judge_missing")
        return row

    async def _ask(self, query: EvalQuery, variant: Variant) -> dict[str, Any]:
        row: dict[str, Any] = {
            "query_id": query.id, "variant": variant.key, **variant.as_dict(),
            "language": query.language, "domain1": query.domain1, "domain2": query.domain2,
            "focus": {k: list(v) for k, v in query.focus.items()}, "answer": None}
        row.pop("key")
        started = time.monotonic()
        try:
            resp = await self.client.chat.completions.create(
                model=self.options.model, messages=[{"role": "user", "content": query.query}],
                extra_body={"reflection": with_trace(variant.reflection(query))})
        except _CONFIG_ERRORS as exc:
            raise UsageError(f"the server refused the run ({exc.status_code}): "
                             f"{_message(exc)}; check --server, --api-key and --model") from None
        except openai.APIError as exc:
            row.update(status="error", error=f"{type(exc).__name__}: {_message(exc)}",
                       latency_s=round(time.monotonic() - started, 3))
            return row
        reflection = getattr(resp, "reflection", None) or {}
        stages = reflection.get("usage") or {}
        usage = resp.usage
        row.update(
            answer=resp.choices[0].message.content or "",
            latency_s=round(time.monotonic() - started, 3),
            loop_id=reflection.get("loop_id"), rounds=reflection.get("rounds", 0),
            stop_reason=reflection.get("stop_reason") or ("skipped" if "skipped" in reflection
                                                          else None),
            loop_score=reflection.get("final_score"), loop_scores=reflection.get("scores"),
            loop_checks=loop_checks(reflection),
            hidden_calls=sum(s.get("calls", 0) for s in stages.values()) if stages else 1,
            usage={"prompt_tokens": usage.prompt_tokens if usage else 0,
                   "completion_tokens": usage.completion_tokens if usage else 0,
                   "total_tokens": usage.total_tokens if usage else 0},
            stage_usage=stages or None, error=None)
        return row


def with_trace(reflection: dict[str, Any]) -> dict[str, Any]:
    """A loop's options asking for its trace: the checklist it used carries the checks the
    report falls back on when there is no pre-pass."""
    if reflection.get("enabled") is False:
        return reflection
    return {**reflection, "return_trace": True}


def loop_checks(reflection: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The checks of the checklist the loop returned in its trace; None when it returned none
    (the rest of the trace is not kept: the server's admin API has it by loop id)."""
    checklist = (reflection.get("trace") or {}).get("checklist")
    if not isinstance(checklist, dict):
        return None
    checks = checklist.get("checks")
    return list(checks) if isinstance(checks, list) else None


def api_base(server: str) -> str:
    """The server's OpenAI base URL, given with or without its `/v1` (and trailing slashes)."""
    base = server.strip().rstrip("/")
    return base if base.endswith("/v1") else f"{base}/v1"


def _message(exc: openai.APIError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    return str(body.get("message") or exc.message)


async def _preflight(client: openai.AsyncOpenAI, judge: Backend, options: RunOptions) -> None:
    try:
        await client.models.list()
    except openai.APIConnectionError:
        raise UsageError(f"cannot reach the server at --server {options.server}") from None
    except _CONFIG_ERRORS as exc:
        raise UsageError(f"the server refused to list models ({exc.status_code}): "
                         f"{_message(exc)}; check --api-key") from None
    try:
        ready = await judge.ready()
    except RedraftError as exc:
        raise UsageError(f"the judge at --judge-url {options.judge_url} refused: "
                         f"{exc.message}; check --judge-api-key") from None
    if not ready:
        raise UsageError(f"the judge at --judge-url {options.judge_url} does not answer "
                         "GET /models")


def plan(options: RunOptions) -> tuple[list[EvalQuery], list[Variant]]:
    if options.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if options.judge_attempts < 1:
        raise UsageError("--judge-attempts must be at least 1")
    chosen = select(load_queries(), language=options.language, domain=options.domain,
                    limit=options.limit, sample=options.sample, seed=options.seed)
    return chosen, variants(options.methods, options.max_rounds, options.thresholds)


def _check_resume(options: RunOptions, existing: dict[Any, Any]) -> None:
    out = options.out
    if (existing or (out / RUN).exists()) and not options.resume:
        raise UsageError(f"{out} already holds a run; pass --resume to carry on with it, "
                         "or choose another --out")
    if options.resume and (out / RUN).exists():
        before = read_run(out).get("options", {})
        for name in ("model", "judge_model"):
            if before.get(name) != getattr(options, name):
                raise UsageError(f"--resume: {out} was run with {name}={before.get(name)!r}, "
                                 f"not {getattr(options, name)!r}")


async def run(options: RunOptions, *, progress: bool = True) -> Path:
    """Run what `options` asks for (less what `--resume` finds done); returns results.jsonl."""
    queries, chosen = plan(options)
    options.out.mkdir(parents=True, exist_ok=True)
    existing = read_results(options.out)
    _check_resume(options, existing)
    write_json(options.out / RUN, {"options": options.recorded(),
                                   "redraft_version": redraft_version(),
                                   "queries": [q.id for q in queries],
                                   "variants": [v.as_dict() for v in chosen]})
    drop_torn_tail(options.out)
    work = []
    for query in queries:
        for variant in chosen:
            prior = existing.get((query.id, variant.key))
            if prior is None or prior.get("status") != "ok":
                work.append((query, variant, prior))
    total = len(queries) * len(chosen)
    client = openai.AsyncOpenAI(base_url=api_base(options.server), api_key=options.api_key,
                                timeout=options.request_timeout, max_retries=2)
    backend = OpenAIBackend([options.judge_url], model=options.judge_model,
                            api_key=options.judge_api_key, retries=2)
    await backend.start()
    try:
        await _preflight(client, backend, options)
        judge = Judge(backend, ChatParams(model=options.judge_model),
                      attempts=options.judge_attempts)
        harness = Harness(options, client, judge)
        # Appends of one short line each: flushed at once, cheaper than a thread per line.
        sink = await asyncio.to_thread(open, options.out / RESULTS, "a", encoding="utf-8")
        with sink, tqdm(total=total, initial=total - len(work), desc="redraft eval",
                        unit="answer", disable=not progress, dynamic_ncols=True) as bar:
            await _drain(harness, work, options.concurrency, sink, bar)
    finally:
        await backend.aclose()
        await client.close()
    return options.out / RESULTS


async def _drain(harness: Harness, work: Sequence[tuple[EvalQuery, Variant, Any]],
                 concurrency: int, sink: IO[str], bar: tqdm) -> None:
    semaphore = asyncio.Semaphore(concurrency)
    stats = {"scored": 0, "score": 0.0, "rounds": 0, "missing": 0, "errors": 0}

    async def one(query: EvalQuery, variant: Variant, prior: Any) -> None:
        async with semaphore:
            row = await harness.row(query, variant, prior)
        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
        sink.flush()
        if row.get("score") is not None:
            stats["scored"] += 1
            stats["score"] += row["score"]
            stats["rounds"] += row.get("rounds") or 0
        stats["missing"] += row["status"] == "judge_missing"
        stats["errors"] += row["status"] == "error"
        n = max(1, stats["scored"])
        bar.set_postfix(score=f"{10 * stats['score'] / n:.2f}",
                        rounds=f"{stats['rounds'] / n:.2f}", missing=stats["missing"],
                        errors=stats["errors"], refresh=False)
        bar.update(1)

    tasks = [asyncio.ensure_future(one(*item)) for item in work]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


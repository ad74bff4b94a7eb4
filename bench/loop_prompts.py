"""Two loop benchmarks about what redraft sends upstream rather than how fast: the prompt
prefix an upstream's cache can reuse, and loops against a random-instance upstream."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from typing import Any

import aiohttp

from bench.fakes.random_instance import RandomResponder
from bench.fakes.upstream import FakeProcess, make_responder, run_in_thread
from bench.harness.loop_server import Bench, log, redraft_process, wait_ready

THREE_ROUNDS = {"max_rounds": 3, "threshold": 1.0, "memory": False}


def prompt_tokens(body: dict[str, Any]) -> list[str]:
    """A chat request's prompt as whitespace tokens, each message opened by its role."""
    tokens: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        tokens.append(f"<|{message.get('role')}|>")
        tokens.extend(str(content or "").split())
    return tokens


def _common(a: list[str], b: list[str]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def prefix_share(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """Of all prompt tokens, the share that repeats the longest prefix of an earlier call."""
    seen: list[list[str]] = []
    total = reused = 0
    for body in bodies:
        tokens = prompt_tokens(body)
        total += len(tokens)
        reused += max((_common(tokens, earlier) for earlier in seen), default=0)
        seen.append(tokens)
    return {"calls": len(bodies), "prompt_tokens": total, "cached_tokens": reused,
            "share": round(reused / total, 3) if total else 0.0}


async def prefix_phase(args: argparse.Namespace) -> dict[str, Any]:
    """Prompt bodies of a 3-round loop, recorded by an in-process fake (cold, then cached)."""
    log("prefix share of a 3-round loop")
    out: dict[str, Any] = {"tokens": "whitespace words + one token per message role",
                           "options": THREE_ROUNDS, "target": 0.6}
    # A low first score and small steps, so that all three rounds run.
    responder = make_responder("writer", draft_score=0.2, step=0.2)
    with run_in_thread(responder=responder) as (url, fake), \
            tempfile.TemporaryDirectory(prefix="redraft-bench-") as data_dir, \
            redraft_process(url, data_dir, args.server_cmd) as (base, proc):
        async with aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=args.request_timeout)) as http:
            await wait_ready(http, base, proc)
            b = Bench(http, base, FakeProcess(None, url), proc.pid)  # type: ignore[arg-type]
            query = b.query()
            for kind in ("cold", "cached"):
                fake.bodies.clear()
                _, data = await b.loop(query, THREE_ROUNDS)
                out[kind] = {**prefix_share(list(fake.bodies)),
                             "rounds": (data.get("reflection") or {}).get("rounds")}
    out["ok"] = out["cached"]["share"] >= 0.6
    return out


RANDOM_SERVERS = {  # server settings: checklist mode, reflection fused with evaluation or not
    "three_agent+fused_reflection": {"REDRAFT_REFLECTION_CHECKLIST_MODE": "three_agent",
                                     "REDRAFT_REFLECTION_FUSE_REFLECTION": "true"},
    "fused_checklist+separate_reflection": {"REDRAFT_REFLECTION_CHECKLIST_MODE": "fused",
                                            "REDRAFT_REFLECTION_FUSE_REFLECTION": "false"},
}


async def random_phase(args: argparse.Namespace, loops: int = 6) -> dict[str, Any]:
    """Loops of every mode against a seeded random-instance upstream, memory on."""
    log("loops against a random-instance upstream")
    out: dict[str, Any] = {"seed": args.seed, "options": {"max_rounds": 2, "threshold": 1.0,
                                                          "memory": True}}
    totals = {"loops": 0, "degraded": 0, "without_a_round": 0, "checklist_fallback": 0,
              "retries": 0}
    for name, env in RANDOM_SERVERS.items():
        responder = RandomResponder(args.seed)
        with run_in_thread(responder=responder) as (url, _), \
                tempfile.TemporaryDirectory(prefix="redraft-bench-") as data_dir, \
                redraft_process(url, data_dir, args.server_cmd, env) as (base, proc):
            async with aiohttp.ClientSession(
                    timeout=aiohttp.ClientTimeout(total=args.request_timeout)) as http:
                await wait_ready(http, base, proc)
                b = Bench(http, base, FakeProcess(None, url), proc.pid)  # type: ignore[arg-type]
                rows = []
                for evaluation in ("joint", "per_dimension"):
                    for _ in range(loops):
                        _, data = await b.loop(b.query(), {
                            "max_rounds": 2, "threshold": 1.0, "memory": True,
                            "evaluation": evaluation, "return_trace": True})
                        rows.append(data.get("reflection") or {})
                        await asyncio.sleep(0.2)  # remembering runs after the response
        row = {"loops": len(rows),
               "degraded": sum(r.get("stop_reason") == "degraded" for r in rows),
               "without_a_round": sum(not r.get("rounds") for r in rows),
               # a checklist the agents could not build: the generic pack stood in
               "checklist_fallback": sum(r.get("checklist_source") == "pack" for r in rows),
               "retries": responder.counts["retry"],
               "structured_calls": responder.counts["structured"],
               "experience_selected": sum(bool(((r.get("trace") or {}).get("experiences") or {})
                                               .get("selected")) for r in rows)}
        out[name] = row
        for key in totals:
            totals[key] += row[key]
    out["total"] = totals
    out["ok"] = not any(totals[k] for k in ("degraded", "without_a_round",
                                             "checklist_fallback", "retries"))
    return out

"""What redraft costs in front of an upstream: passthrough throughput and added latency.

Starts a zero-latency fake OpenAI upstream and redraft in passthrough in front of it (each in
its own process), then, for each concurrency, drives the upstream directly and through redraft
with a load generator in a third process, and prints one JSON line on stdout (progress and
server logs go to stderr):

    python -m bench.overhead [--duration 5] [--concurrency 1,32] [--stream] [--routes LIST]

Through redraft it drives each route in `--routes`: chat completions ("through") and the same
request on the Responses API ("through_responses", stored as by default), and reports the
Responses route's requests/s as a share of the chat route's at each concurrency.

`--target URL` measures another OpenAI-compatible proxy the same way (optillm, LiteLLM, …):
the fake upstream's URL is printed on stderr first so the proxy can be pointed at it (or pass
`--upstream URL` / `--upstream-port N` to fix it beforehand); the run waits for the target.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness.loadgen import APIS, chat_url, request_body
from generation.supervisor import stop_process

# Children import bench/ and app/ from this checkout, wherever the benchmark was started.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {"rps_c32": 850.0, "added_p50_ms_c1": 3.0,  # 30x optillm, +3 ms at c=1
           "responses_vs_chat_rps_c32": 0.8}  # the Responses route within 20% of chat's


def _log(msg: str) -> None:
    print(f"[overhead] {msg}", file=sys.stderr, flush=True)


def _die_with_parent() -> None:
    """Child side of Popen: get SIGTERM if the benchmark dies without cleaning up (Linux)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _spawn(cmd: list[str], env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen:
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (_ROOT, env.get("PYTHONPATH"))))
    return subprocess.Popen(cmd, env=env, cwd=_ROOT, preexec_fn=_die_with_parent, **kw)


def _stop(proc: subprocess.Popen, name: str) -> None:
    if stop_process(proc, timeout=10):
        _log(f"{name} ignored SIGTERM; killed it")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chat_ok(base_url: str, model: str, api_key: str | None) -> bool:
    headers = {"content-type": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(chat_url(base_url), data=request_body(model, False),
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _wait_ready(base_url: str, model: str, api_key: str | None, timeout: float,
                proc: subprocess.Popen | None = None, log_path: str | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not _chat_ok(base_url, model, api_key):
        if proc is not None and proc.poll() is not None:
            tail = Path(log_path).read_text()[-4000:] if log_path else ""
            raise RuntimeError(f"the proxy exited with {proc.returncode}:\n{tail}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{base_url} did not answer a chat request in {timeout:.0f} s")
        time.sleep(0.1)


@contextlib.contextmanager
def fake_upstream(port: int) -> Iterator[tuple[str, int]]:
    """The fake upstream in a subprocess; yields (base URL, pid)."""
    cmd = [sys.executable, "-m", "bench.fakes.upstream", "--port", str(port), "--latency", "0"]
    proc = _spawn(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            raise RuntimeError(f"fake upstream exited with {proc.wait()}")
        yield f"http://127.0.0.1:{json.loads(line)['port']}/v1", proc.pid
    finally:
        _stop(proc, "fake upstream")


@contextlib.contextmanager
def redraft(upstream: str, model: str) -> Iterator[tuple[str, int]]:
    """redraft in passthrough in a subprocess; yields (base URL, pid)."""
    with tempfile.TemporaryDirectory(prefix="redraft-bench-") as data_dir:
        port = _free_port()
        env = {**os.environ, "REDRAFT_UPSTREAM_URL": upstream, "REDRAFT_DATA_DIR": data_dir,
               "REDRAFT_REFLECTION_ENABLED": "false", "REDRAFT_LOG_LEVEL": "WARNING",
               "REDRAFT_BACKEND": "openai", "REDRAFT_MODEL": model}
        for name in ("REDRAFT_API_KEYS", "REDRAFT_API_RATE_LIMIT", "REDRAFT_API_CONCURRENCY",
                     "REDRAFT_REDIS_URL", "REDRAFT_DATABASE_URL"):
            env.pop(name, None)  # measure the default deployment, not the caller's setup
        log_path = os.path.join(data_dir, "redraft.log")
        with open(log_path, "w") as log_file:
            proc = _spawn(
                [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
                env, stdout=log_file, stderr=subprocess.STDOUT)
            try:
                base = f"http://127.0.0.1:{port}/v1"
                _wait_ready(base, model, None, 60, proc, log_path)
                yield base, proc.pid
            finally:
                _stop(proc, "redraft")


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process so far (Linux /proc; None elsewhere)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _load(url: str, concurrency: int, args: argparse.Namespace, api_key: str | None,
          watch: dict[str, int | None], api: str = "chat") -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.harness.loadgen", "--url", url, "--concurrency",
           str(concurrency), "--duration", str(args.duration), "--warmup", str(args.warmup),
           "--model", args.model, "--api", api]
    if args.stream:
        cmd.append("--stream")
    if api_key:
        cmd += ["--api-key", api_key]
    before = {name: _cpu_seconds(pid) for name, pid in watch.items()}
    proc = _spawn(cmd, stdout=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(timeout=args.duration + args.warmup + 60)
    finally:
        _stop(proc, "load generator")
    if proc.returncode != 0 or not out.strip():
        raise RuntimeError(f"load generator failed with {proc.returncode}")
    figures = json.loads(out.strip().splitlines()[-1])
    # CPU per answered request: unlike requests/s it hardly moves when other work shares the
    # cores, so it is the figure to compare between runs and between changes.
    cpu = {}
    for name, pid in watch.items():
        after = _cpu_seconds(pid)
        if after is not None and before[name] is not None and figures["answered"]:
            cpu[name] = round((after - before[name]) * 1000 / figures["answered"], 3)
    if cpu:
        figures["cpu_ms_per_req"] = cpu
    return figures


def _summary(results: dict[str, dict[str, dict[str, Any]]], levels: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in levels:
        direct, through = results["direct"][f"c{c}"], results["through"][f"c{c}"]
        if direct["rps"]:
            out[f"ratio_rps_c{c}"] = round(through["rps"] / direct["rps"], 3)
        out[f"added_p50_ms_c{c}"] = round(through["p50_ms"] - direct["p50_ms"], 3)
        responses = results.get("through_responses", {}).get(f"c{c}")
        if responses is not None:
            if through["rps"]:
                out[f"responses_vs_chat_rps_c{c}"] = round(responses["rps"] / through["rps"], 3)
            out[f"responses_added_p50_ms_c{c}"] = round(responses["p50_ms"] - direct["p50_ms"],
                                                        3)
    met = {}
    if "c32" in results["through"]:
        through = results["through"]["c32"]
        met["rps_c32"] = through["rps"] >= TARGETS["rps_c32"] and through["errors"] == 0
    if "added_p50_ms_c1" in out:
        met["added_p50_ms_c1"] = out["added_p50_ms_c1"] <= TARGETS["added_p50_ms_c1"]
    if "responses_vs_chat_rps_c32" in out:
        errors = results["through_responses"]["c32"]["errors"]
        met["responses_vs_chat_rps_c32"] = errors == 0 and (
            out["responses_vs_chat_rps_c32"] >= TARGETS["responses_vs_chat_rps_c32"])
    return {**out, "targets": TARGETS, "met": met}


@contextlib.contextmanager
def _upstream(args: argparse.Namespace) -> Iterator[tuple[str, int | None]]:
    if args.upstream:
        yield args.upstream.rstrip("/"), None
        return
    with fake_upstream(args.upstream_port) as (url, pid):
        yield url, pid


@contextlib.contextmanager
def _proxy(args: argparse.Namespace, upstream: str) -> Iterator[tuple[str, int | None]]:
    if not args.target:
        with redraft(upstream, args.model) as (url, pid):
            yield url, pid
        return
    _log(f"waiting up to {args.target_wait:.0f} s for {args.target} to answer")
    _wait_ready(args.target, args.model, args.api_key, args.target_wait)
    yield args.target.rstrip("/"), args.target_pid


def run(args: argparse.Namespace) -> dict[str, Any]:
    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    sides = [("direct", "chat")] + [("through" if r == "chat" else f"through_{r}", r)
                                    for r in routes]
    with _upstream(args) as (upstream, upstream_pid):
        _log(f"upstream: {upstream}")
        print(f"UPSTREAM_URL={upstream}", file=sys.stderr, flush=True)
        with _proxy(args, upstream) as (proxy, proxy_pid):
            _log(f"through: {proxy}")
            results: dict[str, dict[str, dict[str, Any]]] = {side: {} for side, _ in sides}
            for c in levels:
                for side, api in sides:
                    direct = side == "direct"
                    url, key = (upstream, None) if direct else (proxy, args.api_key)
                    watch = {"upstream": upstream_pid, "proxy": None if direct else proxy_pid}
                    figures = _load(url, c, args, key, {k: v for k, v in watch.items() if v},
                                    api)
                    results[side][f"c{c}"] = figures
                    _log(f"{side:17} c={c:<3} {json.dumps(figures)}")
    return {"bench": "overhead", "mode": "stream" if args.stream else "plain",
            "proxy": args.target or "redraft", "duration_s": args.duration,
            "warmup_s": args.warmup, **results, **_summary(results, levels),
            "cpus": os.cpu_count(), "loadavg": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", help="base URL (…/v1) of another proxy to measure instead")
    p.add_argument("--upstream", help="base URL of an upstream already running (no fake)")
    p.add_argument("--upstream-port", type=int, default=0, help="port for the fake upstream")
    p.add_argument("--target-wait", type=float, default=300.0,
                   help="seconds to wait for --target to answer")
    p.add_argument("--api-key", help="bearer key for --target")
    p.add_argument("--target-pid", type=int, help="pid of --target, to report its CPU use")
    p.add_argument("--model", default="fake-model", help="model name sent in each request")
    p.add_argument("--duration", type=float, default=5.0, help="measured seconds per phase")
    p.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per phase")
    p.add_argument("--concurrency", default="1,32", help="comma-separated levels")
    p.add_argument("--stream", action="store_true", help="streamed requests (SSE)")
    p.add_argument("--routes", default="chat,responses",
                   help=f"routes driven through the proxy, of {', '.join(APIS)} (chat first: "
                        "the others are compared with it)")
    args = p.parse_args(argv)
    routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    if not routes or routes[0] != "chat" or not set(routes) <= set(APIS):
        p.error(f"--routes must start with chat and name only {', '.join(APIS)}")
    # SIGTERM would skip the finally blocks that stop the subprocesses; make it an exit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        result = run(args)
    except RuntimeError as exc:
        _log(f"failed: {exc}")
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A fast fake OpenAI-compatible upstream: the thing a proxy benchmark and backend tests hit.

Raw ASGI (no framework) on uvicorn with uvloop + httptools and orjson, so that one core serves
~10k requests/s and a benchmark measures the proxy in front of it, not this. Of ours it imports
bench/ and generation's `stop_process` only. Replies are deterministic (they quote the last user
message, see `fake_replies`); `responder="writer"` answers redraft's hidden calls like a
competent model instead (`fake_writer`). Faults are injected through `FakeUpstream.fail / hang /
drop` in-process, or `POST /_fake/faults` in a subprocess. `structured` makes it take
structured-output requests like one engine (`bench.fakes.structured`): llama-cpp-python,
llama-server, vLLM...

    python -m bench.fakes.upstream --host 127.0.0.1 --port 0 --latency 0 [--responder writer]
        [--structured json_object_schema]
    # prints {"port": N} once listening
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

if __package__ in (None, ""):  # run by path (run_subprocess): the checkout's root is not
    # on sys.path, and `bench` is not installed (benches run from the checkout)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))))
from bench.fakes.replies import Reply, Responder  # noqa: E402
from bench.fakes.structured import MODES, admit, owned_by  # noqa: E402
from generation.supervisor import stop_process  # noqa: E402

_JSON = [(b"content-type", b"application/json")]
_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass
class _Fault:
    kind: str  # "fail" | "hang" | "drop" | "garbage"
    times: int
    status: int = 500
    retry_after: float | None = None
    message: str | None = None
    param: str | None = None
    code: str | None = None
    after_chunks: int = 2


class _Dropped(Exception):
    """Raised after a partial response: uvicorn then closes the connection mid-body."""


class FakeUpstream:
    """The ASGI app plus its knobs and counters (safe to poke from the test's thread)."""

    def __init__(self, *, latency: float = 0.0, chunk_delay: float = 0.0,
                 models: tuple[str, ...] = ("fake-model",),
                 responder: Responder | str | None = None, structured: str = "any") -> None:
        if structured not in MODES:
            raise ValueError(f"unknown structured mode {structured!r}; expected one of {MODES}")
        self.structured = structured  # which structured-output requests it takes
        self.latency = latency  # seconds before each chat answer starts
        self.chunk_delay = chunk_delay  # seconds between streamed chunks
        self.models = models
        self.responder = make_responder(responder) if isinstance(responder, str) else responder
        self.base_url: str | None = None
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget faults and counters (knobs such as `latency` stay as they are)."""
        self.requests: Counter[str] = Counter()  # path -> requests received
        self.bodies: deque[dict[str, Any]] = deque(maxlen=256)  # last chat request bodies
        self.refusals: deque[tuple[int, str]] = deque(maxlen=256)  # (status, message) refused
        self.in_flight = 0
        self.max_in_flight = 0
        self.disconnects = 0  # hung requests whose client went away
        self._faults: deque[_Fault] = deque()
        self._seq = 0
        reset = getattr(getattr(self, "responder", None), "reset", None)
        if reset is not None:
            reset()

    # -- fault injection -------------------------------------------------------------------
    def fail(self, status: int, times: int = 1, *, retry_after: float | None = None,
             message: str | None = None, param: str | None = None, code: str | None = None) -> None:
        """The next `times` chat requests answer `status` with an OpenAI error object."""
        self._push(_Fault("fail", times, status, retry_after, message, param, code))

    def hang(self, times: int = 1) -> None:
        """The next `times` chat requests never answer (until the client goes away)."""
        self._push(_Fault("hang", times))

    def drop(self, times: int = 1, after_chunks: int = 2) -> None:
        """The next `times` chat requests send part of the body, then drop the connection."""
        self._push(_Fault("drop", times, after_chunks=after_chunks))

    def garbage(self, times: int = 1) -> None:
        """The next `times` chat requests answer 200 with a body that is not JSON."""
        self._push(_Fault("garbage", times))

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def chat_requests(self) -> int:
        return sum(self.requests[p] for p in _CHAT_PATHS)

    def _push(self, fault: _Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def _next_fault(self) -> _Fault | None:
        if not self._faults:
            return None
        with self._lock:
            if not self._faults:
                return None
            fault = self._faults[0]
            fault.times -= 1
            if fault.times <= 0:
                self._faults.popleft()
            return fault

    # -- ASGI ------------------------------------------------------------------------------
    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        self.requests[path] += 1
        if path in _CHAT_PATHS:
            if method != "POST":
                return await _error(send, 405, "use POST")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                await self._chat(await _read_body(receive), receive, send)
            finally:
                self.in_flight -= 1
        elif path in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0,
                     "owned_by": owned_by(self.structured)} for m in self.models]
            await _json(send, 200, {"object": "list", "data": data})
        elif path == "/health":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})
        elif path.startswith("/_fake/"):
            await self._control(path, await _read_body(receive), send)
        else:
            await _error(send, 404, f"no route {path}", code="not_found")

    async def _chat(self, raw: bytes, receive: Any, send: Any) -> None:
        try:
            req = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return await _error(send, 400, "request body is not valid JSON")
        if not isinstance(req, dict) or not isinstance(req.get("messages"), list):
            return await _error(send, 400, "messages is required", param="messages")
        self.bodies.append(req)
        req = dict(req)  # rewritten to the form the responders read; `bodies` keeps it as sent
        refusal = admit(req, self.structured)
        if refusal is not None:
            self.refusals.append((refusal.status, refusal.message))
            return await _error(send, refusal.status, refusal.message, param=refusal.param)
        fault = self._next_fault()
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault is not None and fault.kind == "fail":
            headers = [] if fault.retry_after is None else [
                (b"retry-after", str(fault.retry_after).encode())]
            return await _error(send, fault.status, fault.message or f"injected {fault.status}",
                                param=fault.param, code=fault.code, headers=headers)
        if fault is not None and fault.kind == "hang":
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnects += 1
            return
        if fault is not None and fault.kind == "garbage":
            return await _send_bytes(send, 200, b"<html>not json", _JSON)
        self._seq += 1
        reply = Reply(req, self._seq, self.responder)
        drop_after = fault.after_chunks if fault is not None else None
        if req.get("stream"):
            await _stream(send, reply, drop_after, self.chunk_delay)
        else:
            data = orjson.dumps(reply.completion())
            if drop_after is not None:
                await send({"type": "http.response.start", "status": 200,
                            "headers": [*_JSON, (b"content-length", str(len(data)).encode())]})
                await send({"type": "http.response.body", "body": data[: len(data) // 2],
                            "more_body": True})
                raise _Dropped("injected drop")
            await _send_bytes(send, 200, data, _JSON)

    async def _control(self, path: str, raw: bytes, send: Any) -> None:
        if path == "/_fake/stats":
            stats = {"requests": dict(self.requests), "in_flight": self.in_flight,
                     "max_in_flight": self.max_in_flight, "disconnects": self.disconnects,
                     "refusals": len(self.refusals)}
            counts = getattr(self.responder, "counts", None)
            if counts is not None:  # what the responder recognised: kind -> calls
                stats["calls_by_kind"] = dict(counts)
            return await _json(send, 200, stats)
        body = orjson.loads(raw) if raw else {}
        if path == "/_fake/config":
            self.latency = float(body.get("latency", self.latency))
            self.chunk_delay = float(body.get("chunk_delay", self.chunk_delay))
            if body.get("structured", self.structured) not in MODES:
                return await _error(send, 400, "unknown structured mode", param="structured")
            self.structured = body.get("structured", self.structured)
        elif path == "/_fake/reset":
            self.reset()
        elif path == "/_fake/faults":
            kind = body.pop("kind", "fail")
            if kind == "clear":
                self.clear()
            elif kind in ("fail", "hang", "drop", "garbage"):
                getattr(self, kind)(**body)
            else:
                return await _error(send, 400, f"unknown fault kind {kind!r}", param="kind")
        else:
            return await _error(send, 404, f"no control {path}")
        await _json(send, 200, {"ok": True})



async def _stream(send: Any, reply: Reply, drop_after: int | None, delay: float) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": _SSE})
    for sent, data in enumerate(reply.chunks()):
        if drop_after is not None and sent >= drop_after:
            raise _Dropped("injected drop")
        if delay and sent:
            await asyncio.sleep(delay)
        await send({"type": "http.response.body", "body": data, "more_body": True})
    await send({"type": "http.response.body", "body": b""})



async def _read_body(receive: Any) -> bytes:
    message = await receive()
    body = message.get("body", b"")
    if not message.get("more_body"):
        return body
    parts = [body]
    while message.get("more_body"):
        message = await receive()
        parts.append(message.get("body", b""))
    return b"".join(parts)


async def _send_bytes(send: Any, status: int, data: bytes, headers: list) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


async def _json(send: Any, status: int, obj: Any) -> None:
    await _send_bytes(send, status, orjson.dumps(obj), _JSON)


async def _error(send: Any, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, headers: list | None = None) -> None:
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
            422: "invalid_request_error", 429: "rate_limit_error"}.get(status, "server_error")
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    await _send_bytes(send, status, orjson.dumps(body), [*_JSON, *(headers or [])])


# -- running it -------------------------------------------------------------------------------
RESPONDERS = ("default", "writer")


def make_responder(name: str, **options: Any) -> Responder | None:
    """A responder by its CLI name: "default" (None: quote the request) or "writer"
    (`options` go to `WriterResponder`: draft_score, step)."""
    if name == "default":
        return None
    if name == "writer":
        try:
            from bench.fakes.writer import WriterResponder
        except ImportError:  # run by path
            from fake_writer import WriterResponder  # type: ignore[no-redef]
        return WriterResponder(**options)
    raise ValueError(f"unknown responder {name!r}; expected one of {RESPONDERS}")


def _server(app: FakeUpstream, log_level: str) -> Any:
    import uvicorn

    config = uvicorn.Config(app, http="httptools", lifespan="off", access_log=False,
                            log_level=log_level, timeout_graceful_shutdown=1)
    return uvicorn.Server(config)


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


@contextlib.contextmanager
def run_in_thread(fake: FakeUpstream | None = None, *, latency: float = 0.0,
                  host: str = "127.0.0.1", log_level: str = "critical",
                  responder: Responder | str | None = None, structured: str = "any",
                  ) -> Iterator[tuple[str, FakeUpstream]]:
    """Serve `fake` from a background thread; yields (base URL ending in /v1, the fake)."""
    fake = fake or FakeUpstream(latency=latency, responder=responder, structured=structured)
    sock = _bind(host, 0)
    server = _server(fake, log_level)
    thread = threading.Thread(
        target=lambda: _new_loop().run_until_complete(server.serve(sockets=[sock])),
        name="fake-upstream", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("fake upstream did not start")
        time.sleep(0.005)
    fake.base_url = f"http://{host}:{sock.getsockname()[1]}/v1"
    try:
        yield fake.base_url, fake
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


class FakeProcess:
    """The fake in a subprocess (its own core); faults and counters over `/_fake/...`."""

    def __init__(self, proc: subprocess.Popen, base_url: str) -> None:
        self.proc, self.base_url = proc, base_url

    def control(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        root = self.base_url.removesuffix("/v1")
        data = None if payload is None else json.dumps(payload).encode()
        with urllib.request.urlopen(urllib.request.Request(f"{root}/_fake/{path}", data=data),
                                    timeout=5) as resp:
            return json.loads(resp.read())

    def fail(self, status: int, times: int = 1, **kw: Any) -> None:
        self.control("faults", {"kind": "fail", "status": status, "times": times, **kw})

    def stats(self) -> dict[str, Any]:
        return self.control("stats")


@contextlib.contextmanager
def run_subprocess(*, latency: float = 0.0, host: str = "127.0.0.1",
                   responder: str = "default", args: Sequence[str] = ()) -> Iterator[FakeProcess]:
    """The fake in a subprocess; `args` are more CLI flags (e.g. ["--score-step", "0"])."""
    # By path, not `-m`: it puts the checkout on sys.path, so it runs from any working directory.
    cmd = [sys.executable, os.path.abspath(__file__), "--host", host, "--port", "0",
           "--latency", str(latency), "--responder", responder, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            raise RuntimeError(f"fake upstream exited with {proc.wait()}")
        yield FakeProcess(proc, f"http://{host}:{json.loads(line)['port']}/v1")
    finally:
        stop_process(proc, timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fakes.upstream", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each call")
    parser.add_argument("--model", action="append", help="model id served (repeatable)")
    parser.add_argument("--responder", choices=RESPONDERS, default="default",
                        help="writer: answer redraft's hidden calls like a competent model")
    parser.add_argument("--draft-score", type=float, default=0.5,
                        help="writer: the judge's normalised score of an unrevised text")
    parser.add_argument("--score-step", type=float, default=0.2,
                        help="writer: how much each revision raises the score (0: never)")
    parser.add_argument("--structured", choices=MODES, default="any",
                        help="take structured-output requests like one engine (any: every form)")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    options = {"draft_score": args.draft_score, "step": args.score_step}
    fake = FakeUpstream(latency=args.latency, models=tuple(args.model or ("fake-model",)),
                        structured=args.structured,
                        responder=make_responder(args.responder, **(
                            options if args.responder == "writer" else {})))
    sock = _bind(args.host, args.port)
    server = _server(fake, args.log_level)

    async def serve() -> None:
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started and not task.done():  # noqa: ASYNC110 (uvicorn has no event)
            await asyncio.sleep(0.005)
        if server.started:
            print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
        await task

    with asyncio.Runner(loop_factory=_new_loop) as runner:
        runner.run(serve())


if __name__ == "__main__":
    main()

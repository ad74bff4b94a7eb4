"""Runs a request's generation for either OpenAI route: the MRPO loop, or a passthrough.

Chat completions and the Responses API differ only in the shapes at either end; both turn
their request into chat messages and `ChatParams`, and this service does the rest: decides
whether the loop runs, runs it (n loops for n choices), records each loop and remembers it
afterwards, or passes the request straight to the backend. Streaming callers get the first
event or chunk before anything is sent, so that an early failure still has an HTTP status.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.http.auth import Principal
from app.http.errors import error_of
from app.http.metrics import Metrics
from app.openai.reflection import checklist_spec, loop_options, skip_reason
from app.openai.wire import ReflectionOptions
from app.settings import ReflectionSettings
from generation.base import Backend
from generation.types import ChatParams, Chunk, ChunkChoice, Completion, Message, Usage
from loops.controller import ReflectionLoop
from loops.memory_step import MemoryStep
from loops.record import to_record
from loops.trace import Emit, LoopTrace
from store.group_commit import LoopWriter

log = logging.getLogger("redraft.chat")
_PIECE = re.compile(r"\S+\s*|\s+")
# Loops being remembered at once (REDRAFT_MEMORY_REMEMBER_CONCURRENCY). Remembering costs two
# judge calls and embeddings per loop; a backlog without bound grew RSS with it under sustained
# load, so past this many the loop is answered and recorded but not remembered.
MAX_REMEMBERING = 32


@dataclass(frozen=True, slots=True)
class Job:
    """One request as the service runs it: what a route's conversion produced."""

    messages: list[Message]
    params: ChatParams
    reflection: ReflectionOptions | None
    record: dict[str, Any] = field(default_factory=dict)  # the request as its loop record keeps it
    n: int = 1


class LoopService:
    def __init__(self, backend: Backend, metrics: Metrics, default_model: str, *,
                 loop: ReflectionLoop | None = None, recorder: LoopWriter | None = None,
                 defaults: ReflectionSettings | None = None, backend_name: str = "",
                 memory: MemoryStep | None = None,
                 max_remembering: int = MAX_REMEMBERING) -> None:
        self.backend = backend
        self.metrics = metrics
        self.default_model = default_model
        self.loop = loop
        self.recorder = recorder
        self.defaults = defaults or ReflectionSettings(enabled=False)
        self.backend_name = backend_name or getattr(backend, "name", "")
        self.memory = memory
        self._background: set[asyncio.Task[Any]] = set()
        if max_remembering < 1:
            raise ValueError("max_remembering must be at least 1")
        self.max_remembering = max_remembering

    async def aclose(self) -> None:
        """Let experiences being summarised finish (at most 30 s) before the bank closes."""
        if self._background:
            await asyncio.wait(self._background, timeout=30.0)

    def skip(self, reflection: ReflectionOptions | None, *, tools: bool,
             json_output: str | None) -> str | None:
        """Why the loop will not run for this request, or None when it will."""
        if self.loop is None:
            return "disabled"
        return skip_reason(reflection, self.defaults, tools=tools, json_output=json_output)

    # -- passthrough --------------------------------------------------------------------

    async def complete(self, messages: Sequence[Message], params: ChatParams) -> Completion:
        completion = await self.backend.chat(messages, params)
        self.metrics.add_tokens(completion.usage.prompt_tokens, completion.usage.completion_tokens)
        return completion

    async def open_chunks(self, messages: Sequence[Message],
                          params: ChatParams) -> AsyncIterator[Chunk]:
        """The backend's stream, its first chunk already received (a failure raises here)."""
        chunks = aiter(self.backend.stream(messages, params))
        first = await anext(chunks, None)
        return self._counted(first, chunks)

    async def _counted(self, first: Chunk | None,
                       chunks: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
        try:
            chunk = first
            while chunk is not None:
                if chunk.usage is not None:
                    self.metrics.add_tokens(chunk.usage.prompt_tokens,
                                            chunk.usage.completion_tokens)
                yield chunk
                chunk = await anext(chunks, None)
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()

    def error_body(self, exc: BaseException) -> dict[str, Any]:
        """The OpenAI error object for a failure after the stream opened (counted)."""
        _, body, _ = error_of(exc)
        self.metrics.count_error(body["error"]["type"])
        return body

    # -- the loop -------------------------------------------------------------------------

    async def run(self, job: Job, principal: Principal,
                  emit: Emit | None = None) -> list[LoopTrace]:
        """Run `job.n` loops, record each, and remember them after the answer."""
        assert self.loop is not None
        options = loop_options(job.reflection, self.defaults)
        spec = checklist_spec(job.reflection)

        async def one(index: int) -> LoopTrace:
            async def tagged(event: dict[str, Any]) -> None:
                await emit({**event, "choice": index} if job.n > 1 else event)  # type: ignore[misc]

            trace = await self.loop.run(job.messages, job.params, options,  # type: ignore[union-attr]
                                        namespace=principal.namespace, spec=spec,
                                        emit=tagged if emit else None)
            recorded = await self._record(trace, job, principal)
            # a loop scored in code ran without memory: it is not remembered either (the
            # lesson's summary would call the judge `auto` keeps it from)
            if recorded and self.memory is not None and trace.memory:
                memory, namespace = self.memory, principal.namespace
                self._after(lambda: memory.after_loop(trace, namespace))
            return trace

        traces = list(await asyncio.gather(*(one(i) for i in range(job.n))))
        for trace in traces:
            self.metrics.observe_loop(trace.stop_reason,
                                      ((d.stage, d.cause) for d in trace.degradations))
        total = sum((t.ledger.total for t in traces), Usage())
        self.metrics.add_tokens(total.prompt_tokens, total.completion_tokens)
        return traces

    async def open_run(self, job: Job, principal: Principal) -> LoopRun:
        """Start the loops; return once the first progress event is in (failures before it
        raise here, so they still get a real HTTP status)."""
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def emit(event: dict[str, Any]) -> None:
            events.put_nowait(event)

        task = asyncio.ensure_future(self.run(job, principal, emit))
        run = LoopRun(events, task)
        try:
            run.first = await run.next_event()
        except BaseException:
            task.cancel()
            raise
        return run

    def _after(self, work: Callable[[], Awaitable[Any]]) -> None:
        """Remembering runs after the answer: it never delays or fails a response, and when
        `max_remembering` loops are already being remembered this one is let go."""
        if len(self._background) >= self.max_remembering:
            self.metrics.count_error("remember_skipped")
            return
        task = asyncio.ensure_future(work())
        self._background.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._background.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.warning("remembering the loop failed: %s", t.exception())

        task.add_done_callback(done)

    async def _record(self, trace: LoopTrace, job: Job, principal: Principal) -> bool:
        if self.recorder is None:
            return False
        record = to_record(trace, namespace=principal.namespace, request=job.record,
                           model=job.params.model or "", backend=self.backend_name)
        try:
            await self.recorder.save(record)
        except Exception:  # the answer is still good; the loop is absent, never half-written
            log.exception("could not record loop %s", trace.loop_id)
            self.metrics.count_error("loop_record")
            return False
        return True


class LoopRun:
    """Loops running in the background: their progress events, then their traces."""

    def __init__(self, events: asyncio.Queue[dict[str, Any]],
                 task: asyncio.Future[list[LoopTrace]]) -> None:
        self.events = events
        self.task = task
        self.first: dict[str, Any] | None = None

    async def progress(self) -> AsyncIterator[dict[str, Any]]:
        """Every progress event, the first included, until the loops finish (or fail)."""
        event = self.first
        while event is not None:
            yield event
            event = await self.next_event()

    @property
    def traces(self) -> list[LoopTrace]:
        return self.task.result()

    def cancel(self) -> None:
        if not self.task.done():
            self.task.cancel()

    async def next_event(self) -> dict[str, Any] | None:
        """The next progress event; None once the loops finished; their error if they failed."""
        if not self.events.empty():
            return self.events.get_nowait()
        if self.task.done():
            self.task.result()
            return None
        getter = asyncio.ensure_future(self.events.get())
        try:
            await asyncio.wait((getter, self.task), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getter.done():
                getter.cancel()
        if getter.done() and not getter.cancelled():
            return getter.result()
        return await self.next_event()


def answer_chunks(index: int, text: str, finish_reason: str) -> list[Chunk]:
    """A finished answer as stream chunks: the role, groups of four words, the finish."""
    pieces = _PIECE.findall(text)
    grouped = ["".join(pieces[i:i + 4]) for i in range(0, len(pieces), 4)]
    out = [Chunk((ChunkChoice(index, content="", role="assistant"),))]
    out += [Chunk((ChunkChoice(index, content=g),)) for g in grouped]
    out.append(Chunk((ChunkChoice(index, finish_reason=finish_reason),)))
    return out

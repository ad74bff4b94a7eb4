"""Serves a chat completion request: the one service the chat route calls.

A request runs the MRPO loop (n loops for n choices) unless it cannot benefit (tools, JSON
output, disabled), in which case it passes through to the backend unchanged and the response
says why the loop was skipped.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from app.http.auth import Principal
from app.http.errors import error_of
from app.http.metrics import Metrics
from app.openai.convert import (
    check_request,
    completion_id,
    to_chunk,
    to_messages,
    to_params,
    to_response,
)
from app.openai.reflection import checklist_spec, loop_options, skip_reason, summary
from app.openai.streaming import DONE, sse, sse_comment
from app.openai.wire import ChatCompletionRequest
from app.settings import ReflectionSettings
from llm.base import Backend
from llm.types import ChatParams, Chunk, ChunkChoice, Message, Usage
from loops.controller import ReflectionLoop
from loops.memory_step import MemoryStep
from loops.record import to_record, usage_dict
from loops.trace import Emit, LoopTrace
from store.group_commit import LoopWriter

log = logging.getLogger("redraft.chat")
_PIECE = re.compile(r"\S+\s*|\s+")
# Loops being remembered at once (REDRAFT_MEMORY_REMEMBER_CONCURRENCY). Remembering costs two
# judge calls and embeddings per loop; a backlog without bound grew RSS with it under sustained
# load, so past this many the loop is answered and recorded but not remembered.
MAX_REMEMBERING = 32


class ChatService:
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

    def _skip(self, req: ChatCompletionRequest) -> str | None:
        return "disabled" if self.loop is None else skip_reason(req, self.defaults)

    async def complete(self, req: ChatCompletionRequest, principal: Principal) -> dict[str, Any]:
        check_request(req)
        params = to_params(req, self.default_model)
        messages = to_messages(req)
        reason = self._skip(req)
        if reason is None:
            traces = await self._run_loops(req, messages, params, principal, None)
            return self._loop_response(traces, params.model or "", req)
        completion = await self.backend.chat(messages, params)
        self.metrics.add_tokens(completion.usage.prompt_tokens, completion.usage.completion_tokens)
        return to_response(completion, response_id=completion_id(), model=params.model or "",
                           extra={"reflection": {"skipped": reason}})

    async def open_stream(self, req: ChatCompletionRequest,
                          principal: Principal) -> AsyncIterator[bytes]:
        """Start streaming; a failure before anything is sent raises (a real HTTP status)."""
        check_request(req)
        params = to_params(req, self.default_model)
        messages = to_messages(req)
        include_usage = bool(req.stream_options and req.stream_options.include_usage)
        reason = self._skip(req)
        if reason is None:
            return await self._open_loop_stream(req, messages, params, principal, include_usage)
        chunks = aiter(self.backend.stream(messages, params))
        first = await anext(chunks, None)
        return self._passthrough_events(first, chunks, params.model or "", include_usage,
                                        None if reason == "disabled" else reason)

    # -- passthrough --------------------------------------------------------------------

    async def _passthrough_events(self, first: Chunk | None, chunks: AsyncIterator[Chunk],
                                  model: str, include_usage: bool,
                                  skipped: str | None) -> AsyncIterator[bytes]:
        rid, created = completion_id(), int(time.time())
        try:
            if skipped:
                yield sse_comment({"event": "skipped", "reason": skipped})
            chunk = first
            while chunk is not None:
                if chunk.usage is not None:
                    self.metrics.add_tokens(chunk.usage.prompt_tokens,
                                            chunk.usage.completion_tokens)
                if chunk.choices or include_usage:
                    yield sse(to_chunk(chunk, response_id=rid, created=created, model=model,
                                       include_usage=include_usage))
                chunk = await anext(chunks, None)
        except Exception as exc:  # a failure mid-stream: one error event, then [DONE]
            yield self._error_event(exc)
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        yield DONE

    def _error_event(self, exc: BaseException) -> bytes:
        _, body, _ = error_of(exc)
        self.metrics.count_error(body["error"]["type"])
        return sse(body)

    # -- the loop -------------------------------------------------------------------------

    async def _run_loops(self, req: ChatCompletionRequest, messages: Sequence[Message],
                         params: ChatParams, principal: Principal,
                         emit: Emit | None) -> list[LoopTrace]:
        assert self.loop is not None
        options = loop_options(req.reflection, self.defaults)
        spec = checklist_spec(req.reflection)

        async def one(index: int) -> LoopTrace:
            async def tagged(event: dict[str, Any]) -> None:
                await emit({**event, "choice": index} if req.n > 1 else event)  # type: ignore[misc]

            trace = await self.loop.run(messages, params, options,  # type: ignore[union-attr]
                                        namespace=principal.namespace, spec=spec,
                                        emit=tagged if emit else None)
            recorded = await self._record(trace, req, principal, params.model or "")
            if recorded and self.memory is not None and options.memory:
                memory, namespace = self.memory, principal.namespace
                self._after(lambda: memory.after_loop(trace, namespace))
            return trace

        traces = list(await asyncio.gather(*(one(i) for i in range(req.n))))
        total = sum((t.ledger.total for t in traces), Usage())
        self.metrics.add_tokens(total.prompt_tokens, total.completion_tokens)
        return traces

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

    async def _record(self, trace: LoopTrace, req: ChatCompletionRequest, principal: Principal,
                      model: str) -> bool:
        if self.recorder is None:
            return False
        record = to_record(trace, namespace=principal.namespace,
                           request=req.model_dump(mode="json", exclude_none=True),
                           model=model, backend=self.backend_name)
        try:
            await self.recorder.save(record)
        except Exception:  # the answer is still good; the loop is absent, never half-written
            log.exception("could not record loop %s", trace.loop_id)
            self.metrics.count_error("loop_record")
            return False
        return True

    def _loop_response(self, traces: list[LoopTrace], model: str,
                       req: ChatCompletionRequest) -> dict[str, Any]:
        with_trace = bool(req.reflection and req.reflection.return_trace)
        total = sum((t.ledger.total for t in traces), Usage())
        reflection = summary(traces[0], with_trace)
        if len(traces) > 1:
            reflection["choices"] = [summary(t, with_trace) for t in traces]
        return {
            "id": completion_id(), "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": i, "logprobs": None,
                         "finish_reason": t.answer.finish_reason or "stop",
                         "message": {"role": "assistant", "content": t.answer.text,
                                     "refusal": None}}
                        for i, t in enumerate(traces)],
            "usage": usage_dict(total), "reflection": reflection,
        }

    async def _open_loop_stream(self, req: ChatCompletionRequest, messages: Sequence[Message],
                                params: ChatParams, principal: Principal,
                                include_usage: bool) -> AsyncIterator[bytes]:
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def emit(event: dict[str, Any]) -> None:
            events.put_nowait(event)

        task = asyncio.ensure_future(self._run_loops(req, messages, params, principal, emit))
        try:
            first = await _next_event(events, task)  # errors before this get a real status
        except BaseException:
            task.cancel()
            raise
        return self._loop_events(first, events, task, req, params.model or "", include_usage)

    async def _loop_events(self, first: dict[str, Any] | None, events: asyncio.Queue,
                           task: asyncio.Future[list[LoopTrace]], req: ChatCompletionRequest,
                           model: str, include_usage: bool) -> AsyncIterator[bytes]:
        rid, created = completion_id(), int(time.time())
        try:
            event = first
            while event is not None:
                yield sse_comment(event)
                event = await _next_event(events, task)
            response = self._loop_response(task.result(), model, req)
            for index, choice in enumerate(response["choices"]):
                for chunk in _answer_chunks(index, choice):
                    body = to_chunk(chunk, response_id=rid, created=created, model=model,
                                    include_usage=include_usage)
                    if chunk.choices[0].finish_reason is not None:
                        body["reflection"] = (response["reflection"] if index == 0 else
                                              response["reflection"]["choices"][index])
                    yield sse(body)
            if include_usage:
                u = response["usage"]
                usage = Usage(u["prompt_tokens"], u["completion_tokens"])
                yield sse(to_chunk(Chunk((), usage=usage), response_id=rid, created=created,
                                   model=model, include_usage=True))
        except Exception as exc:
            yield self._error_event(exc)
        finally:
            if not task.done():
                task.cancel()
        yield DONE


async def _next_event(events: asyncio.Queue, task: asyncio.Future[Any]) -> dict[str, Any] | None:
    """The next progress event; None once the loops finished; their error if they failed."""
    if not events.empty():
        return events.get_nowait()
    if task.done():
        task.result()
        return None
    getter = asyncio.ensure_future(events.get())
    try:
        await asyncio.wait((getter, task), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not getter.done():
            getter.cancel()
    if getter.done() and not getter.cancelled():
        return getter.result()
    return await _next_event(events, task)


def _answer_chunks(index: int, choice: dict[str, Any]) -> list[Chunk]:
    text = choice["message"]["content"] or ""
    pieces = _PIECE.findall(text)
    grouped = ["".join(pieces[i:i + 4]) for i in range(0, len(pieces), 4)]
    out = [Chunk((ChunkChoice(index, content="", role="assistant"),))]
    out += [Chunk((ChunkChoice(index, content=g),)) for g in grouped]
    out.append(Chunk((ChunkChoice(index, finish_reason=choice["finish_reason"]),)))
    return out

"""Serves a chat completion request: the one service the chat route calls.

A request runs the MRPO loop (n loops for n choices) unless it cannot benefit (tools, JSON
output, disabled), in which case it passes through to the backend unchanged and the response
says why the loop was skipped. The loop service does the running; this module converts.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from app.http.auth import Principal
from app.openai.convert import (
    check_request,
    completion_id,
    to_chunk,
    to_messages,
    to_params,
    to_response,
)
from app.openai.loop_service import Job, LoopRun, LoopService, answer_chunks
from app.openai.reflection import summary
from app.openai.streaming import DONE, sse, sse_comment
from app.openai.wire import ChatCompletionRequest
from generation.types import Chunk, Usage, wire_finish_reason
from loops.record import usage_dict
from loops.trace import LoopTrace


class ChatService:
    def __init__(self, loops: LoopService) -> None:
        self.loops = loops

    def _skip(self, req: ChatCompletionRequest) -> str | None:
        json_output = req.response_format is not None and req.response_format.type != "text"
        return self.loops.skip(req.reflection, tools=bool(req.tools),
                               json_output="response_format" if json_output else None)

    def _job(self, req: ChatCompletionRequest) -> Job:
        return Job(to_messages(req), to_params(req, self.loops.default_model), req.reflection,
                   req.model_dump(mode="json", exclude_none=True), req.n)

    async def complete(self, req: ChatCompletionRequest, principal: Principal) -> dict[str, Any]:
        check_request(req)
        reason = self._skip(req)
        if reason is None:
            job = self._job(req)
            traces = await self.loops.run(job, principal)
            return self._loop_response(traces, job.params.model or "", req)
        params = to_params(req, self.loops.default_model)
        completion = await self.loops.complete(to_messages(req), params)
        return to_response(completion, response_id=completion_id(), model=params.model or "",
                           extra={"reflection": {"skipped": reason}})

    async def open_stream(self, req: ChatCompletionRequest,
                          principal: Principal) -> AsyncIterator[bytes]:
        """Start streaming; a failure before anything is sent raises (a real HTTP status)."""
        check_request(req)
        include_usage = bool(req.stream_options and req.stream_options.include_usage)
        reason = self._skip(req)
        if reason is None:
            job = self._job(req)
            run = await self.loops.open_run(job, principal)
            return self._loop_events(run, req, job.params.model or "", include_usage)
        params = to_params(req, self.loops.default_model)
        chunks = await self.loops.open_chunks(to_messages(req), params)
        return self._passthrough_events(chunks, params.model or "", include_usage,
                                        None if reason == "disabled" else reason)

    # -- passthrough --------------------------------------------------------------------

    async def _passthrough_events(self, chunks: AsyncIterator[Chunk], model: str,
                                  include_usage: bool, skipped: str | None) -> AsyncIterator[bytes]:
        rid, created = completion_id(), int(time.time())
        try:
            if skipped:
                yield sse_comment({"event": "skipped", "reason": skipped})
            async for chunk in chunks:
                if chunk.choices or include_usage:
                    yield sse(to_chunk(chunk, response_id=rid, created=created, model=model,
                                       include_usage=include_usage))
        except Exception as exc:  # a failure mid-stream: one error event, then [DONE]
            yield sse(self.loops.error_body(exc))
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        yield DONE

    # -- the loop -------------------------------------------------------------------------

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
                         "finish_reason": wire_finish_reason(t.answer.finish_reason) or "stop",
                         "message": {"role": "assistant", "content": t.answer.text,
                                     "refusal": None}}
                        for i, t in enumerate(traces)],
            "usage": usage_dict(total), "reflection": reflection,
        }

    async def _loop_events(self, run: LoopRun, req: ChatCompletionRequest, model: str,
                           include_usage: bool) -> AsyncIterator[bytes]:
        rid, created = completion_id(), int(time.time())
        try:
            async for event in run.progress():
                yield sse_comment(event)
            response = self._loop_response(run.traces, model, req)
            for index, choice in enumerate(response["choices"]):
                text = choice["message"]["content"] or ""
                for chunk in answer_chunks(index, text, choice["finish_reason"]):
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
            yield sse(self.loops.error_body(exc))
        finally:
            run.cancel()
        yield DONE

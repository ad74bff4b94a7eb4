"""Serves POST /v1/responses, plain or streamed (the stored responses: `stored.py`).

A request becomes chat messages (its conversation: the stored chain of `previous_response_id`,
then the new input) and runs through the same loop service as chat completions: the loop
unless tools or a JSON format ask for something it cannot improve, else a passthrough. With
`store` (the default) the response and its items are kept in the caller's namespace
(`app.openai.responses.stored`: written behind the answer, visible to every read after it).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from app.http.auth import Principal
from app.openai.loop_service import Job, LoopRun, LoopService, answer_chunks
from app.openai.reflection import summary
from app.openai.responses.checks import check_request
from app.openai.responses.convert import (
    Answer,
    answer_of_completion,
    answer_of_trace,
    json_output,
    loop_request,
    to_chat,
    to_response,
)
from app.openai.responses.events import ResponseEvents
from app.openai.responses.items import Item, check_conversation, parse_input
from app.openai.responses.stored import StoredResponses, response_id
from app.openai.responses.wire import ResponseCreateRequest
from app.openai.streaming import sse_comment
from generation.types import Chunk
from store.records import ResponseRecord

# OpenAI's error codes for a failed response; anything else is a server error there.
_FAILED_CODES = {"rate_limit_error": "rate_limit_exceeded"}


@dataclass(frozen=True, slots=True)
class Turn:
    """One create request, prepared: its id, conversation, chat job, and whether it loops."""

    req: ResponseCreateRequest
    response_id: str
    created_at: int
    input_items: list[Item]  # the whole conversation so far, as stored and listed
    job: Job
    skipped: str | None

    @property
    def model(self) -> str:
        return self.job.params.model or ""


class ResponsesService:
    def __init__(self, loops: LoopService, stored: StoredResponses) -> None:
        self.loops = loops
        self.stored = stored

    # -- create ------------------------------------------------------------------------------

    async def create(self, req: ResponseCreateRequest, principal: Principal) -> dict[str, Any]:
        turn = await self._prepare(req, principal)
        if turn.skipped is None:
            [trace] = await self.loops.run(turn.job, principal)
            answer = answer_of_trace(trace, turn.model)
            reflection = summary(trace, self._with_trace(req))
        else:
            completion = await self.loops.complete(turn.job.messages, turn.job.params)
            answer, reflection = answer_of_completion(completion), {"skipped": turn.skipped}
        body = to_response(req, answer, response_id=turn.response_id,
                           created_at=turn.created_at, model=turn.model, reflection=reflection)
        self._store(turn, body, principal)
        return body

    async def open_stream(self, req: ResponseCreateRequest,
                          principal: Principal) -> AsyncIterator[bytes]:
        """Start streaming; a failure before anything is sent raises (a real HTTP status)."""
        turn = await self._prepare(req, principal)
        if turn.skipped is None:
            run = await self.loops.open_run(turn.job, principal)
            return self._loop_events(turn, run, principal)
        chunks = await self.loops.open_chunks(turn.job.messages, turn.job.params)
        return self._passthrough_events(turn, chunks, principal)

    async def _prepare(self, req: ResponseCreateRequest, principal: Principal) -> Turn:
        check_request(req)
        history: list[Item] = []
        if req.previous_response_id is not None:  # absent, or another namespace's: a 404
            previous = await self.stored.find(req.previous_response_id, principal.namespace,
                                              items=True, param="previous_response_id")
            history = [*previous.input_items, *previous.output_items]

        async def find(item_id: str) -> Item | None:
            return await self.stored.find_item(item_id, principal.namespace)

        new = await parse_input(req.input, find)
        check_conversation(history, new)
        items = [*history, *new]
        messages, params = to_chat(req, items, self.loops.default_model)
        rid = response_id()
        skipped = self.loops.skip(req.reflection, tools=bool(req.tools),
                                  json_output="text.format" if json_output(req) else None)
        job = Job(messages, params, req.reflection,
                  loop_request(req, messages, params, rid) if skipped is None else {})
        return Turn(req, rid, int(time.time()), items, job, skipped)

    @staticmethod
    def _with_trace(req: ResponseCreateRequest) -> bool:
        return bool(req.reflection and req.reflection.return_trace)

    def _store(self, turn: Turn, body: dict[str, Any], principal: Principal) -> None:
        if turn.req.store is False:
            return
        self.stored.keep(ResponseRecord(
            id=turn.response_id, namespace=principal.namespace, model=body["model"],
            status=body["status"], body=body, input_items=tuple(turn.input_items),
            output_items=tuple(body["output"]),
            previous_response_id=turn.req.previous_response_id))

    # -- streaming ---------------------------------------------------------------------------

    def _opening(self, turn: Turn, events: ResponseEvents) -> list[bytes]:
        started = to_response(turn.req, None, response_id=turn.response_id,
                              created_at=turn.created_at, model=turn.model)
        return [events.lifecycle("response.created", started),
                events.lifecycle("response.in_progress", started)]

    async def _ending(self, turn: Turn, events: ResponseEvents, answer: Answer,
                      reflection: dict[str, Any], principal: Principal) -> bytes:
        body = to_response(turn.req, answer, response_id=turn.response_id,
                           created_at=turn.created_at, model=turn.model, output=events.output,
                           reflection=reflection)
        self._store(turn, body, principal)
        kind = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
        return events.lifecycle(kind, body)

    def _failure(self, turn: Turn, events: ResponseEvents, exc: Exception) -> list[bytes]:
        error = self.loops.error_body(exc)["error"]
        failed = to_response(turn.req, None, response_id=turn.response_id,
                             created_at=turn.created_at, model=turn.model,
                             error={"code": _FAILED_CODES.get(error["type"], "server_error"),
                                    "message": error["message"]})
        return [events.event("error", code=error["code"], message=error["message"],
                             param=error["param"]),
                events.lifecycle("response.failed", failed)]

    async def _passthrough_events(self, turn: Turn, chunks: AsyncIterator[Chunk],
                                  principal: Principal) -> AsyncIterator[bytes]:
        events = ResponseEvents()
        try:
            for data in self._opening(turn, events):
                yield data
            if turn.skipped != "disabled":
                yield sse_comment({"event": "skipped", "reason": turn.skipped})
            async for chunk in chunks:
                for data in events.feed(chunk):
                    yield data
            for data in events.finish():
                yield data
            yield await self._ending(turn, events, events.answer(),
                                     {"skipped": turn.skipped}, principal)
        except Exception as exc:  # a failure mid-stream: an error event, then response.failed
            for data in self._failure(turn, events, exc):
                yield data
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _loop_events(self, turn: Turn, run: LoopRun,
                           principal: Principal) -> AsyncIterator[bytes]:
        events = ResponseEvents()
        try:
            for data in self._opening(turn, events):
                yield data
            async for progress in run.progress():
                yield sse_comment(progress)
            [trace] = run.traces
            answer = answer_of_trace(trace, turn.model)
            for chunk in answer_chunks(0, answer.text or "", answer.finish_reason or "stop"):
                for data in events.feed(chunk):
                    yield data
            for data in events.finish():
                yield data
            yield await self._ending(turn, events, events.answer(answer.usage),
                                     summary(trace, self._with_trace(turn.req)), principal)
        except Exception as exc:
            for data in self._failure(turn, events, exc):
                yield data
        finally:
            run.cancel()

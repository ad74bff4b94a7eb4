"""Typed Responses stream events, numbered in order, built from chat completion chunks.

The passthrough feeds the upstream's chunks as they come; the loop feeds its finished answer
cut into chunks. Either way the events are OpenAI's: `response.created`, `response.in_progress`,
then per output item `output_item.added`, its content part or its arguments streamed, the
matching `.done` events, and finally `response.completed` (or `.incomplete`, or `error` and
`response.failed`). Items are emitted one after another: a new item closes the one before.
"""

from __future__ import annotations

from typing import Any

import orjson

from app.openai.responses.convert import Answer, call_item, message_item, text_part
from app.openai.responses.items import Item, item_id
from generation.types import Chunk, ChunkChoice, Usage


def sse_event(payload: dict[str, Any]) -> bytes:
    """One named server-sent event, as OpenAI sends them: `event:` then `data:`."""
    return b"event: " + payload["type"].encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


class ResponseEvents:
    """The events of one streamed response; `output` and `answer()` describe what was sent."""

    def __init__(self) -> None:
        self.sequence = 0
        self.output: list[Item] = []
        self._open: Item | None = None  # the item being streamed
        self._calls: dict[int, Item] = {}  # upstream tool-call index -> its item
        self._text: list[str] = []
        self._refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.model = ""

    def event(self, type_: str, **fields: Any) -> bytes:
        payload = {"type": type_, **fields, "sequence_number": self.sequence}
        self.sequence += 1
        return sse_event(payload)

    def lifecycle(self, type_: str, response: dict[str, Any]) -> bytes:
        return self.event(type_, response=response)

    # -- chunks in, events out ------------------------------------------------------------------

    def feed(self, chunk: Chunk) -> list[bytes]:
        if chunk.usage is not None:
            self.usage = chunk.usage
        if chunk.model:
            self.model = chunk.model
        out: list[bytes] = []
        for choice in chunk.choices:
            if choice.index == 0:
                out += self._choice(choice)
        return out

    def _choice(self, choice: ChunkChoice) -> list[bytes]:
        out: list[bytes] = []
        if choice.content:
            out += self._text_delta(choice.content)
        if choice.refusal:
            self._refusal.append(choice.refusal)
        for delta in choice.tool_calls or ():
            out += self._call_delta(delta)
        if choice.finish_reason is not None:
            self.finish_reason = choice.finish_reason
        return out

    def _index(self) -> int:
        return len(self.output) - 1

    def _text_delta(self, delta: str) -> list[bytes]:
        out: list[bytes] = []
        if self._open is None or self._open["type"] != "message":
            out += self._close("completed")
            out += self._open_message()
        self._text.append(delta)
        out.append(self.event("response.output_text.delta", item_id=self._open["id"],  # type: ignore[index]
                              output_index=self._index(), content_index=0, delta=delta,
                              logprobs=[]))
        return out

    def _open_message(self) -> list[bytes]:
        item = message_item([], "in_progress")
        self._start(item)
        return [self.event("response.output_item.added", output_index=self._index(), item=item),
                self.event("response.content_part.added", item_id=item["id"],
                           output_index=self._index(), content_index=0, part=text_part(""))]

    def _call_delta(self, delta: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        index = int(delta.get("index", 0))
        function = delta.get("function") or {}
        item = self._calls.get(index)
        if item is None:
            out += self._close("completed")
            item = call_item(delta.get("id") or item_id("call"), function.get("name") or "",
                             "", "in_progress")
            self._calls[index] = item
            self._start(item)
            out.append(self.event("response.output_item.added", output_index=self._index(),
                                  item=dict(item)))
        elif function.get("name") and not item["name"]:
            item["name"] = function["name"]
        arguments = function.get("arguments") or ""
        if arguments:
            item["arguments"] += arguments
            if item is self._open:
                out.append(self.event("response.function_call_arguments.delta",
                                      item_id=item["id"], output_index=self._index(),
                                      delta=arguments))
        return out

    def _start(self, item: Item) -> None:
        self.output.append(item)
        self._open = item

    def _close(self, status: str) -> list[bytes]:
        item, self._open = self._open, None
        if item is None:
            return []
        index = self.output.index(item)
        out: list[bytes] = []
        if item["type"] == "message":
            text = "".join(self._text)
            part = text_part(text)
            out.append(self.event("response.output_text.done", item_id=item["id"],
                                  output_index=index, content_index=0, text=text, logprobs=[]))
            out.append(self.event("response.content_part.done", item_id=item["id"],
                                  output_index=index, content_index=0, part=part))
            item["content"] = [part]
            if self._refusal:
                refusal = {"type": "refusal", "refusal": "".join(self._refusal)}
                out.append(self.event("response.content_part.added", item_id=item["id"],
                                      output_index=index, content_index=1, part=refusal))
                out.append(self.event("response.content_part.done", item_id=item["id"],
                                      output_index=index, content_index=1, part=refusal))
                item["content"].append(refusal)
        else:
            out.append(self.event("response.function_call_arguments.done", item_id=item["id"],
                                  output_index=index, name=item["name"],
                                  arguments=item["arguments"]))
        item["status"] = status
        out.append(self.event("response.output_item.done", output_index=index, item=item))
        return out

    def finish(self) -> list[bytes]:
        """Close the last item (an empty message when nothing came); the events that does."""
        out: list[bytes] = []
        if not self.output:
            out += self._open_message()
        status = "incomplete" if self.finish_reason in ("length", "content_filter") else \
            "completed"
        return out + self._close(status)

    def answer(self, usage: Usage | None = None) -> Answer:
        """What was streamed, as an answer; `usage` replaces the upstream's (the loop's total)."""
        calls = tuple({"id": i["call_id"], "type": "function",
                       "function": {"name": i["name"], "arguments": i["arguments"]}}
                      for i in self.output if i["type"] == "function_call")
        return Answer("".join(self._text), calls, "".join(self._refusal) or None,
                      self.finish_reason or "stop", usage or self.usage, self.model)

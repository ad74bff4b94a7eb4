"""The `local` backend: a transformers model on CPU or GPU, from a Hugging Face folder, a hub
name or a GGUF file (converted once into a cached folder; see `generation.local.source`).

Loading runs in a worker thread; decoding in the engine's own thread (`generation.local.
engine`), which steps every generation in flight together, up to `concurrency` at once.
Streaming is real: text leaves the thread as tokens are produced, and a consumer that stops
listening (or a cancelled task) stops its sequence at the next step.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generation.base import JsonSchema
from generation.errors import ContextOverflow, InvalidRequest, NotFound, UpstreamUnavailable
from generation.local.constrain import (
    ClosingTables,
    JsonConstraint,
    build_ll_tokenizer,
    closing_reserve,
    closing_tables,
    compile_grammar,
    reminder,
    requested_schema,
    schema_problem,
)
from generation.local.decode import DecodeOptions, Finished
from generation.local.decode import Sequence as Decoding
from generation.local.engine import Engine, Failure, HFRunner
from generation.local.llama import LlamaRunner, supported
from generation.local.model import LoadedModel, ModelLoadError, encode_prompt, load_model
from generation.local.repeats import cut_repetition
from generation.local.source import cached_folder, locate, served_name
from generation.types import (
    REPETITION,
    ChatParams,
    Choice,
    Chunk,
    ChunkChoice,
    Completion,
    Message,
    Usage,
)

__all__ = ["LocalBackend", "ModelLoadError"]


@dataclass(frozen=True, slots=True)
class _Grammar:
    ll_tokenizer: Any
    text: str
    reserve: int  # tokens kept for closing the JSON (see generation.local.constrain)
    tables: ClosingTables  # what closing mode favours


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one request decodes: prompt ids, options per sample, and the JSON grammar."""

    prompt_ids: list[int]
    options: tuple[DecodeOptions, ...]
    schema: JsonSchema | None
    grammar: _Grammar | None  # None with a schema: no constrained decoding, validate and retry


WEIGHTS = ("auto", "int8", "float")


class LocalBackend:
    name = "local"

    def __init__(
        self,
        model_path: str,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 1024,
        concurrency: int = 1,
        model_name: str | None = None,
        *,
        allow_download: bool = False,
        json_attempts: int = 3,
        cache_dir: str | Path = Path("data") / "models",
        threads: int | None = None,
        weights: str = "auto",
    ) -> None:
        if weights not in WEIGHTS:
            raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}")
        self.threads = threads
        self.weights = weights
        self.concurrency = max(1, concurrency)
        self._engine: Engine | None = None
        self.model_path = model_path
        self.cache_dir = Path(cache_dir)
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.allow_download = allow_download
        self.json_attempts = max(1, json_attempts)
        # A folder is named by its basename, a GGUF file by its stem, the default by its short
        # name; a hub id ("org/name") is already a model id.
        self.model = model_name or served_name(model_path)
        # Callers configured with the path (the server's own hidden calls) reach the same model.
        self._aliases = {self.model, model_path, model_path.rstrip("/\\")}
        self._semaphore = asyncio.Semaphore(max(1, concurrency))
        self._loaded: LoadedModel | None = None
        self._ll_tokenizer: Any = None
        self._tables: Any = None
        self._ll_lock = threading.Lock()
        self._ll_built = False

    async def start(self) -> None:
        if self._loaded is None:
            # Loaded on the engine's thread, where all of the model's torch work runs.
            engine = self._engine or Engine(max_batch=self.concurrency)
            self._engine = engine
            loaded, where = await engine.call(self._load)
            # The GGUF file and the folder converted from it name this model too.
            self._aliases |= set(where)
            engine.runner = await engine.call(lambda: self._runner(loaded))
            self._loaded = loaded

    def _runner(self, loaded: LoadedModel) -> Any:
        """The compact Llama decoder on the CPU (int8 decode weights unless `weights` is
        "float"), else the model's own forward."""
        if loaded.device.type == "cpu" and self.weights != "float" and supported(loaded.model):
            return LlamaRunner(loaded.model, "int8")
        if loaded.device.type == "cpu" and supported(loaded.model):
            return LlamaRunner(loaded.model, "float32")
        return HFRunner(loaded.model, loaded.device, loaded.forward_kwargs)

    def _load(self) -> tuple[LoadedModel, tuple[str, ...]]:
        source = locate(self.model_path)
        folder = source.location
        if source.kind == "gguf":
            folder = str(cached_folder(Path(source.location), self.cache_dir))
        loaded = load_model(folder, self.device, self.dtype, allow_download=self.allow_download,
                            threads=self.threads)
        return loaded, (source.location, folder)

    async def aclose(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            await asyncio.to_thread(engine.close)
        loaded, self._loaded = self._loaded, None
        self._ll_tokenizer, self._tables, self._ll_built = None, None, False
        if loaded is not None and loaded.device.type == "cuda":
            import torch

            del loaded
            torch.cuda.empty_cache()

    async def models(self) -> list[str]:
        return [self.model]

    async def ready(self) -> bool:
        return self._loaded is not None

    async def chat(
        self, messages: Sequence[Message], params: ChatParams, schema: JsonSchema | None = None
    ) -> Completion:
        loaded = self._require(params)
        plan = await asyncio.to_thread(self._plan, loaded, messages, params, schema)
        usage = Usage(len(plan.prompt_ids), 0)
        choices = []
        for index, options in enumerate(plan.options):
            text, finished = await self._collect(loaded, plan.prompt_ids, options, plan.grammar)
            usage += Usage(0, finished.completion_tokens)
            if plan.schema is not None and plan.grammar is None:
                text, finished, extra = await self._retry_json(
                    loaded, messages, plan.schema, options, text, finished)
                usage += extra
            choices.append(Choice(index, text, finished.reason))
        return Completion(tuple(choices), usage, self.model)

    async def stream(
        self, messages: Sequence[Message], params: ChatParams, schema: JsonSchema | None = None
    ) -> AsyncIterator[Chunk]:
        # Without constrained decoding the JSON is not retried here: streamed text cannot be
        # taken back, and the caller validates the answer anyway.
        loaded = self._require(params)
        plan = await asyncio.to_thread(self._plan, loaded, messages, params, schema)
        completion_tokens = 0
        for index, options in enumerate(plan.options):
            yield Chunk((ChunkChoice(index, content="", role="assistant"),), model=self.model)
            reason = "stop"
            # aclosing: a consumer that stops reading must stop the decoding thread now,
            # not whenever the garbage collector finalises the inner generator.
            async with aclosing(self._run(loaded, plan.prompt_ids, options, plan.grammar)) as run:
                async for event in run:
                    if isinstance(event, Finished):
                        completion_tokens += event.completion_tokens
                        reason = event.reason
                    else:
                        yield Chunk((ChunkChoice(index, content=event),), model=self.model)
            yield Chunk((ChunkChoice(index, finish_reason=reason),), model=self.model)
        yield Chunk((), usage=Usage(len(plan.prompt_ids), completion_tokens), model=self.model)

    def _require(self, params: ChatParams) -> LoadedModel:
        if params.model is not None and params.model not in self._aliases:
            raise NotFound(f"model {params.model!r} does not exist; this server serves "
                           f"{self.model!r}", param="model")
        if params.n < 1:
            raise InvalidRequest("n must be at least 1", param="n")
        if params.max_tokens is not None and params.max_tokens < 1:
            raise InvalidRequest("max_tokens must be at least 1", param="max_tokens")
        if self._loaded is None or self._engine is None:
            raise UpstreamUnavailable("the local model is not loaded yet")
        return self._loaded

    def _plan(self, loaded: LoadedModel, messages: Sequence[Message], params: ChatParams,
              schema: JsonSchema | None) -> _Plan:
        prompt_ids = encode_prompt(loaded.tokenizer, messages)
        max_tokens = params.max_tokens or self.max_new_tokens
        if loaded.context_length is not None:
            room = loaded.context_length - len(prompt_ids)
            if room < 1:
                raise ContextOverflow(
                    f"the prompt is {len(prompt_ids)} tokens; the model's context is "
                    f"{loaded.context_length}", param="messages")
            max_tokens = min(max_tokens, room)
        stop = (params.stop,) if isinstance(params.stop, str) else tuple(params.stop or ())
        options = tuple(
            DecodeOptions(
                max_tokens=max_tokens,
                temperature=params.temperature,
                top_p=params.top_p,
                stop=stop,
                # Sample i gets seed + i: reproducible, yet the n samples differ.
                seed=None if params.seed is None else params.seed + i,
                presence_penalty=params.presence_penalty or 0.0,
                frequency_penalty=params.frequency_penalty or 0.0,
            )
            for i in range(params.n)
        )
        wanted = requested_schema(params, schema)
        grammar = None
        if wanted is not None and (ll_tokenizer := self._ll_tokenizer_for(loaded)) is not None:
            grammar = _Grammar(ll_tokenizer, compile_grammar(ll_tokenizer, wanted),
                               closing_reserve(loaded.tokenizer, wanted), self._tables)
        return _Plan(prompt_ids, options, wanted, grammar)

    def _ll_tokenizer_for(self, loaded: LoadedModel) -> Any:
        with self._ll_lock:
            if not self._ll_built:
                self._ll_tokenizer = build_ll_tokenizer(
                    loaded.tokenizer, loaded.vocab_width, loaded.eos_ids)
                if self._ll_tokenizer is not None:
                    self._tables = closing_tables(loaded.tokenizer, loaded.vocab_width)
                self._ll_built = True
            return self._ll_tokenizer

    async def _collect(self, loaded: LoadedModel, prompt_ids: list[int],
                       options: DecodeOptions, grammar: _Grammar | None) -> tuple[str, Finished]:
        pieces: list[str] = []
        finished = Finished("stop", 0)
        async with aclosing(self._run(loaded, prompt_ids, options, grammar)) as run:
            async for event in run:
                if isinstance(event, Finished):
                    finished = event
                else:
                    pieces.append(event)
        text = "".join(pieces)
        if finished.reason == REPETITION:  # a looping tail: the answer ends before it
            cut, found = cut_repetition(text)
            text = cut if found else text[:finished.keep_chars].rstrip()
        return text, finished

    async def _retry_json(
        self, loaded: LoadedModel, messages: Sequence[Message], schema: JsonSchema,
        options: DecodeOptions, text: str, finished: Finished,
    ) -> tuple[str, Finished, Usage]:
        """Regenerate with a reminder until the answer validates, a bounded number of times."""
        extra = Usage()
        history = list(messages)
        for _ in range(self.json_attempts - 1):
            problem = schema_problem(text, schema)
            if problem is None:
                break
            history += [{"role": "assistant", "content": text},
                        {"role": "user", "content": reminder(schema, problem)}]
            prompt_ids = await asyncio.to_thread(encode_prompt, loaded.tokenizer, history)
            text, finished = await self._collect(loaded, prompt_ids, options, None)
            extra += Usage(len(prompt_ids), finished.completion_tokens)
        return text, finished, extra

    async def _run(self, loaded: LoadedModel, prompt_ids: list[int], options: DecodeOptions,
                   grammar: _Grammar | None) -> AsyncGenerator[str | Finished, None]:
        """Decode on the engine, relaying its events; leaving early stops the sequence."""
        async with self._semaphore:
            loop = asyncio.get_running_loop()
            events: asyncio.Queue[Any] = asyncio.Queue()
            cancel = threading.Event()

            def put(item: Any) -> None:
                try:
                    loop.call_soon_threadsafe(events.put_nowait, item)
                except RuntimeError:  # the event loop is gone: nobody is listening
                    cancel.set()

            constraint = (JsonConstraint(grammar.ll_tokenizer, grammar.text, grammar.reserve,
                                         grammar.tables) if grammar is not None else None)
            sequence = Decoding(loaded.tokenizer, loaded.vocab_width, loaded.eos_ids,
                                prompt_ids, options, put, constraint=constraint,
                                cancelled=cancel.is_set)
            self._engine.submit(sequence)  # type: ignore[union-attr]
            ended = False
            try:
                while True:
                    item = await events.get()
                    if isinstance(item, Failure):
                        ended = True
                        raise item.error
                    yield item
                    if isinstance(item, Finished):
                        ended = True
                        return
            finally:
                if not ended:
                    cancel.set()
                    # Hold the semaphore until the engine has let the sequence go, so
                    # `concurrency` bounds the model's memory use while cancellations settle.
                    await asyncio.shield(_settled(events))


async def _settled(events: asyncio.Queue[Any]) -> None:
    """Wait for a cancelled sequence's last event."""
    while not isinstance(item := await events.get(), Finished | Failure):
        del item

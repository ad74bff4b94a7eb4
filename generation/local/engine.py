"""The local backend's engine: one thread owns the model and steps every sequence in flight
together.

Requests arrive as `Sequence`s (`submit`, from any thread). The engine thread admits up to
`max_batch` of them, runs each new prompt once (`prefill`), then advances all of them a token
at a time in one batched forward pass (`step`): the weights are read once per step for every
sequence, so two requests at once cost little more than one. A sequence leaves the batch when
it finishes, is cancelled or fails; its slot's cache is freed at once.

Everything the model does with torch runs on this one thread, its loading included: libgomp,
torch's OpenMP runtime, keeps a team's workers spinning between parallel regions only while
the process has no more OpenMP threads than cores, and a decode step is hundreds of short
regions. A second thread with a team of its own (a loader in a worker thread, an embedding
model) halves the decode rate; `one_openmp_thread` keeps such a thread out of the way.

Two runners do the forward passes: `generation.local.llama.LlamaRunner` (Llama-family models
on the CPU: int8 decode weights, one preallocated cache for the batch, real batching) and
`HFRunner` (any transformers model, any device: one sequence at a time through the model's own
forward).
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from generation.local.decode import Sequence

log = logging.getLogger(__name__)


class Runner(Protocol):
    def open(self, slot: int) -> None: ...

    def close(self, slot: int) -> None: ...

    def prefill(self, slot: int, ids: list[int]) -> Any:
        """Logits [vocab] after the prompt."""

    def step(self, slots: list[int], tokens: list[int]) -> Any:
        """Logits [B, vocab] after one more token per slot."""


class Failure:
    """An error raised while decoding a sequence, relayed to whoever waits on it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class HFRunner:
    """Any transformers causal LM through its own forward and cache, a sequence at a time."""

    def __init__(self, model: Any, device: Any, forward_kwargs: dict[str, Any]) -> None:
        import torch

        self.torch = torch
        self.model = model
        self.device = device
        self.forward_kwargs = forward_kwargs
        self.caches: dict[int, Any] = {}

    def open(self, slot: int) -> None:
        self.caches[slot] = None

    def close(self, slot: int) -> None:
        self.caches.pop(slot, None)

    def _forward(self, slot: int, ids: list[int]) -> Any:
        inputs = self.torch.tensor([ids], device=self.device)
        out = self.model(input_ids=inputs, past_key_values=self.caches[slot], use_cache=True,
                         **self.forward_kwargs)
        self.caches[slot] = out.past_key_values
        return out.logits[0, -1, :].float().cpu()

    def prefill(self, slot: int, ids: list[int]) -> Any:
        return self._forward(slot, ids)

    def step(self, slots: list[int], tokens: list[int]) -> Any:
        return self.torch.stack([self._forward(s, [t]) for s, t in zip(slots, tokens,
                                                                       strict=True)])


def one_openmp_thread() -> None:
    """Give the calling thread's parallel regions one OpenMP thread, no team (torch's per-thread
    setting; `torch.set_num_threads` would change every thread's)."""
    import torch

    torch.get_num_threads()  # torch's own per-thread initialisation first, so it does not undo this
    library = os.path.join(os.path.dirname(torch.__file__), "lib", "libgomp.so.1")
    if os.path.exists(library):
        ctypes.CDLL(library).omp_set_num_threads(1)


class Engine:
    def __init__(self, runner: Runner | None = None, max_batch: int = 4) -> None:
        self.runner = runner
        self.max_batch = max(1, max_batch)
        self._jobs: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        self._pending: deque[Sequence] = deque()
        self._ready = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._next_slot = 0

    def submit(self, sequence: Sequence) -> None:
        with self._ready:
            if self._closed:
                raise RuntimeError("the local engine is closed")
            self._pending.append(sequence)
            self._wake()

    async def call(self, job: Callable[[], Any]) -> Any:
        """Run `job` on the engine thread (between decode steps); its result."""
        done: Future[Any] = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("the local engine is closed")
            self._jobs.append((job, done))
            self._wake()
        return await asyncio.wrap_future(done)

    def _wake(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="redraft-local-engine",
                                            daemon=True)
            self._thread.start()
        self._ready.notify()

    def close(self, timeout: float = 30.0) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- the engine thread -----------------------------------------------------------------

    def _run(self) -> None:
        import torch

        active: dict[int, tuple[Sequence, int]] = {}  # slot -> (sequence, token to feed)
        with torch.inference_mode():
            while True:
                admitted = self._admit(active)
                if admitted is None:
                    break
                for sequence in admitted:
                    self._start(sequence, active)
                if active:
                    self._step(active)
        for slot, (sequence, _) in list(active.items()):
            self._drop(slot, active)
            sequence.emit(Failure(RuntimeError("the local engine closed")))

    def _admit(self, active: dict[int, tuple[Sequence, int]]) -> list[Sequence] | None:
        """New sequences to start (waiting while there is nothing to do, running the jobs
        that came in); None once closed."""
        with self._ready:
            while not self._pending and not active and not self._jobs and not self._closed:
                self._ready.wait()
            jobs = list(self._jobs)
            self._jobs.clear()
        for job, done in jobs:
            try:
                done.set_result(job())
            except BaseException as exc:
                done.set_exception(exc)
        with self._ready:
            if self._closed:
                while self._pending:
                    self._pending.popleft().emit(Failure(RuntimeError(
                        "the local engine closed")))
                return None
            if self.runner is None:
                return []
            room = self.max_batch - len(active)
            admitted = []
            while self._pending and len(admitted) < room:
                admitted.append(self._pending.popleft())
            return admitted

    def _start(self, sequence: Sequence, active: dict[int, tuple[Sequence, int]]) -> None:
        slot = self._next_slot
        self._next_slot += 1
        try:
            self.runner.open(slot)
            if sequence.cancelled():
                sequence.take(None)
                self.runner.close(slot)
                return
            token = sequence.take(self.runner.prefill(slot, sequence.prompt_ids))
        except BaseException as exc:  # relayed to the waiting request, raised there
            self.runner.close(slot)
            sequence.emit(Failure(exc))
            return
        if token is None:
            self.runner.close(slot)
        else:
            active[slot] = (sequence, token)

    def _step(self, active: dict[int, tuple[Sequence, int]]) -> None:
        slots = list(active)
        try:
            logits = self.runner.step(slots, [active[s][1] for s in slots])
        except BaseException as exc:
            log.exception("local decode step failed")
            for slot in slots:
                sequence = active[slot][0]
                self._drop(slot, active)
                sequence.emit(Failure(exc))
            return
        for row, slot in enumerate(slots):
            sequence = active[slot][0]
            try:
                token = sequence.take(logits[row])
            except BaseException as exc:
                self._drop(slot, active)
                sequence.emit(Failure(exc))
                continue
            if token is None:
                self._drop(slot, active)
            else:
                active[slot] = (sequence, token)

    def _drop(self, slot: int, active: dict[int, tuple[Sequence, int]]) -> None:
        active.pop(slot, None)
        self.runner.close(slot)

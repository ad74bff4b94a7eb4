"""R3 data filtering (DRO, Xu et al.): `gspo --r3-filter`, before training and every
`--filter-every` steps.

For each prompt the policy samples G reasoning traces and scores the reference y under each
(`training.rewards.r3.reference_scores`). Two tests, in order:

1. Too hard: for each trace, the mean rank of y's worst rho% tokens (rank 0 = the most
   likely token); the prompt is dropped when no trace brings that mean inside the top-k.
2. Too flat: of the prompts left, the `drop_fraction` with the lowest max_j sigma_j (how much
   the reasoning moves any reference token) are dropped: they give R3 nothing to compare.

10% of the dropped prompts (`carry`) are carried forward anyway, chosen by a seeded draw, so a
prompt the filter misjudges still comes back. Before training the dropped prompts leave the
dataset; during training `FilteredReward` gives the prompts that drop out a constant reward
(zero advantage, no gradient) until a later pass lets them back.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from tqdm import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase, TrainerCallback

from training.parallel import gather, rank, world_size
from training.rewards.r3 import R3Options, prompt_text, reasoning_of, reference_scores


@dataclass(frozen=True, slots=True)
class FilterOptions:
    rho: float = 0.1                # share of y's worst-ranked tokens averaged per trace
    top_k: int = 100                # a trace passes when that mean rank is below this
    drop_fraction: float = 0.2      # of the rest, the share with the lowest max sigma
    carry: float = 0.1              # share of the dropped prompts kept anyway
    traces: int = 4                 # reasoning traces sampled per prompt
    max_new_tokens: int = 128
    seed: int = 0


@dataclass(frozen=True, slots=True)
class PromptSignal:
    id: str
    best_tail_rank: float           # min over traces of the mean worst-rho% rank
    max_sigma: float


@dataclass(frozen=True, slots=True)
class FilterResult:
    kept: frozenset[str]
    judged: frozenset[str]
    too_hard: tuple[str, ...]
    too_flat: tuple[str, ...]
    carried: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        return {"kept": len(self.kept), "too_hard": len(self.too_hard),
                "too_flat": len(self.too_flat), "carried": len(self.carried)}


def signal(prompt_id: str, logprobs: torch.Tensor, ranks: torch.Tensor,
           rho: float) -> PromptSignal:
    """The two filter statistics from one prompt's (G, T) log-probabilities and ranks."""
    tail = max(1, math.ceil(rho * ranks.shape[-1]))
    worst = ranks.float().topk(tail, dim=-1).values.mean(-1)           # (G,)
    sigma = logprobs.std(dim=0, unbiased=False) if logprobs.shape[0] > 1 \
        else torch.zeros(logprobs.shape[-1])
    return PromptSignal(prompt_id, float(worst.min()), float(sigma.max()))


def decide(signals: Sequence[PromptSignal], options: FilterOptions) -> FilterResult:
    """Apply the two tests and the carry-forward draw to computed signals."""
    too_hard = [s.id for s in signals if s.best_tail_rank >= options.top_k]
    rest = sorted((s for s in signals if s.best_tail_rank < options.top_k),
                  key=lambda s: (s.max_sigma, s.id))
    n_flat = int(len(rest) * options.drop_fraction)
    too_flat = [s.id for s in rest[:n_flat]]
    dropped = sorted([*too_hard, *too_flat])
    rng = random.Random(options.seed)
    carried = rng.sample(dropped, int(round(len(dropped) * options.carry)))
    kept = frozenset(s.id for s in rest[n_flat:]) | frozenset(carried)
    return FilterResult(kept, frozenset(s.id for s in signals), tuple(too_hard),
                        tuple(too_flat), tuple(sorted(carried)))


def prompt_seed(seed: int, prompt_id: str) -> int:
    """The sampling seed of one prompt's traces: the same on every process and in every
    split of the prompts between processes."""
    return (seed * 1_000_003 + zlib.crc32(prompt_id.encode())) % (2 ** 63)


@torch.no_grad()
def sample_traces(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, prompt: Any,
                  options: FilterOptions, seed: int) -> list[str]:
    """`options.traces` sampled completions of one prompt, drawn from `seed` alone (the
    caller's random state is left as it was)."""
    enc = tokenizer(prompt_text(tokenizer, prompt), add_special_tokens=False,
                    return_tensors="pt")
    device = next(model.parameters()).device
    enc = {k: v.to(device) for k, v in enc.items()}
    was_training = model.training
    model.eval()
    devices = [device] if device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            out = model.generate(**enc, do_sample=True, num_return_sequences=options.traces,
                                 max_new_tokens=options.max_new_tokens,
                                 pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id)
    finally:
        model.train(was_training)
    return tokenizer.batch_decode(out[:, enc["input_ids"].shape[-1]:], skip_special_tokens=True)


def run_filter(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
               rows: Sequence[Mapping[str, Any]], options: FilterOptions = FilterOptions(),
               r3: R3Options = R3Options(), *, progress: bool = True) -> FilterResult:
    """Sample traces for every prompt row, score its reference, and decide what to keep.

    Collective under data parallelism: each process takes every world-size-th prompt, the
    signals are gathered, and every process decides on all of them, so the decisions are
    one on every rank and the same as one process makes (each prompt's traces come from its
    own seed)."""
    mine = list(rows)[rank()::world_size()]
    signals = []
    with tqdm(total=len(mine), desc="r3 filter", disable=not progress or rank() != 0) as bar:
        for row in mine:
            bar.update()
            y = tokenizer(row["reference"], add_special_tokens=False)["input_ids"]
            if not y:
                continue
            sampled = sample_traces(model, tokenizer, row["prompt"], options,
                                    prompt_seed(options.seed, str(row["id"])))
            scores = reference_scores(model, tokenizer, prompt_text(tokenizer, row["prompt"]),
                                      [reasoning_of(t) for t in sampled], y, r3)
            signals.append(signal(str(row["id"]), scores.logprobs, scores.ranks, options.rho))
    every = sorted((s for part in gather(signals) for s in part), key=lambda s: s.id)
    return decide(every, options)


class FilteredReward:
    """Wraps any reward: prompts the filter dropped get 0.0 (zero advantage) and no judge call.
    Prompts it never judged (the held-out ones) are scored as usual."""

    def __init__(self, inner: Callable[..., list[float | None]], dropped: frozenset[str]) -> None:
        self.inner = inner
        self.dropped = dropped
        self.__name__ = getattr(inner, "__name__", "reward")
        self.config_overrides = dict(getattr(inner, "config_overrides", {}) or {})
        self.callbacks = list(getattr(inner, "callbacks", []) or [])
        self.masked = 0
        self.history: list[dict[str, int]] = []      # one entry per filter pass

    def stats(self) -> dict[str, Any]:
        inner = self.inner.stats() if hasattr(self.inner, "stats") else {}
        return {**inner, "r3_filter": {"passes": self.history, "masked": self.masked}}

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 completion_ids: Any = None, **columns: Any) -> list[float | None]:
        ids = [str(i) for i in columns.get("id") or ()]
        active = [i for i, key in enumerate(ids) if key not in self.dropped] if ids \
            else list(range(len(prompts)))
        rewards: list[float | None] = [0.0] * len(prompts)
        self.masked += len(prompts) - len(active)
        # In a training step the inner reward is called even when every prompt here is
        # masked: it may gather across processes, and every process must take part.
        if active or "trainer_state" in columns:
            picked = {k: [v[i] for i in active] if isinstance(v, list) and len(v) == len(prompts)
                      else v for k, v in columns.items()}
            ids_of = [completion_ids[i] for i in active] if completion_ids is not None else None
            values = self.inner([prompts[i] for i in active], [completions[i] for i in active],
                                ids_of, **picked)
            for i, value in zip(active, values, strict=True):
                rewards[i] = value
        return rewards


class FilterCallback(TrainerCallback):
    """Re-runs the filter with the current policy every `every` steps over the training rows."""

    def __init__(self, reward: FilteredReward, tokenizer: PreTrainedTokenizerBase,
                 rows: Sequence[Mapping[str, Any]], every: int, options: FilterOptions,
                 r3: R3Options = R3Options()) -> None:
        self.reward, self.tokenizer, self.rows = reward, tokenizer, list(rows)
        self.every, self.options, self.r3 = every, options, r3

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        model = kwargs.get("model")
        if model is None or self.every <= 0 or state.global_step % self.every:
            return
        result = run_filter(model, self.tokenizer, self.rows, self.options, self.r3,
                            progress=False)
        self.reward.dropped = result.judged - result.kept
        self.reward.history.append({"step": state.global_step, **result.counts()})



def prepare(config: Any, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
            rows: list[dict[str, Any]], reward: Any) -> tuple[list[dict[str, Any]], Any]:
    """`gspo --r3-filter`: the pre-pass over the training prompts with the initial policy, and
    the reward wrapped so that later passes (`--filter-every`) can mask prompts. Without the
    option: the rows and the reward unchanged."""
    if not getattr(config, "r3_filter", False):
        return rows, reward
    from training.errors import UsageError

    options = FilterOptions(rho=config.filter_rho, top_k=config.filter_top_k,
                            drop_fraction=config.filter_drop_fraction, carry=config.filter_carry,
                            traces=config.filter_traces,
                            max_new_tokens=config.max_completion_length, seed=config.seed)
    r3 = R3Options(max_reference_tokens=getattr(config, "r3_max_reference_tokens", 512))
    result = run_filter(model, tokenizer, rows, options, r3)
    kept_rows = [r for r in rows if str(r["id"]) in result.kept]
    if not kept_rows:
        raise UsageError(f"--r3-filter dropped every training prompt ({result.counts()}): "
                         "raise --filter-top-k or lower --filter-drop-fraction")
    wrapped = FilteredReward(reward, result.judged - result.kept)
    wrapped.history.append({"step": 0, **result.counts()})
    if config.filter_every > 0:
        wrapped.callbacks.append(FilterCallback(wrapped, tokenizer, kept_rows,
                                                config.filter_every, options, r3))
    return kept_rows, wrapped

"""The Reasoning Reflection Reward (DRO, Xu et al., "Direct Reasoning Optimization"):
`gspo --reward r3`.

For each sampled reasoning c_i of a group (the `<think>` part of a completion, or the whole
completion when it has none) the policy scores the prompt's reference outcome y (the loop's
y*) token by token:

    R3_i = sum_j w_j * [log pi(y_j | q, c_i, y_<j) - log pi(y_j | q, c_masked, y_<j)]

The masked-reasoning term (an empty think block) removes the certainty a reference token gets
from the reference itself (the paper's efficient form). sigma_j is the standard deviation of
token j's log-probability across the group's traces: the tokens whose certainty depends on
the reasoning. The paper leaves w(sigma) open; redraft uses w_j = sigma_j / sum_k sigma_k by
default (`weighting="sigma"`), uniform 1/|y| as the option (`"uniform"`). The length penalty
on the final outcome, P_i = 1 - beta * | |y| - |y_i| | / |y| (token counts), enters additively
as R3_i + (P_i - 1): R3 is a log-probability difference and may be negative, so scaling it by
P would reward a longer miss.

TRL's reward functions do not receive the model, so this reward holds its own reference: a
frozen copy loaded from the model path (`policy="ref"`), or the model being trained, captured
by a callback when training begins (`policy="current"`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase, TrainerCallback

from training.data.think import THINK_CLOSE, THINK_OPEN, split_think
from training.parallel import gather
from training.rewards.judging import completion_text

Weighting = Literal["sigma", "uniform"]
Policy = Literal["ref", "current"]

# DRO's loss settings, handed to the GSPO stage's GRPOConfig (contract: config_overrides).
DRO_CONFIG = {"loss_type": "dr_grpo", "mask_truncated_completions": True,
              "epsilon_high": 0.2, "beta": 0.001}


@dataclass(frozen=True, slots=True)
class R3Options:
    weighting: Weighting = "sigma"
    length_beta: float = 0.5            # beta of the length penalty on the final outcome
    max_reference_tokens: int = 512     # y is truncated to this many tokens for scoring
    max_context_tokens: int = 2048      # q + c_i keeps its last tokens beyond this
    batch_size: int = 4                 # sequences per forward pass


@dataclass(frozen=True, slots=True)
class ReferenceScores:
    """Per-trace token log-probabilities and ranks of the reference. Shapes: (G, T), (T,)."""

    logprobs: torch.Tensor
    masked: torch.Tensor
    ranks: torch.Tensor                 # (G, T): 0 = the most likely token


def prompt_text(tokenizer: PreTrainedTokenizerBase, prompt: Any) -> str:
    """The prompt rendered as the policy sees it before its answer."""
    if isinstance(prompt, str):
        return prompt
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    return "\n".join(str(m.get("content") or "") for m in prompt) + "\n"


def reasoning_of(completion: str) -> str:
    think, _ = split_think(completion)
    return completion.strip() if think is None else think


def _prefix(prompt: str, reasoning: str) -> str:
    return f"{prompt}{THINK_OPEN}\n{reasoning}\n{THINK_CLOSE}\n\n"


@torch.no_grad()
def reference_scores(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, prompt: str,
                     reasonings: Sequence[str], reference_ids: Sequence[int],
                     options: R3Options = R3Options()) -> ReferenceScores:
    """log pi(y_j | q, c_i, y_<j) for every trace, the masked-reasoning row, and y_j's ranks."""
    device = next(model.parameters()).device
    y = list(reference_ids)[:options.max_reference_tokens]
    prefixes = [_prefix(prompt, r) for r in [*reasonings, ""]]
    rows = [tokenizer(p, add_special_tokens=False)["input_ids"][-options.max_context_tokens:]
            for p in prefixes]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    logprobs, ranks = [], []
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(rows), options.batch_size):
            chunk = rows[start:start + options.batch_size]
            width = max(len(r) for r in chunk) + len(y)
            # Left padding puts every y at the same columns: the last len(y) positions.
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for i, row in enumerate(chunk):
                seq = row + y
                ids[i, width - len(seq):] = torch.tensor(seq)
                mask[i, width - len(seq):] = 1
            position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
            # Only the logits that predict y are computed: a large vocabulary times the whole
            # context would not fit. Position t predicts token t+1, so the last T+1 columns
            # hold y's predictions in their first T.
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                           position_ids=position_ids.to(device),
                           logits_to_keep=len(y) + 1).logits
            pred = logits[:, :len(y), :]                                # (B, T, V)
            target = torch.tensor(y, device=device).expand(len(chunk), -1)
            picked = pred.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
            # log-softmax at y_j only: no second (B, T, V) tensor of log-probabilities.
            chosen = picked.float() - torch.logsumexp(pred.float(), dim=-1)
            logprobs.append(chosen.cpu())
            ranks.append((pred > picked.unsqueeze(-1)).sum(-1).cpu())
    finally:
        model.train(was_training)
    all_lp, all_ranks = torch.cat(logprobs), torch.cat(ranks)
    return ReferenceScores(all_lp[:-1], all_lp[-1], all_ranks[:-1])


def token_weights(logprobs: torch.Tensor, weighting: Weighting) -> torch.Tensor:
    """w_j over the reference tokens from the group's (G, T) log-probabilities."""
    n = logprobs.shape[-1]
    if weighting == "uniform" or logprobs.shape[0] < 2:
        return torch.full((n,), 1.0 / n)
    sigma = logprobs.std(dim=0, unbiased=False)
    total = sigma.sum()
    return sigma / total if total > 0 else torch.full((n,), 1.0 / n)


def r3_values(scores: ReferenceScores, weighting: Weighting) -> torch.Tensor:
    """R3_i = sum_j w_j (lp_ij - lp_masked_j). Shape (G,)."""
    w = token_weights(scores.logprobs, weighting)
    return ((scores.logprobs - scores.masked.unsqueeze(0)) * w.unsqueeze(0)).sum(-1)


def length_penalty(reference_tokens: int, answer_tokens: int, beta: float) -> float:
    """P - 1 = -beta * | |y| - |y_hat| | / |y|."""
    return -beta * abs(reference_tokens - answer_tokens) / max(1, reference_tokens)


class R3Reward:
    """TRL reward function computed in-process with the policy's own log-probabilities."""

    __name__ = "r3"

    def __init__(self, tokenizer: PreTrainedTokenizerBase, *, model: PreTrainedModel | None = None,
                 policy: Policy = "current", options: R3Options = R3Options()) -> None:
        if policy == "ref" and model is None:
            raise ValueError("r3 with policy 'ref' needs the frozen reference model")
        self.tokenizer = tokenizer
        self.model = model
        self.policy = policy
        self.options = options
        self.config_overrides = dict(DRO_CONFIG)
        self.callbacks: list[TrainerCallback] = [_CaptureModel(self)] if policy == "current" else []
        self.scored = 0
        self.unavailable = 0
        self.sigma_groups = 0           # training groups seen whole (see whole_groups)
        self.sigma_total = 0.0          # their mean token sigma, summed

    def group_scores(self, prompt: Any, completions: Sequence[str],
                     reference: str) -> tuple[ReferenceScores, list[int], int]:
        """(the reference's scores under each completion's reasoning, each answer's length,
        the reference's length) for one prompt's completions (a group, or this process's
        share of it)."""
        if self.model is None:
            raise RuntimeError("r3 has no model yet: policy 'current' gets it when training begins")
        y = self.tokenizer(reference, add_special_tokens=False)["input_ids"]
        if not y:
            raise ValueError("r3 needs a non-empty reference")
        scores = reference_scores(self.model, self.tokenizer, prompt_text(self.tokenizer, prompt),
                                  [reasoning_of(c) for c in completions], y, self.options)
        answers = [len(self.tokenizer(split_think(c)[1], add_special_tokens=False)["input_ids"])
                   for c in completions]
        return scores, answers, len(y)

    def rewards_of(self, scores: ReferenceScores, answers: Sequence[int], reference_tokens: int,
                   group: torch.Tensor) -> list[float]:
        """R3 plus the length penalty for these completions, sigma taken over `group`: the
        (G, T) log-probabilities of the whole group."""
        w = token_weights(group, self.options.weighting)
        r3 = ((scores.logprobs - scores.masked.unsqueeze(0)) * w.unsqueeze(0)).sum(-1)
        return [float(r) + length_penalty(reference_tokens, n, self.options.length_beta)
                for r, n in zip(r3.tolist(), answers, strict=True)]

    def group_rewards(self, prompt: Any, completions: Sequence[str], reference: str) -> list[float]:
        """The rewards of one prompt's whole group of completions."""
        scores, answers, n = self.group_scores(prompt, completions, reference)
        return self.rewards_of(scores, answers, n, scores.logprobs)

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 completion_ids: Any = None, **columns: Any) -> list[float | None]:
        ids = [str(i) for i in columns.get("id") or [repr(p) for p in prompts]]
        references = columns.get("reference") or [None] * len(prompts)
        texts = [completion_text(c) for c in completions]
        groups: dict[str, list[int]] = {}
        for index, key in enumerate(ids):
            groups.setdefault(key, []).append(index)
        scored: dict[str, tuple[ReferenceScores, list[int], int]] = {}
        for key, indices in groups.items():
            reference = references[indices[0]]
            if isinstance(reference, str) and reference.strip():
                scored[key] = self.group_scores(prompts[indices[0]], [texts[i] for i in indices],
                                                reference)
        whole = self.whole_groups({k: v[0].logprobs for k, v in scored.items()},
                                  training="trainer_state" in columns)
        rewards: list[float | None] = [None] * len(prompts)
        for key, (scores, answers, n) in scored.items():
            for i, value in zip(groups[key], self.rewards_of(scores, answers, n, whole[key]),
                                strict=True):
                rewards[i] = value
        missing = sum(r is None for r in rewards)
        self.scored += len(rewards) - missing
        self.unavailable += missing
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            log_metric("r3/unavailable", float(missing))
        return rewards

    def whole_groups(self, mine: dict[str, torch.Tensor], *, training: bool
                     ) -> dict[str, torch.Tensor]:
        """Each group's (G, T) log-probabilities over every process. In a training step the
        processes each hold a share of a group (TRL splits the generation batch by rows):
        their shares are gathered, so sigma is the whole group's, as on one process. Outside
        training (held-out scoring) every process scores whole groups itself."""
        if not training:
            return mine
        shares: dict[str, list[torch.Tensor]] = {}
        for part in gather(mine):
            for key, logprobs in part.items():
                shares.setdefault(key, []).append(logprobs)
        whole = {key: torch.cat(parts) for key, parts in shares.items()}
        for logprobs in whole.values():   # the same groups, in the same order, on every rank
            sigma = logprobs.std(dim=0, unbiased=False) if logprobs.shape[0] > 1 \
                else torch.zeros(logprobs.shape[-1])
            self.sigma_groups += 1
            self.sigma_total += float(sigma.mean())
        return whole

    def stats(self) -> dict[str, Any]:
        """Counts of this process (`scored`, `unscorable`), and the mean token sigma over the
        training groups (every process sees every group)."""
        mean = self.sigma_total / self.sigma_groups if self.sigma_groups else None
        return {"scored": self.scored, "unscorable": self.unavailable, "policy": self.policy,
                "weighting": self.options.weighting,
                "sigma": {"groups": self.sigma_groups, "mean": mean}}


class _CaptureModel(TrainerCallback):
    """Hands the model being trained to the reward: when the trainer is built (so held-out
    prompts can be scored before training) and again when training begins."""

    def __init__(self, reward: R3Reward) -> None:
        self.reward = reward

    def _capture(self, kwargs: dict[str, Any]) -> None:
        model = kwargs.get("model")
        if model is not None:
            self.reward.model = model

    def on_init_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._capture(kwargs)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._capture(kwargs)


def r3_reward(config: Any, **_: Any) -> R3Reward:
    """`--reward r3`: the tokenizer of --model; with `--r3-policy ref`, a frozen copy of it on
    this process's device (each data-parallel process holds its own)."""
    from accelerate import PartialState

    from training.models import dtype_for, load_model, load_tokenizer

    policy = getattr(config, "r3_policy", "current")
    model = None
    if policy == "ref":
        model = load_model(config.model, dtype_for(getattr(config, "precision", "auto")))
        model.to(PartialState().device)
        model.requires_grad_(False)
        model.eval()
    options = R3Options(weighting=getattr(config, "r3_weighting", "sigma"),
                        length_beta=getattr(config, "r3_length_beta", 0.5),
                        max_reference_tokens=getattr(config, "r3_max_reference_tokens", 512))
    return R3Reward(load_tokenizer(config.model), model=model, policy=policy, options=options)

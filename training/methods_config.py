"""The `dpo` and `processbench` stages' configs (issue 8), in the trainer's style."""

from __future__ import annotations

from dataclasses import dataclass

from training.config import TrainConfig
from training.method_options import check_url
from training.options import option


@dataclass(frozen=True, kw_only=True)
class DpoConfig(TrainConfig):
    epochs: float = option(1.0, "passes over the pairs (when --max-steps is -1)", low=0.0)
    learning_rate: float = option(1e-6, "peak learning rate", low=0.0)
    beta: float = option(0.1, "DPO beta: how far the policy may move from the reference",
                         low=0.0)
    loss: str = option("sigmoid", "DPO loss (TRL loss_type)",
                       choices=("sigmoid", "ipo", "hinge", "robust"))
    max_length: int = option(2048, "prompt + answer tokens kept per side", low=8)


@dataclass(frozen=True, kw_only=True)
class ProcessbenchConfig:
    data: str = option(help="dataset directory written by `export`")
    url: str = option(help="OpenAI-compatible base URL of the model whose trajectories are "
                      "scored")
    model: str = option(help="model name it serves")
    api_key: str | None = option(None, "API key for --url")
    judge_url: str | None = option(None, "judge base URL (default: --url)")
    judge_model: str | None = option(None, "judge model name (default: --model)")
    judge_api_key: str | None = option(None, "API key for the judge")
    split: str = option("holdout", "which prompts: holdout or train",
                        choices=("holdout", "train"))
    limit: int = option(100, "score at most this many prompts", low=1)
    max_tokens: int = option(2048, "tokens per trajectory", low=16)
    concurrency: int = option(8, "trajectories in flight at once", low=1)
    out: str | None = option(None, "write the per-prompt scores and summary to this JSON file")

    def check(self) -> None:
        check_url("--url", self.url)
        check_url("--judge-url", self.judge_url)

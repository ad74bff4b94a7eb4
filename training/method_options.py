"""Options of the writing-RL methods (issue 8) that extend the trainer's `export` and `gspo`
stages, in its config style: each field's help, bounds and choices once.

`ExportMethods` and `GspoMethods` are bases of `training.config.ExportConfig` and
`GspoConfig`; this module imports nothing of the config so that it can be one.
"""

from __future__ import annotations

from dataclasses import dataclass

from training.errors import UsageError
from training.options import option

SELECTIONS = ("none", "margin")
REFERENCE_SCHEDULES = ("dynamic", "best")
R3_POLICIES = ("current", "ref")
R3_WEIGHTINGS = ("sigma", "uniform")


def check_url(flag: str, url: str | None) -> None:
    if url is not None and not url.startswith(("http://", "https://")):
        raise UsageError(f"{flag} {url!r} must start with http:// or https://")


@dataclass(frozen=True, kw_only=True)
class ExportMethods:
    select: str = option("none", "prompt selection: margin keeps the top prompts by learning "
                         "potential p = best competitor score - draft score (Writing-RL)",
                         choices=SELECTIONS)
    select_top_k: int = option(1000, "--select margin: prompts kept (top-k by p)", low=1)
    min_competitor_score: float = option(0.0, "--select margin: drop prompts whose best "
                                         "competitor scores below this", low=0.0, high=1.0)
    competitor_url: str | None = option(None, "--select margin: OpenAI-compatible base URL of "
                                        "another model whose answers compete with the draft")
    competitor_model: str | None = option(None, "model name the competitor serves")
    competitor_api_key: str | None = option(None, "API key for the competitor")
    competitor_judge_url: str | None = option(None, "judge that scores the competitor's "
                                              "answers on the stored checklists (default: "
                                              "--competitor-url)")
    competitor_judge_model: str | None = option(None, "model name of that judge (default: "
                                                "--competitor-model)")
    voice_url: str | None = option(None, "--format think: OpenAI-compatible base URL of the "
                                   "model that rewrites reflections in the writer's voice "
                                   "(default: a plain template)")
    voice_model: str | None = option(None, "model name the voice model serves")
    voice_api_key: str | None = option(None, "API key for the voice model")

    def check(self) -> None:
        for flag, url in (("--competitor-url", self.competitor_url),
                          ("--competitor-judge-url", self.competitor_judge_url),
                          ("--voice-url", self.voice_url)):
            check_url(flag, url)
        if self.competitor_url and self.select != "margin":
            raise UsageError("--competitor-url only applies with --select margin")
        if self.competitor_url and not self.competitor_model:
            raise UsageError("--competitor-url needs --competitor-model")
        if self.voice_url and not self.voice_model:
            raise UsageError("--voice-url needs --voice-model")


@dataclass(frozen=True, kw_only=True)
class GspoMethods:
    alpha: float = option(0.25, "R2-Write process reward: R_all = alpha R_a + (1 - alpha) R_p "
                          "when R_a > 0 (rewards checklist+process, pairwise+process)",
                          low=0.0, high=1.0)
    references: str = option("dynamic", "pairwise reward's reference: dynamic (Writing-RL's "
                             "scheduler: weakest loop candidate first, promoted on a win) or "
                             "best (always y*)", choices=REFERENCE_SCHEDULES)
    r3_policy: str = option("current", "r3: score the reference with the model being trained "
                            "(current) or a frozen copy of --model (ref)", choices=R3_POLICIES)
    r3_weighting: str = option("sigma", "r3 token weights: sigma (w = sigma_j / sum sigma) or "
                               "uniform (1/|y|)", choices=R3_WEIGHTINGS)
    r3_length_beta: float = option(0.5, "r3 length penalty: - beta | |y| - |y_hat| | / |y|",
                                   low=0.0)
    r3_max_reference_tokens: int = option(512, "r3 scores at most this many reference tokens",
                                          low=1)
    r3_filter: bool = option(False, "DRO's R3 data filter before training (and every "
                             "--filter-every steps)")
    filter_every: int = option(0, "re-run the R3 filter every N steps (0: only before training)",
                               low=0)
    filter_rho: float = option(0.1, "R3 filter: share of y's worst-ranked tokens averaged",
                               low=0.0, high=1.0)
    filter_top_k: int = option(100, "R3 filter: a trace passes when that mean rank is below k",
                               low=1)
    filter_drop_fraction: float = option(0.2, "R3 filter: share of the remaining prompts with "
                                         "the lowest max sigma dropped", low=0.0, high=1.0)
    filter_carry: float = option(0.1, "R3 filter: share of the dropped prompts kept anyway",
                                 low=0.0, high=1.0)
    filter_traces: int = option(4, "R3 filter: reasoning traces sampled per prompt", low=2)

    def check(self) -> None:
        if self.filter_every and not self.r3_filter:
            raise UsageError("--filter-every only applies with --r3-filter")
        parent = getattr(super(), "check", None)
        if parent is not None:
            parent()

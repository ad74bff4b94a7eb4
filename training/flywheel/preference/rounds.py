"""Stage `dpo`: rounds of preference training on the policy's own samples, rewarded by the
prompts' checks in code.

Each round serves the current policy (on llama-server when the run has one), answers a fixed
dev split of training prompts greedily (the last `--dev-prompts`, which no stage trains on)
and prints the pass rate per check kind, then samples `--dpo-samples` answers to each of
`--dpo-prompts` training prompts at `--dpo-temperature`. The prompts are drawn with a weight
per prompt of its weakest kind's dev miss rate (plus a floor, so the kinds already learnt
keep a share). The samples become preference pairs (`contrast`: minimal pairs made in code,
and a sample passing every check against the worst one that holds the task), and DPO
(TRL's DPOTrainer, the policy at the round's start as its reference) trains the next policy
for `--dpo-steps` steps. After the last round the final policy is answered on the dev split
once more. So the first figures of the method come after one round (minutes, not hours), and
a round that moved nothing shows.

Layout: `round-R/dev.jsonl` (the dev answers of the policy at round R's start),
`round-R/samples.jsonl`, `round-R/data/` (the pairs as a dataset directory), `round-R/dpo/`
(the trainer's stage), `final` (the last policy), `report.json`. `--resume` keeps every round
whose DPO finished and every answer already written.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from training.data.dataset import KINDS, SPLITS, VERSION, content_hash, write_jsonl
from training.data.prompts import Prompt, load
from training.flywheel.asking import Ask, ask_all, read_rows
from training.flywheel.figures import summarise
from training.flywheel.llamacpp import served
from training.flywheel.preference.contrast import Pair, pairs_for, score
from training.stages.checkpoints import FINAL, write_json

FLOOR = 0.1   # a prompt's least weight in the draw, whatever its kinds' dev pass rates
# requests decoded in one batch while sampling and answering the dev split: on 2 cores a
# llama-server of 8 slots gives about twice the tokens per second of single slots
SAMPLING_BATCH = 8


def dev_split(prompts: Sequence[Prompt], dev: int) -> tuple[list[Prompt], list[Prompt]]:
    """(the prompts rounds may draw from, the dev split): the last `dev` training prompts are
    the dev split."""
    cut = len(prompts) - dev
    return list(prompts[:cut]), list(prompts[cut:])


def weights(prompts: Sequence[Prompt], per_kind: dict[str, float]) -> list[float]:
    """Each prompt's draw weight: its weakest kind's miss rate on the dev split (`per_kind`:
    kind → pass rate; a kind the dev split does not hold counts as missed), never below
    FLOOR."""
    return [max(FLOOR, max((1.0 - per_kind.get(k, 0.0) for k in p.kinds), default=0.0))
            for p in prompts]


def draw(prompts: Sequence[Prompt], weight: Sequence[float], n: int,
         rng: random.Random) -> list[Prompt]:
    """`n` prompts drawn without replacement in proportion to `weight` (each prompt's key is
    u^(1/w); the n largest win), in the order of `prompts`."""
    keys = [(rng.random() ** (1.0 / w), i) for i, w in enumerate(weight)]
    chosen = sorted(i for _, i in sorted(keys, reverse=True)[:n])
    return [prompts[i] for i in chosen]


def sample_asks(prompts: Sequence[Prompt], samples: int, seed: int, round_: int) -> list[Ask]:
    """`samples` asks per prompt, each with its own seed."""
    return [Ask(f"{p.id}/{k}", p.query, extra={"seed": seed * 1_000_003 + round_ * 7919
                                                + i * samples + k})
            for i, p in enumerate(prompts) for k in range(samples)]


def build_pairs(prompts: Sequence[Prompt], rows: dict[str, dict[str, Any]], samples: int,
                seed: int, *, guard: bool = True) -> list[Pair]:
    """The pairs of every prompt's group of samples (answers that failed are left out);
    `guard=False` lets texts that drop the task or were cut be chosen."""
    rng = random.Random(f"flywheel-dpo-pairs/{seed}")
    out: list[Pair] = []
    for prompt in prompts:
        group = [rows.get(f"{prompt.id}/{k}") for k in range(samples)]
        scored = [score(prompt, r["text"], r.get("finish_reason"), guard=guard) for r in group
                  if r is not None and r.get("error") is None]
        out.extend(pairs_for(prompt, scored, rng, guard=guard))
    return out


def pair_counts(pairs: Sequence[Pair]) -> dict[str, Any]:
    return {"pairs": len(pairs),
            "by_source": dict(sorted(Counter(p.source for p in pairs).items())),
            "by_kind": dict(sorted(Counter(k for p in pairs for k in p.kinds).items()))}


def write_pairs(out: Path, pairs: Sequence[Pair], seed: int) -> None:
    """A dataset directory whose pairs/train.jsonl holds the pairs, in a seeded order."""
    rows = [p.row() for p in pairs]
    random.Random(f"flywheel-dpo-order/{seed}").shuffle(rows)
    for kind in KINDS:
        for split in SPLITS:
            write_jsonl(out / kind / f"{split}.jsonl",
                        rows if (kind, split) == ("pairs", "train") else [])
    write_json(out / "manifest.json", {
        "version": VERSION, "source": "training.flywheel.preference.rounds", "seed": seed,
        "counts": {"pairs": {"train": len(rows), "holdout": 0}},
        "content_hash": content_hash(out)})


def dev_figures(prompts: Sequence[Prompt], rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    figures = summarise(prompts, [rows[p.id] for p in prompts])
    keep = ("prompt_pass_rate", "check_pass_rate", "looping_share", "words",
            "completion_tokens")
    return {**{k: figures[k] for k in keep},
            "per_kind": {k: v["pass_rate"] for k, v in figures["per_kind"].items()}}


def _say(round_: int, dev: dict[str, Any], first: dict[str, Any] | None) -> None:
    kinds = dev["per_kind"]
    moved = "" if first is None else "  (from round 0: " + ", ".join(
        f"{k} {kinds[k] - first['per_kind'].get(k, 0.0):+.2f}" for k in sorted(kinds)) + ")"
    print(f"dpo: round {round_} dev prompt pass {dev['prompt_pass_rate']:.3f}, per kind "
          + ", ".join(f"{k} {v:.2f}" for k, v in sorted(kinds.items())) + moved,
          file=sys.stderr, flush=True)


def _answers(config: Any, policy: Path, where: Path, dev: Sequence[Prompt],
             plan: Callable[[dict[str, dict[str, Any]]], list[Ask]]
             ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The policy's greedy dev answers, and its samples for the asks `plan` makes of them;
    one server for both, started only for what is not written yet."""
    dev_file, sample_file = where / "dev.jsonl", where / "samples.jsonl"
    where.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        servers: list[Any] = []

        def server() -> Any:
            if not servers:
                servers.append(stack.enter_context(
                    served(config, policy, where / "server", where / "policy.gguf",
                           batched=SAMPLING_BATCH)))
            return servers[0]

        dev_rows = read_rows(dev_file)
        if len(dev_rows) < len(dev):
            dev_rows = ask_all(server().base_url, server().model,
                               [Ask(p.id, p.query) for p in dev], dev_file, temperature=0.0,
                               max_tokens=config.max_tokens, concurrency=SAMPLING_BATCH,
                               desc=f"dpo dev {where.name}")
        asks = plan(dev_rows)
        sample_rows = read_rows(sample_file)
        if any(a.key not in sample_rows for a in asks):
            sample_rows = ask_all(server().base_url, server().model, asks, sample_file,
                                  temperature=config.dpo_temperature,
                                  max_tokens=config.max_tokens,
                                  concurrency=SAMPLING_BATCH,
                                  desc=f"dpo samples {where.name}")
    shutil.rmtree(where / "server", ignore_errors=True)   # its store of passthrough requests
    return dev_rows, sample_rows


def _train(config: Any, policy: Path, data: Path, out: Path, round_: int) -> Path:
    from training.config import DpoConfig
    from training.stages.dpo import run_dpo

    final = out / FINAL
    if final.is_dir():
        return final
    extra = {"batch_size": config.dpo_batch_size} if config.dpo_batch_size else {}
    run_dpo(DpoConfig(data=str(data), model=str(policy), out=str(out),
                      max_steps=config.dpo_steps, learning_rate=config.dpo_learning_rate,
                      beta=config.dpo_beta, sft_weight=config.dpo_sft_weight,
                      max_length=1024, seed=config.seed + round_,
                      resume=config.resume and (out.with_name(out.name + ".partial")
                                                / "checkpoints").is_dir(), **extra))
    return final


def prefer(config: Any, run: Path, start: Path, work: Path) -> dict[str, Any]:
    """Every round into `work` (the stage's partial folder); returns the stage's figures."""
    pool, dev = dev_split(load(run / "prompts" / "train.jsonl"), config.dev_prompts)
    policy = start
    rounds: list[dict[str, Any]] = []
    for round_ in range(config.dpo_rounds + 1):
        where = work / f"round-{round_}"
        last = round_ == config.dpo_rounds
        first = rounds[0]["dev"] if rounds else None
        drawn: list[Prompt] = []
        dev_rows, sample_rows = _answers(config, policy, where, dev, partial(
            _after_dev, config, pool, dev, round_, first, drawn, last))
        entry: dict[str, Any] = {"round": round_, "policy": _named(policy, work),
                                 "dev": dev_figures(dev, dev_rows)}
        if not last:
            pairs = build_pairs(drawn, sample_rows, config.dpo_samples, config.seed + round_,
                                guard=not config.keep_dropped_task)
            entry["prompts"] = len(drawn)
            entry["samples"] = _sample_figures(drawn, sample_rows)
            entry.update(pair_counts(pairs))
            if pairs:
                write_pairs(where / "data", pairs, config.seed + round_)
                policy = _train(config, policy, where / "data", where / "dpo", round_)
                entry["dpo"] = json.loads((where / "dpo" / "report.json").read_text("utf-8")
                                          ).get("summary")
            else:
                print(f"dpo: round {round_} made no pair; the policy is kept",
                      file=sys.stderr)
        rounds.append(entry)
    shutil.copytree(policy, work / FINAL)
    figures = {"start": str(start), "rounds": rounds, "dev_prompts": len(dev)}
    write_json(work / "report.json", {"stage": "dpo", "summary": figures})
    return figures


def _after_dev(config: Any, pool: Sequence[Prompt], dev: Sequence[Prompt], round_: int,
               first: dict[str, Any] | None, drawn: list[Prompt], last: bool,
               dev_rows: dict[str, dict[str, Any]]) -> list[Ask]:
    """Once the dev split is answered: its figures on stderr, then (but after the last round)
    the round's draw from `pool`, weighted by the dev pass rates per kind (into `drawn`), and
    its sample asks."""
    figures = dev_figures(dev, dev_rows)
    _say(round_, figures, first)
    if last:
        return []
    drawn[:] = draw(pool, weights(pool, figures["per_kind"]), config.dpo_prompts,
                    random.Random(f"flywheel-dpo-draw/{config.seed}/{round_}"))
    return sample_asks(drawn, config.dpo_samples, config.seed, round_)


def _named(policy: Path, work: Path) -> str:
    """A round's policy as the report names it: `start`, or its folder inside the stage."""
    return str(policy.relative_to(work)) if policy.is_relative_to(work) else "start"


def _sample_figures(prompts: Sequence[Prompt], rows: dict[str, dict[str, Any]]
                    ) -> dict[str, Any]:
    texts = [r for r in rows.values() if r.get("error") is None]
    return {"answers": len(rows), "errors": len(rows) - len(texts),
            "cut": sum(r.get("finish_reason") == "length" for r in texts),
            "completion_tokens": round(sum(r["completion_tokens"] for r in texts)
                                       / max(1, len(texts)), 1)}

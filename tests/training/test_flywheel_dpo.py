"""The flywheel's DPO stage without a model: pairs from a prompt's samples (made in code, and
best against worst), the guard that keeps texts which drop the task from being chosen, and the
weighted draw of prompts toward the kinds the dev split misses."""

from __future__ import annotations

import json
import random
from pathlib import Path

from training.data.dataset import read_manifest, read_rows
from training.data.prompts import Prompt, PromptCheck
from training.flywheel.preference.contrast import MADE, SAMPLED, pairs_for, score
from training.flywheel.preference.rounds import (
    FLOOR,
    build_pairs,
    dev_split,
    draw,
    sample_asks,
    weights,
    write_pairs,
)

QUERY = "Write a short note inviting the team to a picnic in the park. Do not use any commas."


def prompt(*checks: tuple[str, dict], query: str = QUERY, pid: str = "train-00001") -> Prompt:
    return Prompt(id=pid, split="train", task_id="t", query=query,
                  checks=tuple(PromptCheck(kind, params, "tpl", "quote")
                               for kind, params in checks))


NO_COMMAS = prompt(("no_commas", {}))
WITH_COMMAS = "Hi team, join us for a picnic in the park on Friday, with food and games."
CLEAN = "Hi team join us for a picnic in the park on Friday with food and games."
LOOPING = "Picnic in the park. " * 40


def test_a_sample_failing_a_check_made_in_code_gives_a_minimal_pair():
    pairs = pairs_for(NO_COMMAS, [score(NO_COMMAS, WITH_COMMAS)], random.Random(0))
    assert [(p.source, p.kinds) for p in pairs] == [(MADE, ("no_commas",))]
    assert pairs[0].rejected == WITH_COMMAS and "," not in pairs[0].chosen
    # the words stay the model's own: only the commas differ
    assert pairs[0].chosen.split() == WITH_COMMAS.replace(",", "").split()


def test_a_passing_sample_is_chosen_against_the_worst_that_holds_the_task():
    other = "Dear team please come to our picnic in the park on Friday for food and games."
    group = [score(NO_COMMAS, WITH_COMMAS), score(NO_COMMAS, other),
             score(NO_COMMAS, LOOPING, "length")]
    assert group[2].dropped == "looping" and group[2].score == -1.0
    sampled = [p for p in pairs_for(NO_COMMAS, group, random.Random(0)) if p.source == SAMPLED]
    assert len(sampled) == 1
    # the looping text ranks last but is no side of a sampled pair: any text beats it
    assert sampled[0].chosen == other and sampled[0].rejected == WITH_COMMAS


def test_a_text_that_drops_the_task_or_was_cut_is_never_chosen():
    # the looping text passes no_commas, the cut one too: neither may be chosen
    cut = "Hi team come along to our picnic in the park this Friday and bring"
    group = [score(NO_COMMAS, LOOPING), score(NO_COMMAS, cut, "length"),
             score(NO_COMMAS, WITH_COMMAS)]
    pairs = pairs_for(NO_COMMAS, group, random.Random(0))
    assert pairs and all(p.chosen not in (LOOPING, cut) for p in pairs)
    # without the guard (a random model's mechanics run) the cut text may be chosen
    unguarded = [score(NO_COMMAS, t, f, guard=False)
                 for t, f in ((cut, "length"), (WITH_COMMAS, "stop"))]
    assert any(p.chosen == cut for p in pairs_for(NO_COMMAS, unguarded, random.Random(0),
                                                   guard=False))


def test_samples_that_all_score_alike_give_no_sampled_pair():
    group = [score(NO_COMMAS, CLEAN), score(NO_COMMAS, CLEAN.replace("games", "music"))]
    assert pairs_for(NO_COMMAS, group, random.Random(0)) == []


def test_a_keyword_count_no_code_meets_is_learnt_from_samples_alone():
    keyword = prompt(("keyword", {"word": "picnic", "relation": "at least", "n": 3}),
                     query="Write a short note inviting the team to a picnic. Use the word "
                           "picnic at least three times.")
    once = "Join us for a picnic in the park on Friday."
    thrice = "Join our picnic! The picnic is on Friday and the picnic has games for the team."
    pairs = pairs_for(keyword, [score(keyword, once), score(keyword, thrice)],
                      random.Random(0))
    assert [(p.source, p.chosen, p.rejected, p.kinds) for p in pairs] == [
        (SAMPLED, thrice, once, ("keyword",))]


def test_pairs_of_a_round_are_written_as_a_dataset_trl_reads(tmp_path: Path):
    rows = {f"{NO_COMMAS.id}/0": {"text": WITH_COMMAS, "finish_reason": "stop", "error": None},
            f"{NO_COMMAS.id}/1": {"text": "", "finish_reason": None, "error": "timeout"}}
    pairs = build_pairs([NO_COMMAS], rows, samples=2, seed=0)
    write_pairs(tmp_path, pairs, seed=0)
    assert read_manifest(str(tmp_path))["counts"]["pairs"] == {"train": 1, "holdout": 0}
    row = read_rows(str(tmp_path), "pairs", "train")[0]
    assert row["prompt"] == [{"role": "user", "content": QUERY}]
    assert row["chosen"][0]["role"] == "assistant" and row["source"] == MADE
    assert json.dumps(row)  # plain JSON


def test_the_draw_favours_the_kinds_the_dev_split_misses_and_keeps_a_share_of_the_rest():
    missed = [prompt(("no_commas", {}), pid=f"train-{i:05d}") for i in range(200)]
    learnt = [prompt(("lowercase", {}), pid=f"train-{i:05d}") for i in range(200, 400)]
    pool = missed + learnt
    per_kind = {"no_commas": 0.2, "lowercase": 1.0}
    weight = weights(pool, per_kind)
    assert weight[0] == 0.8 and weight[-1] == FLOOR
    drawn = draw(pool, weight, 100, random.Random(0))
    picked = sum(p in missed for p in drawn)
    assert len(drawn) == 100 and len({p.id for p in drawn}) == 100
    assert 75 <= picked < 100   # mostly the missed kind, never only it
    assert drawn == draw(pool, weight, 100, random.Random(0))  # seeded


def test_the_dev_split_is_the_last_training_prompts_and_each_sample_has_its_seed():
    pool = [prompt(("no_commas", {}), pid=f"train-{i:05d}") for i in range(10)]
    rest, dev = dev_split(pool, 3)
    assert [p.id for p in dev] == ["train-00007", "train-00008", "train-00009"]
    assert rest == pool[:7]
    asks = sample_asks(rest[:2], samples=3, seed=0, round_=1)
    assert [a.key for a in asks][:3] == ["train-00000/0", "train-00000/1", "train-00000/2"]
    assert len({a.extra["seed"] for a in asks}) == 6

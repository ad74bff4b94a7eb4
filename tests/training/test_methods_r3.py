"""DRO's R3 reward on a tiny model, and the R3 data filter."""

from __future__ import annotations

import pytest
import torch

from bench.fakes.tiny_model import build_tokenizer
from training.rewards.r3 import R3Options, R3Reward, length_penalty, token_weights
from training.rewards.r3_filter import FilteredReward, FilterOptions, PromptSignal, decide, signal

REFERENCE = "A lighthouse keeper counts the ships that never come back."


@pytest.fixture(scope="module")
def copier():
    """A tiny random Qwen2 whose attention values pass embeddings through unchanged.

    Random weights cannot copy from their context; with value and output projections set to
    the identity (and tied embeddings) a token seen earlier becomes more likely again, the
    least ability R3 needs: a reasoning trace that holds y makes y more certain.
    """
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_tokenizer([REFERENCE, "Write a short story opening."])
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=True))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.v_proj.weight.copy_(torch.eye(64))
            layer.self_attn.o_proj.weight.copy_(torch.eye(64))
    return model, tokenizer


PROMPT = [{"role": "user", "content": "Write a short story opening."}]
OTHERS = ["The fox jumps over the lazy dog.", "A robot learns to paint a story.",
          "Reports and proposals and legal copy.", "ships count keeper"]


def test_a_completion_that_copies_the_reference_gets_the_highest_r3(copier):
    model, tokenizer = copier
    reward = R3Reward(tokenizer, model=model, policy="ref", options=R3Options(length_beta=0.0))
    model.train()
    completions = [*OTHERS[:2], REFERENCE, *OTHERS[2:]]
    out = reward([PROMPT] * 5, [[{"role": "assistant", "content": c}] for c in completions],
                 id=["q"] * 5, reference=[REFERENCE] * 5)
    assert max(range(5), key=lambda i: out[i]) == 2
    assert model.training       # scoring switched to eval mode and back


def test_groups_are_scored_separately_and_a_missing_reference_is_none(copier):
    model, tokenizer = copier
    reward = R3Reward(tokenizer, model=model, policy="ref")
    metrics = {}
    out = reward([PROMPT] * 3, [REFERENCE, "x", "y"], id=["a", "b", "b"],
                 reference=[REFERENCE, None, None], log_metric=metrics.__setitem__)
    assert isinstance(out[0], float) and out[1:] == [None, None]
    assert metrics["r3/unavailable"] == 2.0


def test_the_length_penalty_prefers_an_answer_of_the_reference_length(copier):
    model, tokenizer = copier
    reward = R3Reward(tokenizer, model=model, policy="ref", options=R3Options(length_beta=1.0))
    same = "<think>plan</think>" + " ".join(["word"] * 12)
    longer = "<think>plan</think>" + " ".join(["word"] * 60)
    short, long_ = reward([PROMPT] * 2, [same, longer], id=["q", "q"], reference=[REFERENCE] * 2)
    assert short > long_
    assert length_penalty(10, 15, 0.5) == pytest.approx(-0.25)


def test_sigma_weights_sum_to_one_and_follow_the_spread():
    logprobs = torch.tensor([[-1.0, -2.0, -3.0], [-1.0, -4.0, -3.5]])
    w = token_weights(logprobs, "sigma")
    assert w.sum().item() == pytest.approx(1.0)
    assert w[0] == 0 and w[1] > w[2]
    assert torch.allclose(token_weights(logprobs, "uniform"), torch.full((3,), 1 / 3))


def test_current_policy_is_captured_when_training_begins(copier):
    model, tokenizer = copier
    reward = R3Reward(tokenizer, policy="current")
    with pytest.raises(RuntimeError, match="no model yet"):
        reward.group_rewards(PROMPT, ["a"], REFERENCE)
    reward.callbacks[0].on_train_begin(None, None, None, model=model)
    assert reward.model is model
    assert reward.config_overrides["loss_type"] == "dr_grpo"
    with pytest.raises(ValueError, match="frozen reference"):
        R3Reward(tokenizer, policy="ref")


def test_the_filter_drops_too_hard_then_too_flat_prompts_and_carries_some_forward():
    ranks = torch.tensor([[0, 1, 500, 900], [0, 2, 3, 4]])      # trace 2 passes the rank test
    lp = torch.tensor([[-1.0, -1.0, -1.0, -1.0], [-1.0, -3.0, -1.0, -1.0]])
    s = signal("ok", lp, ranks, rho=0.25)
    assert s.best_tail_rank == 4.0 and s.max_sigma == pytest.approx(1.0)
    signals = [PromptSignal("hard", 800.0, 2.0), PromptSignal("flat", 1.0, 0.01),
               PromptSignal("good", 1.0, 1.5), PromptSignal("fine", 2.0, 0.9)]
    result = decide(signals, FilterOptions(top_k=100, drop_fraction=1 / 3, carry=0.0))
    assert result.kept == {"good", "fine"}
    assert (result.too_hard, result.too_flat) == (("hard",), ("flat",))
    carried = decide(signals, FilterOptions(top_k=100, drop_fraction=1 / 3, carry=0.5))
    assert len(carried.carried) == 1 and carried.kept == {"good", "fine", *carried.carried}


def test_filtered_prompts_get_zero_reward_and_no_inner_call():
    calls = []

    def inner(prompts, completions, completion_ids=None, **columns):
        calls.append(list(columns["id"]))
        return [0.7] * len(prompts)

    reward = FilteredReward(inner, frozenset({"drop"}))
    out = reward(["p"] * 4, ["c"] * 4, None, id=["keep", "held-out", "drop", "drop"],
                 reference=["r"] * 4, trainer_state=None)
    assert out == [0.7, 0.7, 0.0, 0.0] and calls == [["keep", "held-out"]]
    assert reward.stats()["r3_filter"]["masked"] == 2

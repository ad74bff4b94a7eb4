"""GSPO's completions on the local engine (training.speed.rollouts): sampled from the policy's
own distribution, repeatable by seed, ended at the end token or the length limit, with the
sampling filters of the stage."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from training.speed.rollouts import EngineRollouts, usable  # noqa: E402

MESSAGES = [[{"role": "user", "content": "Write a short note about rain."}],
            [{"role": "user", "content": "List two colours."}]]


@pytest.fixture(scope="module")
def policy(tiny_model_dir):
    model = transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_model_dir)
    trainer = SimpleNamespace(model=model, processing_class=tokenizer,
                              accelerator=SimpleNamespace(unwrap_model=lambda m: m),
                              generation_config=SimpleNamespace(eos_token_id=None),
                              chat_template=None, chat_template_kwargs={})
    return model, tokenizer, trainer


def rollouts(**overrides):
    settings = dict(temperature=1.0, top_p=1.0, top_k=0, max_tokens=12, seed=3)
    return EngineRollouts(**{**settings, **overrides})


def test_the_sampled_log_probabilities_are_the_policys_own(policy):
    model, _, trainer = policy
    assert usable(model)
    out = rollouts()(MESSAGES * 2, trainer)
    assert len(out["completion_ids"]) == 4
    with torch.inference_mode():
        for prompt, completion, sampled in zip(out["prompt_ids"], out["completion_ids"],
                                               out["logprobs"], strict=True):
            assert 1 <= len(completion) == len(sampled) <= 12
            ids = torch.tensor([prompt + completion])
            logp = model(input_ids=ids).logits[0, len(prompt) - 1:-1].log_softmax(-1)
            own = logp.gather(-1, torch.tensor(completion)[:, None])[:, 0]
            assert torch.allclose(own, torch.tensor(sampled), atol=1e-3)


def test_a_seed_repeats_a_run_and_copies_of_a_prompt_differ(policy):
    _, _, trainer = policy
    first = rollouts(max_tokens=20)(MESSAGES * 4, trainer)["completion_ids"]
    assert first == rollouts(max_tokens=20)(MESSAGES * 4, trainer)["completion_ids"]
    assert first != rollouts(max_tokens=20, seed=4)(MESSAGES * 4, trainer)["completion_ids"]
    assert len({tuple(c) for c in first[0::2]}) > 1  # four samples of one prompt, not one


def test_greedy_matches_generate_and_stops_at_the_end_token(policy):
    model, tokenizer, trainer = policy
    out = rollouts(temperature=0.0, max_tokens=16)(MESSAGES[:1], trainer)
    prompt = out["prompt_ids"][0]
    with torch.inference_mode():
        expected = model.generate(torch.tensor([prompt]), max_new_tokens=16, do_sample=False,
                                  eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.eos_token_id)[0, len(prompt):].tolist()
    assert out["completion_ids"][0] == expected
    # an end token the model picks ends its completion, kept as its last token
    ending = SimpleNamespace(**{**vars(trainer),
                                "generation_config": SimpleNamespace(eos_token_id=[expected[2]])})
    cut = rollouts(temperature=0.0, max_tokens=16)(MESSAGES[:1], ending)["completion_ids"][0]
    assert cut == expected[:expected.index(expected[2]) + 1]


def test_top_k_and_top_p_keep_only_the_likeliest_tokens():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    for settings, allowed in ((dict(top_k=2), {0, 1}), (dict(top_p=0.7), {0, 1}),
                              (dict(top_p=0.4), {0}), (dict(top_k=3, top_p=0.99), {0, 1, 2})):
        engine = rollouts(**settings)
        seen = {engine.sample(logits)[0][0] for _ in range(200)}
        assert seen == allowed, settings
    tokens, logprobs = rollouts(top_k=2).sample(logits)
    assert logprobs[0] == pytest.approx(float(torch.log(torch.tensor([0.5, 0.3])[tokens[0]]
                                                        / 0.8)), abs=1e-5)

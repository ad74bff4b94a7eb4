"""GSPO's completions decoded on redraft's local engine instead of transformers' `generate`.

On the CPU, without vLLM, TRL decodes a step's completions with transformers' batched
`generate`: an fp32 forward per token through a cache that grows by concatenation, which is
most of a GSPO step's time on a small model. `EngineRollouts` is TRL's `rollout_func` for
Llama-family models on the CPU (`generation.local.llama.supported`): each step it builds the
compact decoder (`LlamaRunner`) from the policy's current weights, prefills every prompt of the
step (G copies each) and samples all completions together, one batched forward per token.

With `--rollout-weights float32` the runner reads the policy's own fp32 weights, so the
completions are sampled from the very distribution GSPO trains. The default, int8, reads a copy
quantised per output row (a quarter of the bytes a token reads): on SmolLM2-135M, 2 cores, 8
completions of 160 tokens, generation took 35 s for 3 steps against 51 s in fp32 and 53 s on
transformers' `generate` (`bench.train`); the samples then come from a policy a little off the
trained one, which GSPO's clipped sequence ratio tolerates (TRL applies no importance correction
outside vLLM). Sampling follows the stage's temperature, top-k and top-p with a generator seeded
by `--seed`, so a run is repeatable. A completion ends at an end-of-sequence token (kept, as
`generate` keeps it) or at `max_completion_length`.
"""

from __future__ import annotations

from typing import Any

from generation.local.llama import LlamaRunner, supported


def usable(model: Any) -> bool:
    """Whether the local engine can decode the policy's completions: a Llama-family model with
    its own weights (not a PEFT wrapper) on the CPU."""
    import torch

    device = getattr(model, "device", torch.device("cpu"))
    return (getattr(device, "type", "cpu") == "cpu" and not hasattr(model, "peft_config")
            and supported(model))


class EngineRollouts:
    """TRL's `rollout_func(prompts, trainer)`: one completion per prompt entry (TRL's sampler
    already repeats each prompt G times), with its tokens and their sampling log-probabilities."""

    def __init__(self, *, temperature: float, top_p: float, top_k: int, max_tokens: int,
                 seed: int, weights: str = "float32") -> None:
        import torch

        self.torch = torch
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.max_tokens = max_tokens
        self.weights = weights
        self.generator = torch.Generator().manual_seed(seed)
        self.__name__ = "local_engine"

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        torch = self.torch
        model = trainer.accelerator.unwrap_model(trainer.model)
        prompt_ids = _tokenized(prompts, trainer)
        ends = _end_tokens(trainer)
        with torch.inference_mode():
            runner = LlamaRunner(model, self.weights)
            completions, logprobs = self.decode(runner, prompt_ids, ends)
        return {"prompt_ids": prompt_ids, "completion_ids": completions, "logprobs": logprobs}

    def decode(self, runner: LlamaRunner, prompt_ids: list[list[int]], ends: set[int],
               ) -> tuple[list[list[int]], list[list[float]]]:
        """Sample one completion per prompt, all of them stepped together."""
        torch = self.torch
        slots = list(range(len(prompt_ids)))
        completions: list[list[int]] = [[] for _ in slots]
        logprobs: list[list[float]] = [[] for _ in slots]
        try:
            for slot in slots:
                runner.open(slot)
            logits = torch.stack([runner.prefill(slot, ids)
                                  for slot, ids in zip(slots, prompt_ids, strict=True)])
            active = slots
            while active:
                tokens, chosen = self.sample(logits)
                going = []  # (slot, its token) of the completions that go on
                for slot, token, logprob in zip(active, tokens, chosen, strict=True):
                    completions[slot].append(token)
                    logprobs[slot].append(logprob)
                    if token not in ends and len(completions[slot]) < self.max_tokens:
                        going.append((slot, token))
                if not going:
                    break
                active = [slot for slot, _ in going]
                logits = runner.step(active, [token for _, token in going])
        finally:
            for slot in slots:
                runner.close(slot)
        return completions, logprobs

    def sample(self, logits: Any) -> tuple[list[int], list[float]]:
        """A token per row of `logits` [B, vocab] and its log-probability under the sampling
        distribution (temperature, then top-k, then top-p)."""
        torch = self.torch
        logits = logits.float()
        if self.temperature <= 0:
            tokens = logits.argmax(-1)
            return tokens.tolist(), [0.0] * len(tokens)
        logits = logits / self.temperature
        if self.top_k and self.top_k < logits.shape[-1]:
            kth = torch.topk(logits, self.top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if self.top_p < 1.0:
            ordered, order = torch.sort(logits, descending=True, dim=-1)
            probs = ordered.softmax(-1)
            # drop a token once the ones before it already reach top_p (the first always stays)
            drop = probs.cumsum(-1) - probs >= self.top_p
            ordered = ordered.masked_fill(drop, float("-inf"))
            logits = torch.full_like(logits, float("-inf")).scatter(-1, order, ordered)
        logp = logits.log_softmax(-1)
        tokens = torch.multinomial(logp.exp(), 1, generator=self.generator)[:, 0]
        return tokens.tolist(), logp.gather(-1, tokens[:, None])[:, 0].tolist()


def _tokenized(prompts: list[Any], trainer: Any) -> list[list[int]]:
    """The prompts' token ids as TRL renders them: the chat template with the generation
    prompt for conversations, plain tokens for text."""
    tokenizer = trainer.processing_class
    if isinstance(prompts[0], list):
        rendered = tokenizer.apply_chat_template(
            conversation=prompts, chat_template=getattr(trainer, "chat_template", None),
            add_generation_prompt=True, tokenize=True, return_dict=True,
            **(getattr(trainer, "chat_template_kwargs", None) or {}))
        return [list(ids) for ids in rendered["input_ids"]]
    return [list(ids) for ids in tokenizer(text=prompts)["input_ids"]]


def _end_tokens(trainer: Any) -> set[int]:
    """The tokens that end a completion: the generation config's end-of-sequence ids, else the
    tokenizer's."""
    config = getattr(trainer, "generation_config", None)
    ends = getattr(config, "eos_token_id", None)
    if ends is None:
        ends = trainer.processing_class.eos_token_id
    return set(ends) if isinstance(ends, (list, tuple)) else {ends}


def greedy_texts(model: Any, tokenizer: Any, prompts: list[list[dict[str, Any]]],
                 max_tokens: int, batch: int = 16) -> list[str]:
    """Greedy completions of conversational `prompts` on the local engine (the policy's own
    fp32 weights: the very tokens `generate` picks), `batch` prompts stepped together."""
    import torch

    decoder = EngineRollouts(temperature=0.0, top_p=1.0, top_k=0, max_tokens=max_tokens,
                             seed=0)
    ends = {tokenizer.eos_token_id}
    texts: list[str] = []
    with torch.inference_mode():
        runner = LlamaRunner(model, "float32")
        for start in range(0, len(prompts), batch):
            ids = [list(tokenizer.apply_chat_template(p, add_generation_prompt=True,
                                                      tokenize=True, return_dict=True)
                        ["input_ids"]) for p in prompts[start:start + batch]]
            completions, _ = decoder.decode(runner, ids, ends)
            texts.extend(tokenizer.decode(c, skip_special_tokens=True) for c in completions)
    return texts

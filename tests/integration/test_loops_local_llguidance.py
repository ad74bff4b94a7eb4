"""Whole loops on the `local` backend: a tiny random Llama (built here, nothing downloaded)
decoding under llguidance with the schemas each call sends.

A random model constrained by a grammar writes whatever the schema allows — one-letter or
blank names, repeated names, random scores — so this checks that the schemas say everything
the validators require and that the rest is repaired: both checklist modes build without a
retry, and loops with joint or per-dimension evaluation, reflection and memory recall,
selection and rewrite finish without degrading.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("llguidance")

from generation.local import LocalBackend  # noqa: E402
from generation.scripted import Call  # noqa: E402
from generation.structured import RETRY  # noqa: E402
from generation.types import ChatParams  # noqa: E402
from loops.checklists import ChecklistSpec, Resolved  # noqa: E402
from loops.controller import ReflectionLoop  # noqa: E402
from loops.memory_step import MemoryStep  # noqa: E402
from loops.options import LoopOptions  # noqa: E402
from rubrics.agents import build_checklist  # noqa: E402
from rubrics.checklist import Band, Checklist, Dimension  # noqa: E402
from store import ExperienceRecord, Store  # noqa: E402
from tests.banks import hashing_bank  # noqa: E402

SPECIALS = ["<s>", "</s>", "<pad>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
CORPUS = ["Write a short announcement for the customers of a bike shop, in a friendly tone.",
          '{"scores": {"Clarity": {"evidence": "text", "score": 7}}, "summary": "cut filler"}',
          "The response answers the user turn marked target in the conversation."]
QUERY = [{"role": "user", "content": "Write a short announcement for the customers of a bike "
                                     "shop, in a friendly tone."}]
CHECKLIST = Checklist(dimensions=tuple(
    Dimension(name=n, description=f"{n} of the answer", bands=(
        Band(low=1, high=3, description="weak"), Band(low=4, high=7, description="fair"),
        Band(low=8, high=10, description="strong"))) for n in ("Clarity", "Warmth")),
    source="user")
# Sampled, seeded: a random model then writes varied scores; short texts keep calls fast.
PARAMS = ChatParams(temperature=1.0, seed=11, max_tokens=700)
QUOTE_BIAS = 6.0  # added to the '"' logit, so that strings close after a few characters


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import decoders, models, pre_tokenizers, trainers

    raw = tokenizers.Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        chat_template=TEMPLATE)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=16384,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():
        model.lm_head.weight.mul_(0.1)  # flat logits: every allowed token stays likely
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
async def local(model_dir: Path):
    backend = LocalBackend(str(model_dir), device="cpu", max_new_tokens=700, model_name="tiny")
    await backend.start()
    quote = backend._loaded.tokenizer.convert_tokens_to_ids('"')
    runner = backend._engine.runner

    def biased(forward):
        def run(*args):
            logits = forward(*args)
            logits[..., quote] += QUOTE_BIAS
            return logits
        return run

    runner.prefill, runner.step = biased(runner.prefill), biased(runner.step)
    yield backend
    await backend.aclose()


class Recorded:
    """The local backend, with every call recorded (to find retries)."""

    name = "local"

    def __init__(self, backend: LocalBackend) -> None:
        self.backend = backend
        self.calls: list[Call] = []

    async def chat(self, messages, params, schema=None):  # type: ignore[no-untyped-def]
        self.calls.append(Call(tuple(messages), params, schema))
        return await self.backend.chat(messages, params, schema=schema)

    def retries(self) -> int:
        opening = RETRY.split(":")[0]
        return sum(1 for c in self.calls for m in c.messages
                   if m["role"] == "user" and str(m["content"]).startswith(opening))


@pytest.mark.parametrize("mode", ["three_agent", "fused"])
async def test_both_checklist_modes_build_without_a_retry(local, mode) -> None:
    judge = Recorded(local)
    # room for the checks list the rubric-writing call carries too (up to six checks, each
    # about 70 tokens of this tiny vocabulary, on top of the ~650 a random rubric takes)
    params = dataclasses.replace(PARAMS, max_tokens=1200)
    built = await build_checklist(judge, QUERY, params, mode=mode)
    assert not built.degraded, built.error
    assert judge.retries() == 0 and built.calls == (3 if mode == "three_agent" else 1)
    assert 4 <= len(built.checklist.dimensions) <= 8


class User:
    """The request's own checklist: the loops below test judging, not coding."""

    async def fixed(self, spec: ChecklistSpec, namespace: str) -> Resolved:
        return Resolved(CHECKLIST, "user", "fixed")


async def test_loops_with_memory_finish_without_degrading_or_a_retry(local, tmp_path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    bank = await hashing_bank(store, tmp_path / "index")
    try:
        await bank.remember(ExperienceRecord(
            namespace="ns", key="genre: announcement | audience: customers",
            text="Lead with the news, then one concrete detail.", embedding_model="unset",
            score_trajectory=(0.4, 0.8)))
        model = Recorded(local)
        step = MemoryStep(bank, model, model, PARAMS, k=1, floor=-1.0)  # hashing vectors
        loop = ReflectionLoop(model, model, User(), judge_params=PARAMS, memory=step)  # type: ignore[arg-type]
        for evaluation in ("joint", "per_dimension"):
            options = LoopOptions(max_rounds=1, threshold=1.0, evaluation=evaluation)
            trace = await loop.run(QUERY, PARAMS.with_(max_tokens=24), options, namespace="ns",
                                   spec=ChecklistSpec(ref="user"))
            assert trace.stop_reason != "degraded" and trace.rounds == 1
            for cand in trace.candidates:
                cand.evaluation.validate_against(CHECKLIST)
            assert trace.recalled is not None and len(trace.recalled.hits) == 1
        assert model.retries() == 0
        assert any(c.schema is not None and "selected" in c.schema["properties"]
                   for c in model.calls)
    finally:
        await bank.aclose()
        await store.close()

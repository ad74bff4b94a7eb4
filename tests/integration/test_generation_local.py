"""The local backend against a tiny random Llama built in the test (nothing is downloaded)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from generation.errors import InvalidRequest, NotFound, UpstreamUnavailable  # noqa: E402
from generation.local import LocalBackend, ModelLoadError  # noqa: E402
from generation.local.constrain import schema_problem  # noqa: E402
from generation.local.model import encode_prompt  # noqa: E402
from generation.types import ChatParams  # noqa: E402

SPECIALS = ["<s>", "</s>", "<pad>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Write a short story about a robot who learns to paint.",
    '{"name": "Ada", "age": 36, "colour": "red"}',
    "Reports, proposals, legal and marketing copy, stories.",
]
PROMPT = [{"role": "user", "content": "Write a short story about a robot."}]
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "colour": {"enum": ["red", "green", "blue"]},
    },
    "required": ["name", "age", "colour"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def raw_tokenizer() -> tokenizers.Tokenizer:
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # The full byte alphabet lets the vocabulary spell any string, JSON included.
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 3, trainer)
    return tok


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, raw_tokenizer) -> Path:
    path = tmp_path_factory.mktemp("tiny-llama")
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw_tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        chat_template=TEMPLATE,
    )
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():
        # EOS logit is then always 0 while ~300 random logits compete: greedy never ends early,
        # so length-bound tests do not depend on the random draw.
        model.lm_head.weight[tokenizer.eos_token_id].zero_()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
async def backend(model_dir: Path) -> LocalBackend:
    backend = LocalBackend(str(model_dir), device="cpu", max_new_tokens=24, model_name="tiny")
    await backend.start()
    yield backend
    await backend.aclose()


def count_forward_passes(backend: LocalBackend, delay: float = 0.0,
                         reached: tuple[int, asyncio.Event] | None = None) -> dict[str, int]:
    """Count the engine's forward passes (and the most sequences in one), optionally slowed.

    `reached=(k, event)` sets the event once k passes have run.
    """
    stats = {"calls": 0, "max_active": 0}
    loop = asyncio.get_running_loop()
    runner = backend._engine.runner

    def counted(forward, rows):
        def run(*args):
            stats["max_active"] = max(stats["max_active"], rows(*args))
            time.sleep(delay)
            out = forward(*args)
            stats["calls"] += 1
            if reached is not None and stats["calls"] == reached[0]:
                loop.call_soon_threadsafe(reached[1].set)
            return out
        return run

    runner.prefill = counted(runner.prefill, lambda slot, ids: 1)
    runner.step = counted(runner.step, lambda slots, tokens: len(slots))
    return stats


async def test_chat_counts_prompt_and_completion_tokens_exactly(backend, raw_tokenizer):
    completion = await backend.chat(PROMPT, ChatParams(max_tokens=7))

    # <|user|> content <|end|> <|assistant|>: three special tokens around the content.
    content_tokens = len(raw_tokenizer.encode(PROMPT[0]["content"]).ids)
    assert completion.usage.prompt_tokens == content_tokens + 3
    assert completion.usage.completion_tokens == 7
    assert completion.finish_reason == "length"
    assert completion.text
    assert completion.model == "tiny"


async def test_greedy_is_deterministic_and_content_parts_match_strings(backend):
    parts = [{"role": "user", "content": [{"type": "text", "text": "Write a short "},
                                          {"type": "text", "text": "story about a robot."}]}]
    plain = await backend.chat(PROMPT, ChatParams(max_tokens=12))
    from_parts = await backend.chat(parts, ChatParams(max_tokens=12))

    assert from_parts.text == plain.text
    assert from_parts.usage == plain.usage


async def test_stream_yields_tokens_as_they_come_and_matches_chat(backend):
    params = ChatParams(max_tokens=20)
    completion = await backend.chat(PROMPT, params)
    chunks = [chunk async for chunk in backend.stream(PROMPT, params)]

    deltas = [c.choices[0].content for c in chunks if c.choices and c.choices[0].content]
    assert len(deltas) >= 5
    assert "".join(deltas) == completion.text
    assert chunks[0].choices[0].role == "assistant"
    assert chunks[-2].choices[0].finish_reason == "length"
    assert chunks[-1].usage == completion.usage
    assert not chunks[-1].choices


async def test_seeded_sampling_is_reproducible_and_n_gives_independent_samples(backend):
    params = ChatParams(max_tokens=16, temperature=1.0, seed=7, n=2)
    first = await backend.chat(PROMPT, params)
    again = await backend.chat(PROMPT, params)
    single = await backend.chat(PROMPT, params.with_(n=1))

    assert [c.index for c in first.choices] == [0, 1]
    assert [c.text for c in first.choices] == [c.text for c in again.choices]
    assert first.choices[0].text != first.choices[1].text
    assert single.text == first.choices[0].text
    assert first.usage.prompt_tokens == single.usage.prompt_tokens
    assert first.usage.completion_tokens == 2 * 16


async def test_stop_string_truncates_and_never_leaks_into_the_stream(backend):
    free = await backend.chat(PROMPT, ChatParams(max_tokens=24))
    stop = free.text[6:9]
    expected = free.text[: free.text.find(stop)]

    stopped = await backend.chat(PROMPT, ChatParams(max_tokens=24, stop=(stop,)))
    chunks = [c async for c in backend.stream(PROMPT, ChatParams(max_tokens=24, stop=(stop,)))]
    streamed = "".join(c.choices[0].content or "" for c in chunks if c.choices)

    assert stopped.text == expected
    assert stopped.finish_reason == "stop"
    assert streamed == expected
    assert chunks[-2].choices[0].finish_reason == "stop"


async def test_schema_constrains_a_random_model_to_valid_json(backend):
    unconstrained = await backend.chat(PROMPT, ChatParams(max_tokens=40))
    assert schema_problem(unconstrained.text, SCHEMA) is not None  # the model alone cannot

    for params in (ChatParams(max_tokens=80), ChatParams(max_tokens=80, temperature=1.0, seed=3)):
        completion = await backend.chat(PROMPT, params, schema=SCHEMA)
        value = json.loads(completion.text)
        assert set(value) == {"name", "age", "colour"}
        assert isinstance(value["name"], str) and len(value["name"]) <= 8
        assert type(value["age"]) is int and 0 <= value["age"] <= 120
        assert value["colour"] in ("red", "green", "blue")
        assert completion.finish_reason == "stop"


LONG = {  # strings far longer than the token budget: the decoder must close them early
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": 1000},
        "items": {"type": "array", "minItems": 2, "maxItems": 4, "items": {
            "type": "object", "additionalProperties": False, "required": ["why", "score"],
            "properties": {"why": {"type": "string", "minLength": 3, "maxLength": 400},
                           "score": {"type": "integer", "minimum": 1, "maximum": 10}}}},
    },
    "required": ["summary", "items"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("spare", [0, 10, 60])
async def test_constrained_json_is_closed_before_the_token_limit(backend, spare):
    import jsonschema

    from generation.local.constrain import closing_reserve

    # EOS never wins for this model and its strings would run to maxLength: without closing
    # mode every one of these answers is cut inside a string. The budget is the closing
    # reserve (the shortest document's tokens, with a margin) plus `spare`.
    max_tokens = closing_reserve(backend._loaded.tokenizer, LONG) + spare
    for params in (ChatParams(max_tokens=max_tokens),
                   ChatParams(max_tokens=max_tokens, temperature=1.0, seed=5)):
        completion = await backend.chat(PROMPT, params, schema=LONG)
        jsonschema.validate(json.loads(completion.text), LONG)
        assert completion.finish_reason == "stop"
        assert completion.usage.completion_tokens <= max_tokens


def test_the_shortest_document_and_the_reserve_follow_the_schema(raw_tokenizer):
    from generation.local.constrain import closing_reserve, minimal_json

    shortest = minimal_json(LONG)
    assert shortest == '{"summary":"","items":[{"why":"xxx","score":1},{"why":"xxx","score":1}]}'
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=raw_tokenizer)
    count = len(tokenizer(shortest, add_special_tokens=False)["input_ids"])
    assert closing_reserve(tokenizer, LONG) == -(-count * 3 // 2) + 8
    assert minimal_json({"type": "object", "properties": {"pick": {"enum": ["long", "ab"]}},
                         "required": ["pick"]}) == '{"pick":"ab"}'
    # An array that may be empty still reserves one item: the decoder may have opened it.
    assert minimal_json({"type": "array", "items": {"type": "integer", "minimum": 3}}) == "[3]"


async def test_response_format_json_schema_is_honoured_when_streaming(backend):
    response_format = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}
    params = ChatParams(max_tokens=80, response_format=response_format)
    chunks = [c async for c in backend.stream(PROMPT, params)]
    text = "".join(c.choices[0].content or "" for c in chunks if c.choices)

    assert schema_problem(text, SCHEMA) is None
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert 0 < chunks[-1].usage.completion_tokens < 80


async def test_without_constrained_decoding_invalid_json_is_retried_then_returned(
        backend, monkeypatch):
    monkeypatch.setattr("generation.local.backend.build_ll_tokenizer", lambda *args: None)
    once = await backend.chat(PROMPT, ChatParams(max_tokens=10))
    completion = await backend.chat(PROMPT, ChatParams(max_tokens=10), schema=SCHEMA)

    # A random model never satisfies the schema: three attempts, the last one returned.
    assert completion.text
    assert completion.usage.completion_tokens == 30
    assert completion.usage.prompt_tokens > 3 * once.usage.prompt_tokens


async def test_closing_a_stream_stops_generation(backend):
    stats = count_forward_passes(backend, delay=0.01)
    stream = backend.stream(PROMPT, ChatParams(max_tokens=200))
    seen = 0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].content:
            seen += 1
            if seen == 3:
                break
    await stream.aclose()
    calls = stats["calls"]
    await asyncio.sleep(0.1)

    assert stats["calls"] == calls
    assert calls < 20


async def test_cancelling_a_chat_stops_generation(backend):
    started = asyncio.Event()
    stats = count_forward_passes(backend, delay=0.01, reached=(3, started))
    task = asyncio.create_task(backend.chat(PROMPT, ChatParams(max_tokens=200)))
    await asyncio.wait_for(started.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    calls = stats["calls"]
    await asyncio.sleep(0.1)

    assert stats["calls"] == calls
    assert calls < 20


async def test_concurrency_bounds_generations_running_at_once(backend):
    stats = count_forward_passes(backend, delay=0.005)
    results = await asyncio.gather(*(backend.chat(PROMPT, ChatParams(max_tokens=5))
                                     for _ in range(3)))

    assert all(r.usage.completion_tokens == 5 for r in results)
    assert stats["max_active"] == 1


async def test_unknown_model_is_not_found_and_served_name_is_listed(backend):
    with pytest.raises(NotFound) as caught:
        await backend.chat(PROMPT, ChatParams(model="gpt-4o"))
    assert caught.value.param == "model"
    assert await backend.models() == ["tiny"]
    assert (await backend.chat(PROMPT, ChatParams(model="tiny", max_tokens=2))).text


async def test_prompt_longer_than_the_context_is_rejected(backend):
    long = [{"role": "user", "content": "fox " * 400}]
    with pytest.raises(InvalidRequest) as caught:
        await backend.chat(long, ChatParams(max_tokens=2))
    assert caught.value.param == "messages"


async def test_ready_only_after_start_and_name_defaults_to_directory(model_dir):
    backend = LocalBackend(str(model_dir) + "/", device="cpu")
    assert await backend.models() == [model_dir.name]
    assert not await backend.ready()
    with pytest.raises(UpstreamUnavailable):
        await backend.chat(PROMPT, ChatParams())
    await backend.start()
    assert await backend.ready()
    # The server's own hidden calls carry the configured path: the same model answers them.
    for name in (str(model_dir), str(model_dir) + "/", model_dir.name):
        assert (await backend.chat(PROMPT, ChatParams(model=name, max_tokens=2))).text
    await backend.aclose()
    assert not await backend.ready()


async def test_missing_model_names_both_fixes(tmp_path):
    backend = LocalBackend(str(tmp_path / "no-such-model"), device="cpu")
    with pytest.raises(ModelLoadError) as caught:
        await backend.start()
    message = str(caught.value)
    assert "no-such-model" in message
    assert "REDRAFT_MODEL" in message and "REDRAFT_UPSTREAM_URL" in message
    assert not await backend.ready()


async def test_tokenizer_without_chat_template_gets_role_prefixes(backend):
    tokenizer = backend._loaded.tokenizer
    tokenizer.chat_template = None
    ids = encode_prompt(tokenizer, [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "Hi"}])
    text = tokenizer.decode(ids, skip_special_tokens=True)

    assert text == "system: Be brief.\nuser: Hi\nassistant:"
    assert (await backend.chat(PROMPT, ChatParams(max_tokens=3))).usage.completion_tokens == 3


async def test_schema_the_grammar_compiler_rejects_is_a_bad_request(backend):
    with pytest.raises(InvalidRequest) as caught:
        await backend.chat(PROMPT, ChatParams(max_tokens=5), schema={"type": "nonsense"})
    assert caught.value.param == "response_format"
    assert "nonsense" in caught.value.message


def test_the_compact_decoder_matches_the_model_and_batches_without_changing_a_row(model_dir):
    from generation.local.llama import LlamaRunner, supported

    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir).eval()
    assert supported(model)
    prompt = [5, 17, 42, 9, 33, 61]
    with torch.inference_mode():
        expected = model(input_ids=torch.tensor([prompt + [7, 8]])).logits[0]
        for weights, tolerance in (("float32", 1e-4), ("int8", 5e-2)):
            runner = LlamaRunner(model, weights)
            runner.open(0)
            runner.open(1)
            first = runner.prefill(0, prompt)
            runner.prefill(1, prompt[:3])
            assert torch.allclose(first, expected[len(prompt) - 1], atol=tolerance)
            # slot 0 and a slot of another length stepped together: row 0 is what slot 0
            # alone gives
            together = runner.step([0, 1], [7, 99])
            assert torch.allclose(together[0], expected[len(prompt)], atol=tolerance)
            alone = LlamaRunner(model, weights)
            alone.open(0)
            alone.prefill(0, prompt[:3])
            assert torch.allclose(alone.step([0], [99])[0], together[1], atol=tolerance)
            assert torch.allclose(runner.step([0], [8])[0], expected[len(prompt) + 1],
                                  atol=tolerance)


def test_the_shared_cache_reuses_rows_grows_and_steps_rows_apart(model_dir):
    from generation.local.llama import _FIRST_CAPACITY, LlamaRunner

    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir).eval()
    prompt = [5, 17, 42, 9, 33, 61]
    with torch.inference_mode():
        runner = LlamaRunner(model, "int8")
        for slot in (0, 1, 2):
            runner.open(slot)
            runner.prefill(slot, prompt[:slot + 3])
        runner.close(1)  # slots 0 and 2 now sit on rows 0 and 2, apart
        apart = runner.step([2, 0], [7, 8])
        for row, (slot, token) in enumerate(((2, 7), (0, 8))):
            alone = LlamaRunner(model, "int8")
            alone.open(0)
            alone.prefill(0, prompt[:slot + 3])
            assert torch.allclose(alone.step([0], [token])[0], apart[row], atol=5e-2)
        runner.open(3)  # takes the free row
        assert runner.cache.rows[3] == 1
        runner.prefill(3, prompt)
        # past the first capacity: the cache doubles and keeps what it held
        long = list(range(10, 10 + _FIRST_CAPACITY))
        runner.prefill(3, long)
        assert runner.cache.capacity == 2 * _FIRST_CAPACITY
        whole = model(input_ids=torch.tensor([prompt + long + [7]])).logits[0, -1]
        assert torch.allclose(runner.step([3], [7])[0], whole, atol=5e-2)
        for slot in (0, 2, 3):
            runner.close(slot)
        assert runner.cache.keys is None  # all freed once no slot is open


async def test_two_requests_at_once_decode_in_one_batch(model_dir):
    backend = LocalBackend(str(model_dir), device="cpu", max_new_tokens=24, model_name="tiny",
                           concurrency=2)
    await backend.start()
    try:
        stats = count_forward_passes(backend, delay=0.002)
        results = await asyncio.gather(*(backend.chat(PROMPT, ChatParams(max_tokens=12))
                                         for _ in range(2)))
        assert [r.usage.completion_tokens for r in results] == [12, 12]
        assert results[0].text == results[1].text  # greedy: the batch changes no row
        assert stats["max_active"] == 2
    finally:
        await backend.aclose()

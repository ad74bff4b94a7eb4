"""`redraft serve` on the embedded default, driven with the official `openai` client: the
model is served under its short name, answers are coherent, and the usage numbers are the
tokenizer's own counts."""

from __future__ import annotations

import time

import pytest

QUESTION = [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]
NO_LOOP = {"reflection": {"enabled": False}}


def prompt_tokens(tokenizer, messages) -> int:
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def completion_tokens(tokenizer, text: str, finish_reason: str) -> int:
    # A model that stops generates its end-of-turn token too; it is counted, as vLLM does.
    return len(tokenizer(text, add_special_tokens=False)["input_ids"]) + (
        finish_reason == "stop")


def test_the_conversion_is_cached_and_a_second_load_does_not_convert(converted, packaged_gguf):
    from generation.local.source import cached_folder

    def must_not_run(gguf, out):
        raise AssertionError("converted again")

    assert converted.folder.parent == converted.data_dir / "models"
    assert {p.name for p in converted.folder.iterdir()} >= {"config.json", "model.safetensors"}
    start = time.perf_counter()
    assert cached_folder(packaged_gguf, converted.data_dir / "models", must_not_run) \
        == converted.folder
    assert time.perf_counter() - start < 2  # a hash of ~2 MiB, not a conversion


def test_the_default_is_served_under_its_short_name_without_converting_again(server, converted):
    with server.client() as client:
        assert [m.id for m in client.models.list()] == ["smollm2-135m-instruct"]
    # The server found the session's conversion in its data dir: nothing else was written.
    assert [p.name for p in (converted.data_dir / "models").iterdir()] == [converted.folder.name]


def test_chat_without_the_loop_is_coherent_and_counts_tokens_exactly(server, tokenizer):
    with server.client() as client:
        reply = client.chat.completions.create(
            model="smollm2-135m-instruct", messages=QUESTION, max_tokens=24, temperature=0,
            extra_body=NO_LOOP)
    answer = reply.choices[0].message.content
    assert "Paris" in answer
    assert reply.model == "smollm2-135m-instruct"
    usage = reply.usage
    assert usage.prompt_tokens == prompt_tokens(tokenizer, QUESTION)
    assert usage.completion_tokens == completion_tokens(tokenizer, answer,
                                                        reply.choices[0].finish_reason)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_streaming_matches_and_its_usage_chunk_counts_tokens_exactly(server, tokenizer):
    with server.client() as client:
        stream = client.chat.completions.create(
            model="smollm2-135m-instruct", messages=QUESTION, max_tokens=24, temperature=0,
            stream=True, stream_options={"include_usage": True}, extra_body=NO_LOOP)
        chunks = list(stream)
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    answer = "".join(pieces)
    finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
    assert len([p for p in pieces if p]) > 3  # token by token, not one block
    assert "Paris" in answer
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage is not None
    assert usage.prompt_tokens == prompt_tokens(tokenizer, QUESTION)
    assert usage.completion_tokens == completion_tokens(tokenizer, answer, finish)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


@pytest.mark.parametrize("name", ["gguf", "folder"])
def test_requests_may_name_the_model_by_its_file_or_folder(server, converted, packaged_gguf,
                                                           name):
    model = str(packaged_gguf if name == "gguf" else converted.folder)
    with server.client() as client:
        reply = client.chat.completions.create(model=model, messages=QUESTION, max_tokens=2,
                                               extra_body=NO_LOOP)
    assert reply.choices[0].message.content


def test_an_unknown_model_is_a_404_naming_the_served_one(server):
    import openai

    with server.client() as client, pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=QUESTION, max_tokens=2,
                                       extra_body=NO_LOOP)
    assert "smollm2-135m-instruct" in caught.value.message

"""Randomly initialised Qwen2 models built locally (nothing is downloaded): the tests' tiny
model, for CPU benchmarks one of SmolLM2-135M's widths, depth and vocabulary, and for GPU
benchmarks one of Qwen2.5-0.5B's shape. The tokenizer is a byte-level BPE trained on a few
lines, with a Qwen-style chat template.

    python -m bench.fakes.tiny_model OUT [--shape tiny|smollm2-135m|qwen2.5-0.5b] [--seed N]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
BASE_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Write a short story about a robot who learns to paint.",
    "Reports, proposals, legal and marketing copy, stories.",
    "This version adds concrete detail about the topic (rev. 1).",
]
# Qwen2.5-0.5B's shape (config.json of the released model); weights are random here.
QWEN25_05B = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
              "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
              "max_position_embeddings": 32768, "tie_word_embeddings": True,
              "rope_theta": 1000000.0, "rms_norm_eps": 1e-6}
# SmolLM2-135M's widths, depth and vocabulary (its config.json; a Llama there, a Qwen2 here).
SMOLLM2_135M = {"hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30,
                "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49152,
                "max_position_embeddings": 8192, "tie_word_embeddings": True,
                "rope_theta": 100000.0, "rms_norm_eps": 1e-5}
SHAPES = {"smollm2-135m": SMOLLM2_135M, "qwen2.5-0.5b": QWEN25_05B}
TINY = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024,
        "tie_word_embeddings": False}


def build_tokenizer(corpus: Sequence[str], vocab_size: int = 400):  # noqa: ANN201
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([*BASE_CORPUS, *corpus] * 3, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", chat_template=TEMPLATE)


def build_tiny_model(path: Path, corpus: Sequence[str] = (), *, shape: str = "tiny",
                     seed: int = 0) -> Path:
    """Save a random Qwen2 causal LM and its tokenizer to `path`; returns `path`.

    shape "tiny": 2 layers of width 32 (CPU tests); "smollm2-135m", "qwen2.5-0.5b": those
    models' shapes.
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_tokenizer(corpus)
    dims = dict(TINY if shape == "tiny" else SHAPES[shape])
    if shape == "tiny":
        dims["vocab_size"] = len(tokenizer)
    config = Qwen2Config(**dims, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    if shape == "tiny":
        with torch.no_grad():
            # The EOS logit is then always 0 against ~400 random ones: generations run to
            # their length limit, so test timings do not depend on the random draw.
            model.lm_head.weight[tokenizer.eos_token_id].zero_()
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fakes.tiny_model", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="directory to write the model and tokenizer into (new)")
    parser.add_argument("--shape", choices=("tiny", *SHAPES), default="tiny",
                        help="tiny: 2 layers of width 32 (default); smollm2-135m, "
                        "qwen2.5-0.5b: that model's shape")
    parser.add_argument("--seed", type=int, default=0, help="weight initialisation seed")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        print(f"python -m bench.fakes.tiny_model: error: {out} exists and is not empty",
              file=sys.stderr)
        return 2
    print(build_tiny_model(out, shape=args.shape, seed=args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

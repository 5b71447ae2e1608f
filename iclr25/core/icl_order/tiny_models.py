"""Tiny random causal LMs of real architectures, with tokenizers built offline.

What a researcher points ``--model`` at is a Hugging Face folder of one of a few families;
these stand-ins exercise the very same loading and scoring path without a download:

* ``gpt2``: byte-level BPE (GPT-2's ``Ġ`` space marker, so ``' positive'`` is one token
  and ``'positive'`` another), no BOS, no pad token (the loader falls back to EOS);
* ``llama`` and ``mistral``: SentencePiece-style BPE (``▁`` space marker, byte fallback
  for ``\\n``), a BOS token prepended, grouped-query attention, rotary positions
  (Mistral with a sliding window);
* ``qwen2``: byte-level BPE with a pad token and no BOS, attention biases.

The tokenizers are trained with the ``tokenizers`` library on :data:`CORPUS` (a few
sentiment sentences in the ``Input: ...\\nLabel: ...`` format, so that ``positive`` and
``negative`` become whole words and rarer words split into pieces) and saved through
transformers' own tokenizer classes; the weights are random but seeded. A model is a
second or so to build. Used by the tests and the benchmark; nothing here is imported by
the command unless asked.
"""

from __future__ import annotations

import json
from pathlib import Path

ARCHITECTURES = ("gpt2", "llama", "qwen2", "mistral")

_POSITIVE = ("a great film", "very good acting", "I loved it", "wonderful and fun", "superb")
_NEGATIVE = ("an awful film", "very bad acting", "I hated it", "boring and slow", "dreadful")
#: labelled reviews (text, label word): a user task file for these models
REVIEWS = tuple((t, "positive") for t in _POSITIVE) + tuple((t, "negative") for t in _NEGATIVE)
REVIEWS += (("the plot was good", "positive"), ("the movie was bad", "negative"))
#: training text of the tokenizers: labelled reviews in two templates, and the label words
CORPUS = tuple(
    f"{head}: {text}\n{tail}: {label}\n"
    for head, tail in (("Input", "Label"), ("Review", "Sentiment"))
    for texts, label in ((_POSITIVE, "positive"), (_NEGATIVE, "negative"))
    for text in texts
) + ("positive negative neutral yes no", "the movie was good and the plot was bad")


def _train_bpe(byte_level: bool, specials: list[str], vocab_size: int):
    """(vocab, merges) of a BPE trained on :data:`CORPUS` (lines, repeated)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=None, byte_fallback=not byte_level))
    if byte_level:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace("▁", prepend_scheme="first")
        alphabet = []
    lines = [line for text in CORPUS for line in text.split("\n") if line] * 8
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer)
    model = json.loads(tokenizer.to_str())["model"]
    return model["vocab"], [tuple(m) for m in model["merges"]]


def build_tokenizer(arch: str):
    """The transformers tokenizer of a family, trained offline on :data:`CORPUS`."""
    from transformers import GPT2Tokenizer, LlamaTokenizer, Qwen2Tokenizer

    if arch == "gpt2":
        vocab, merges = _train_bpe(True, ["<|endoftext|>"], 400)
        return GPT2Tokenizer(vocab=vocab, merges=merges)
    if arch == "qwen2":
        vocab, merges = _train_bpe(True, ["<|endoftext|>"], 400)
        return Qwen2Tokenizer(vocab=vocab, merges=merges)
    if arch in ("llama", "mistral"):
        fallback = [f"<0x{i:02X}>" for i in range(256)]
        vocab, merges = _train_bpe(False, ["<unk>", "<s>", "</s>", *fallback], 600)
        return LlamaTokenizer(vocab=vocab, merges=merges, add_bos_token=True)
    raise ValueError(f"unknown architecture {arch!r}; use one of {ARCHITECTURES}")


def _config(arch: str, tokenizer):
    from transformers import GPT2Config, LlamaConfig, MistralConfig, Qwen2Config

    vocab = len(tokenizer)
    small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2)
    heads = dict(num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    ids = dict(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    if arch == "gpt2":
        return GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=4, n_positions=512, **ids)
    if arch == "llama":
        return LlamaConfig(vocab_size=vocab, **small, **heads, **ids)
    if arch == "mistral":
        return MistralConfig(vocab_size=vocab, sliding_window=64, **small, **heads, **ids)
    return Qwen2Config(vocab_size=vocab, tie_word_embeddings=True, **small, **heads, **ids)


def build_tiny_model(arch: str, path: Path, seed: int = 0) -> Path:
    """Save a random ``arch`` causal LM and its tokenizer to ``path`` (save_pretrained)."""
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = build_tokenizer(arch)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(_config(arch, tokenizer))
    path = Path(path)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path

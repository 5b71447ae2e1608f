"""Shared fixtures for the mufu tests: tiny random models built offline, one torch thread."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(autouse=True)
def single_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_world_model(path, n_layer: int = 1, n_embd: int = 32, seed: int = 0):
    """A random-init GPT-2 with the world's syllable tokenizer (the bundled model's files)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from iclr25.core.mufu.world import LANGUAGES, World
    from iclr25.core.mufu.world_tokenizer import build_tokenizer, display_names

    world = World()
    tok = build_tokenizer(world, path)
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=256,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(path)
    (path / "world.json").write_text(json.dumps({"seed": 0}))
    prompt = {
        "format": "plain",
        "target_lang": "tel",
        "aux_langs": ["sam", "ser", "dov"],
        "source_lang": "src",
        "names": display_names(),
        "languages": list(LANGUAGES),
    }
    (path / "mufu_prompt.json").write_text(json.dumps(prompt))
    return path


@pytest.fixture(scope="session")
def tiny_world_model(tmp_path_factory):
    return make_world_model(tmp_path_factory.mktemp("tiny-world-model"))


def make_seq2seq(path):
    """A random-init BART with a word-level tokenizer holding M2M-style language tokens."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    words = ["<pad>", "<s>", "</s>", "<unk>", "__tel__", "__sam__", "__ser__", "__fra__"]
    words += [f"w{i}" for i in range(40)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    fast.save_pretrained(path)
    torch.manual_seed(0)
    config = BartConfig(
        vocab_size=len(words),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_eos_token_id=2,
    )
    BartForConditionalGeneration(config).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_seq2seq(tmp_path_factory):
    return make_seq2seq(tmp_path_factory.mktemp("tiny-seq2seq"))

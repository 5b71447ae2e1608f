"""Shared fixtures for icl-order: the embedded model, a tiny Llama, the built-in task."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def single_thread():
    """One torch thread: the test machine is shared, and oversubscribed threads spin."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def lm():
    from iclr25.core.icl_order.models import ModelConfig, load_model

    return load_model(ModelConfig(batch_size=16))


@pytest.fixture(scope="session")
def task():
    from iclr25.core.icl_order.tasks import builtin_task

    return builtin_task("symbolic", seed=0)


@pytest.fixture(scope="session")
def encoded(lm, task):
    from iclr25.core.icl_order.prompts import encode_task

    return encode_task(lm.tokenizer, task)


@pytest.fixture(scope="session")
def varied(lm):
    """Texts of 1-3 words in the long template: segments of different lengths."""
    import numpy as np

    from iclr25.core.icl_order import synthetic
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import Task, Template

    examples = synthetic.sample_episode(np.random.default_rng(0), 64, 4, True)
    words = tuple(sorted({e.label for e in examples}))
    task = Task(
        "varied",
        tuple(e.text for e in examples),
        tuple(words.index(e.label) for e in examples),
        words,
        Template("Input: {text}\nLabel: {label}\n"),
    )
    assert len({len(t.split()) for t in task.texts}) == 3
    return encode_task(lm.tokenizer, task)


@pytest.fixture(scope="session")
def llama_dir(tmp_path_factory):
    """A tiny random Llama (rotary positions, grouped-query attention) saved with the
    embedded tokenizer: a second architecture through the same from_pretrained path."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from iclr25.core.icl_order.models import embedded_model_path

    path = tmp_path_factory.mktemp("tiny-llama")
    tokenizer = AutoTokenizer.from_pretrained(embedded_model_path(), local_files_only=True)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer.get_vocab()),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.bos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def llama(llama_dir):
    from iclr25.core.icl_order.models import ModelConfig, load_model

    return load_model(ModelConfig(model=str(llama_dir), batch_size=8))


@pytest.fixture(scope="session")
def tiny_dirs(tmp_path_factory):
    """Tiny random GPT-2, Llama, Qwen2 and Mistral folders with offline BPE tokenizers."""
    from iclr25.core.icl_order.tiny_models import ARCHITECTURES, build_tiny_model

    root = tmp_path_factory.mktemp("tiny-models")
    return {arch: build_tiny_model(arch, root / arch) for arch in ARCHITECTURES}


@pytest.fixture(scope="session")
def tiny_lms(tiny_dirs):
    from iclr25.core.icl_order.models import ModelConfig, load_model

    return {a: load_model(ModelConfig(model=str(p), batch_size=5)) for a, p in tiny_dirs.items()}


@pytest.fixture(scope="session")
def reviews():
    """``reviews(label_words)``: the tiny models' reviews in the default file template."""
    from iclr25.core.icl_order.tasks import Task, Template
    from iclr25.core.icl_order.tiny_models import REVIEWS

    def make(label_words=("positive", "negative")) -> Task:
        texts = tuple(t for t, _ in REVIEWS)
        labels = tuple(("positive", "negative").index(w) for _, w in REVIEWS)
        return Task("reviews", texts, labels, tuple(label_words), Template())

    return make

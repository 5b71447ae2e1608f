"""Batched greedy generation equals one-at-a-time generation; length errors."""

from __future__ import annotations

import pytest

from iclr25.core.mufu.generate import generate_causal, generate_seq2seq, lang_token_id
from iclr25.core.mufu.models import load
from iclr25.errors import InputError

PROMPTS = [
    "Translate into Tel.\nSrc: ROFF\nTel:",
    "Translate into Sam.\nSrc: ROFF FSTEU TGBLGV INPN\nSam:",
    "Translate into Dov.\nSrc: FSTEU\nDov:",
    "Correct the possibly inaccurate Tel draft using translations in related languages.\n"
    "Src: ROFF\nSam: cu\nTel draft: fu\nTel:",
]


def test_batched_equals_single(tiny_world_model):
    loaded = load(tiny_world_model, kinds=("causal",))
    batched = generate_causal(loaded, PROMPTS, max_new_tokens=12, batch_size=4)
    single = [generate_causal(loaded, [p], max_new_tokens=12, batch_size=1)[0] for p in PROMPTS]
    assert batched == single
    assert any(batched)  # a random model still says something


def test_prompt_too_long_names_length_and_k(tiny_world_model):
    loaded = load(tiny_world_model, kinds=("causal",))
    long_prompt = "Src: " + " ".join(["ROFF"] * 300) + "\nTel:"
    with pytest.raises(
        InputError,
        match=r"prompt of \d+ tokens plus 8 new tokens exceeds the model's 256 positions"
        r".*smaller --k \(now 5\)",
    ):
        generate_causal(loaded, [long_prompt], max_new_tokens=8, k=5)


def test_seq2seq_teacher_forces_the_language_token(tiny_seq2seq):
    loaded = load(tiny_seq2seq)
    assert loaded.kind == "seq2seq"
    assert lang_token_id(loaded.tokenizer, "tel") == loaded.tokenizer.get_vocab()["__tel__"]
    outs = generate_seq2seq(
        loaded, ["w1 w2 w3", "w4", "w5 w6"], "tel", max_new_tokens=6, batch_size=2
    )
    single = [
        generate_seq2seq(loaded, [s], "tel", max_new_tokens=6, batch_size=1)[0]
        for s in ["w1 w2 w3", "w4", "w5 w6"]
    ]
    assert outs == single and len(outs) == 3
    with pytest.raises(InputError, match="no token for language 'xyz'"):
        generate_seq2seq(loaded, ["w1"], "xyz")


def test_not_a_causal_lm_is_an_input_error(tiny_seq2seq, tmp_path):
    with pytest.raises(InputError, match="is a seq2seq model, not a causal LM"):
        load(tiny_seq2seq, kinds=("causal",))
    with pytest.raises(InputError, match="does not exist"):
        load(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no config.json"):
        load(tmp_path / "empty")

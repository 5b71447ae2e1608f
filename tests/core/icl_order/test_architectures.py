"""Real model families (GPT-2, Llama, Qwen2, Mistral) with their own BPE tokenizers:
label tokens with their leading space, multi-token labels, batched = single forwards and
prefix-cached = naive scores on every architecture."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from iclr25.core.icl_order.models import forward_tail
from iclr25.core.icl_order.prefix_cache import score_prefix_tree
from iclr25.core.icl_order.prompts import encode_task, label_tokens
from iclr25.core.icl_order.scoring import score_naive
from iclr25.core.icl_order.tiny_models import ARCHITECTURES
from iclr25.testing import assert_close

# a word outside the tokenizers' training corpus: several BPE pieces in every family
MULTI = ("positive", "dismal")


def test_label_words_take_their_leading_space(tiny_lms, reviews):
    # GPT-2 / Qwen2 byte-level BPE: " positive" is the token 'Ġpositive', not 'positive'
    for arch, marker in (("gpt2", "Ġ"), ("qwen2", "Ġ"), ("llama", "▁"), ("mistral", "▁")):
        tok = tiny_lms[arch].tokenizer
        ids = label_tokens(tok, reviews())
        assert [tok.convert_ids_to_tokens(t) for t in ids] == [
            [marker + "positive"],
            [marker + "negative"],
        ], arch
    gpt2 = tiny_lms["gpt2"].tokenizer
    assert gpt2.convert_tokens_to_ids("Ġpositive") != gpt2("positive")["input_ids"][0]


def test_llama_prompts_start_with_bos_and_gpt2_without(tiny_lms, reviews):
    llama = encode_task(tiny_lms["llama"].tokenizer, reviews())
    assert llama.prefix == [tiny_lms["llama"].tokenizer.bos_token_id]
    assert encode_task(tiny_lms["gpt2"].tokenizer, reviews()).prefix == []
    assert encode_task(tiny_lms["qwen2"].tokenizer, reviews()).prefix == []


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_batched_forward_equals_single_forwards(tiny_lms, reviews, arch):
    lm = tiny_lms[arch]
    encoded = encode_task(lm.tokenizer, reviews())
    seqs = [encoded.prompt(o, q) for o, q in (((0, 5), 3), ((7,), 2), ((), 11), ((1, 2, 6), 4))]
    assert len({len(s) for s in seqs}) == 4  # padding in every row but the longest
    logits, hidden = forward_tail(lm, seqs, tail=2, layer=-1)
    for row, seq in enumerate(seqs):
        one_logits, one_hidden = forward_tail(lm, [seq], tail=2, layer=-1)
        assert_close(logits[row], one_logits[0], rtol=1e-4, atol=1e-5, what=f"{arch} row {row}")
        assert_close(hidden[row], one_hidden[0], rtol=1e-4, atol=1e-5, what=f"{arch} row {row}")


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("words", [("positive", "negative"), MULTI])
def test_prefix_cache_equals_naive(tiny_lms, reviews, arch, words):
    lm = tiny_lms[arch]  # batch size 5: every level is chunked, leaves mix labels
    encoded = encode_task(lm.tokenizer, reviews(words))
    assert encoded.single_token_labels == (words != MULTI)
    orders = list(itertools.permutations([0, 5, 9, 2], 3))
    naive = score_naive(lm, encoded, orders, [11])
    assert np.isfinite(naive).all()
    assert_close(score_prefix_tree(lm, encoded, orders, [11]), naive, rtol=1e-4, atol=1e-4)
    several = [3, 11, 7]  # several queries share the cached orderings
    assert_close(
        score_prefix_tree(lm, encoded, orders[:8], several),
        score_naive(lm, encoded, orders[:8], several),
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_multi_token_label_is_the_mean_log_probability_of_its_tokens(tiny_lms, reviews, arch):
    """Known answer by a plain, unbatched forward of prompt + label tokens (teacher
    forcing): score(y) = mean_t log p(y_t | prompt, y_<t), self-adaptive ICL's averaged
    cross-entropy with the sign flipped."""
    import torch

    lm = tiny_lms[arch]
    encoded = encode_task(lm.tokenizer, reviews(MULTI))
    tokens = encoded.label_tokens
    assert len(tokens[0]) == 1 and len(tokens[1]) >= 2, tokens
    prompt = encoded.prompt((0, 6), 2)
    got = score_naive(lm, encoded, [(0, 6)], [2])[0, 0]  # (L,)
    for label, ids in enumerate(tokens):
        with torch.no_grad():
            logits = lm.model(torch.tensor([prompt + ids])).logits[0]  # (T, V)
        log_p = torch.log_softmax(logits.float(), dim=-1)
        start = len(prompt) - 1  # the position that predicts the label's first token
        want = np.mean([float(log_p[start + j, t]) for j, t in enumerate(ids)])
        assert_close(got[label], want, rtol=1e-5, atol=1e-5, what=f"{arch} label {label}")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_loads_and_scores_like_float32(tiny_dirs, tiny_lms, reviews, dtype):
    """--dtype: weights in that dtype; scores (log-probabilities) stay within half
    precision's rounding of float32's, cached or not."""
    import torch

    from iclr25.core.icl_order.models import ModelConfig, load_model

    lm = load_model(ModelConfig(model=str(tiny_dirs["llama"]), dtype=dtype, batch_size=5))
    assert next(lm.model.parameters()).dtype == getattr(torch, dtype)
    encoded = encode_task(lm.tokenizer, reviews(MULTI))
    orders = list(itertools.permutations([0, 5, 9], 3))
    reference = score_naive(tiny_lms["llama"], encoded, orders, [11])
    half = score_naive(lm, encoded, orders, [11])
    assert_close(half, reference, rtol=0, atol=0.05)
    assert_close(score_prefix_tree(lm, encoded, orders, [11]), half, rtol=0, atol=0.01)

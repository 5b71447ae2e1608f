"""Prompt embeddings equal a manual forward pass; orderings and their cap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.core.icl_order.embeddings import all_orderings, embed_orderings, embed_prompts
from iclr25.errors import UsageError
from iclr25.testing import assert_close


@pytest.mark.parametrize("layer", [-1, 2])
def test_embedding_equals_manual_forward(lm, encoded, layer):
    import torch

    demos, query = [4, 9, 21], 60
    orders = [(0, 1, 2), (2, 0, 1), (1, 2, 0)]
    got = embed_orderings(lm, encoded, demos, query, orders, layer=layer)
    for row, order in enumerate(orders):
        ids = (
            encoded.prefix
            + sum((encoded.demos[demos[i]] for i in order), [])
            + encoded.queries[query]
        )
        with torch.no_grad():
            out = lm.model(torch.tensor([ids]), output_hidden_states=True)
        assert_close(got[row], out.hidden_states[layer][0, -1].numpy(), rtol=1e-4, atol=1e-4)


def test_final_layer_is_what_the_lm_head_sees(lm, encoded):
    import torch

    x = embed_prompts(lm, [encoded.prompt((1, 2), 3)])
    with torch.no_grad():
        logits = lm.model.lm_head(torch.from_numpy(x))
        direct = lm.model(torch.tensor([encoded.prompt((1, 2), 3)])).logits[0, -1]
    assert_close(logits[0], direct, rtol=1e-4, atol=1e-4)


def test_layer_out_of_range(lm, encoded):
    with pytest.raises(UsageError, match="--layer 9"):
        embed_prompts(lm, [encoded.prompt((1,), 2)], layer=9)


def test_all_orderings_and_cap():
    rng = np.random.default_rng(0)
    assert len(all_orderings(4, 5040, False, rng)) == math.factorial(4)
    assert all_orderings(3, 6, False, rng)[0] == (0, 1, 2)
    with pytest.raises(UsageError, match="40,320 orderings") as info:
        all_orderings(8, 5040, False, rng)
    assert "--sample" in info.value.fix
    sample = all_orderings(8, 100, True, np.random.default_rng(1))
    assert len(sample) == len(set(sample)) == 100
    assert sample == all_orderings(8, 100, True, np.random.default_rng(1))
    assert all(sorted(o) == list(range(8)) for o in sample)


def test_orderings_cap_is_refused_before_any_enumeration():
    """k = 12 with the cap raised to 10^9 would list 479,001,600 permutations."""
    from iclr25.core.icl_order.cluster_analysis import ClusterConfig, validate

    with pytest.raises(UsageError, match="outside 2..40,320") as info:
        validate(ClusterConfig(k=12, max_orderings=10**9))
    assert "--sample" in info.value.fix
    validate(ClusterConfig(k=12, max_orderings=40_320, sample=True))  # a sample is fine

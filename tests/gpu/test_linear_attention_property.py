"""Property of the chunked linear attention (hypothesis), in its own file so that a machine
without hypothesis (scripts/gpu-check.sh on a bare GPU box) still collects the kernel tests
in test_linear_attention.py."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from iclr25.gpu.kernels.linear_attention import linear_attention_chunked
from iclr25.testing import assert_close


def _qkv(n: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(1, 1, n, 4, generator=gen, dtype=torch.float64) / 2 for _ in range(2))
    return q, k, torch.randn(1, 1, n, 3, generator=gen, dtype=torch.float64)


@given(st.integers(1, 40), st.floats(0.0, 3.0))
def test_property_outputs_are_linear_in_v_and_causal(n, slope):
    q, k, v = _qkv(n, seed=n)
    slopes = torch.tensor([slope], dtype=torch.float64)
    o = linear_attention_chunked(q, k, v, slopes, chunk=8)
    assert_close(
        linear_attention_chunked(q, k, 2.5 * v, slopes, chunk=8), 2.5 * o, rtol=1e-9, atol=1e-9
    )
    v2 = v.clone()
    v2[:, :, -1] += 1.0  # changing the last value cannot change earlier outputs
    o2 = linear_attention_chunked(q, k, v2, slopes, chunk=8)
    assert_close(o2[:, :, :-1], o[:, :, :-1], rtol=0, atol=1e-12)

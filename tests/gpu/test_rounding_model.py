"""The GPU tests' tolerances, checked against a CPU model of the kernels' rounding.

The attention kernel rounds P to 16 bits before P V and rounds O once; the linear
attention kernel rounds the intra-chunk P, the 16-bit copy of the state, the decayed V and
O. Emulating exactly those roundings in torch must stay well inside the tolerances the
gpu-marked tests use (so those tests are not flaky), while a kernel with a real bug — here a
decay applied one step off, or an unnormalised softmax row — must fall outside them.
"""

from __future__ import annotations

import math

import pytest
import torch

from iclr25.gpu.kernels.attention_bwd.reference import (
    attention_backward_reference,
    attention_grad_tolerance,
)
from iclr25.gpu.kernels.attention_fwd.reference import (
    attention_reference,
    attention_rms_tolerance,
    attention_tolerance,
)
from iclr25.gpu.kernels.gemm_bf16.reference import gemm_rms_tolerance
from iclr25.gpu.kernels.linear_attention.reference import (
    linear_attention_chunked,
    linear_attention_rms_tolerance,
    linear_attention_tolerance,
)
from iclr25.gpu.tolerance import compare

DTYPES = [torch.bfloat16, torch.float16]


def rnd(x, dtype):
    return x.to(dtype).float()


def attention_model(q, k, v, causal, dtype, bug=False):
    q, k, v = (t.float() for t in (q, k, v))
    n = q.shape[-2]
    s = (q @ k.mT) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    p = torch.exp(s - s.amax(-1, keepdim=True))
    row_sum = p.sum(-1, keepdim=True)
    if bug:  # e.g. a lost rescale: rows off by a few percent
        row_sum = row_sum * 1.05
    return rnd((rnd(p, dtype) @ v) / row_sum, dtype)


def linear_model(q, k, v, slopes, dtype, chunk=64, bug=False):
    b, h, n, dk = q.shape
    q, k, v = (t.float() for t in (q, k, v))
    lam = (torch.exp(-slopes) if slopes is not None else torch.ones(h))[None, :, None, None]
    out, state = torch.zeros(b, h, n, v.shape[-1]), torch.zeros(b, h, dk, v.shape[-1])
    for c0 in range(0, n, chunk):
        qc, kc, vc = q[:, :, c0 : c0 + chunk], k[:, :, c0 : c0 + chunk], v[:, :, c0 : c0 + chunk]
        i = torch.arange(qc.shape[2]).float()
        inter = (qc @ rnd(state, dtype)) * lam ** (i[:, None] + (2 if bug else 1))
        diff = i[:, None] - i[None, :]
        weights = torch.where(diff >= 0, lam ** diff.clamp(min=0), torch.zeros(()))
        out[:, :, c0 : c0 + chunk] = rnd(inter + rnd((qc @ kc.mT) * weights, dtype) @ vc, dtype)
        v_decayed = rnd(vc * lam ** (chunk - 1 - i)[:, None], dtype)  # (B, H, C, 1) factors
        state = state * lam**chunk + kc.mT @ v_decayed
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_rounding_model_sits_well_inside_the_tolerance(dtype, causal):
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 300, 64, generator=gen).to(dtype) for _ in range(3))
    expected = attention_reference(q, k, v, causal)[0]
    rtol, atol = attention_tolerance(dtype)
    bound = atol + rtol * expected.abs()
    assert ((attention_model(q, k, v, causal, dtype) - expected).abs() / bound).max() < 0.5
    assert ((attention_model(q, k, v, causal, dtype, bug=True) - expected).abs() / bound).max() > 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("decay", [False, True])
def test_linear_attention_rounding_model_sits_well_inside_the_tolerance(dtype, decay):
    gen = torch.Generator().manual_seed(2)
    q, k = (torch.randn(1, 2, 300, 64, generator=gen) / 8 for _ in range(2))
    q, k, v = q.to(dtype), k.to(dtype), torch.randn(1, 2, 300, 64, generator=gen).to(dtype)
    slopes = torch.tensor([0.05, 0.6]) if decay else None
    expected = linear_attention_chunked(q.float(), k.float(), v.float(), slopes)
    bound = linear_attention_tolerance(dtype) * float(expected.abs().max())
    assert float((linear_model(q, k, v, slopes, dtype) - expected).abs().max()) < 0.5 * bound
    if decay:  # lambda^(i+2) instead of lambda^(i+1) on the inter-chunk term
        assert (
            float((linear_model(q, k, v, slopes, dtype, bug=True) - expected).abs().max()) > bound
        )


# --- the row-RMS bounds gpu-bench checks every row with ---------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("n", "causal"), [(300, False), (300, True), (1500, True)])
def test_attention_model_sits_inside_the_rms_bound_and_a_bug_falls_outside(dtype, n, causal):
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, n, 64, generator=gen).to(dtype) for _ in range(3))
    expected = attention_reference(q, k, v, causal)[0]
    tol = attention_rms_tolerance(dtype)
    assert compare("O", attention_model(q, k, v, causal, dtype), expected, tol).error_ratio < 0.6
    bug = attention_model(q, k, v, causal, dtype, bug=True)
    assert compare("O", bug, expected, tol).error_ratio > 3


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("decay", [False, True])
def test_linear_attention_model_sits_inside_the_rms_bound(dtype, decay):
    gen = torch.Generator().manual_seed(2)
    q, k = (torch.randn(1, 2, 600, 64, generator=gen) / 8 for _ in range(2))
    q, k, v = q.to(dtype), k.to(dtype), torch.randn(1, 2, 600, 64, generator=gen).to(dtype)
    slopes = torch.tensor([0.05, 0.6]) if decay else None
    expected = linear_attention_chunked(q.float(), k.float(), v.float(), slopes)
    tol = linear_attention_rms_tolerance(dtype)
    got = linear_model(q, k, v, slopes, dtype)
    assert compare("O", got, expected, tol).error_ratio < 0.6
    if decay:
        bug = linear_model(q, k, v, slopes, dtype, bug=True)
        assert compare("O", bug, expected, tol).error_ratio > 10


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_rms_bound_holds_one_rounding_and_rejects_a_scaled_product(dtype):
    gen = torch.Generator().manual_seed(3)
    a, b = (torch.randn(200, 200, generator=gen).to(dtype) for _ in range(2))
    exact = a.float() @ b.float()
    tol = gemm_rms_tolerance(dtype)
    assert compare("C", rnd(exact, dtype), exact, tol).error_ratio < 0.6
    assert compare("C", rnd(exact * (1 + 8 * (2.0**-8)), dtype), exact, tol).error_ratio > 1


def attention_backward_model(q, k, v, do, causal, dtype, bug=None):
    """The backward kernels' roundings: O from the forward model (16-bit), P and dS rounded
    as mma operands, dQ, dK, dV rounded once; ``bug``: Delta or the scale 5% off."""
    n, d = q.shape[-2], q.shape[-1]
    scale = 1 / math.sqrt(d)
    o = attention_model(q, k, v, causal, dtype)
    qf, kf, vf, dof = (t.float() for t in (q, k, v, do))
    s = scale * qf @ kf.mT
    if causal:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    p = torch.softmax(s, -1)
    delta = (dof * o.float()).sum(-1, keepdim=True) * (1.05 if bug == "delta" else 1)
    ds = p * (dof @ vf.mT - delta)
    step = scale * (1.05 if bug == "scale" else 1)
    dq = rnd(step * (rnd(ds, dtype) @ kf), dtype)
    dk = rnd(step * (rnd(ds, dtype).mT @ qf), dtype)
    dv = rnd(rnd(p, dtype).mT @ dof, dtype)
    return o, (dq, dk, dv)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("heads", "n", "causal"), [(2, 300, False), (2, 300, True), (1, 900, True)]
)
def test_backward_model_sits_inside_the_gradient_bound_and_bugs_fall_outside(
    dtype, heads, n, causal
):
    gen = torch.Generator().manual_seed(1)
    q, k, v, do = (torch.randn(1, heads, n, 64, generator=gen).to(dtype) for _ in range(4))
    o, got = attention_backward_model(q, k, v, do, causal, dtype)
    exact = attention_backward_reference(q, k, v, do, causal, dtype=torch.float64, o=o)
    tol = attention_grad_tolerance(dtype)
    for name, ours, ref in zip(("dQ", "dK", "dV"), got, exact, strict=True):
        assert compare(name, ours, ref, tol).error_ratio < 0.3, name
    for bug in ("delta", "scale"):
        wrong = attention_backward_model(q, k, v, do, causal, dtype, bug)[1]
        pairs = zip(wrong[:2], exact[:2], strict=True)  # dQ and dK
        assert max(compare("dQ", w, e, tol).error_ratio for w, e in pairs) > 1.2

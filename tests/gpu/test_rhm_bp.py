"""The rhm_bp kernel: its plain reference against the numpy path (always), the kernel
against the numpy path (on a CUDA device)."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.diffusion_probe import bp
from iclr25.core.diffusion_probe.noise import leaf_messages
from iclr25.core.diffusion_probe.rhm import Grammar, RHMSpec, generate, sample_rules
from iclr25.gpu.kernels.rhm_bp import SPEC, bp_sample_reference, flatten


def _case(v, m, s, depth, n, noise="flip", level=0.4, seed=0):
    rng = np.random.default_rng(seed)
    grammar = sample_rules(RHMSpec(v, m, s, depth), rng)
    x0, _ = generate(grammar, n, rng)
    msg, _ = leaf_messages(noise, x0, v, level, rng)
    return grammar, msg, rng.random((n, bp.uniforms_per_datum(grammar)))


def _numpy(grammar: Grammar, msg, uniforms):
    msgs = bp.upward(grammar, msg)
    leaves, root = bp.sample(grammar, msgs, uniforms)
    flat = np.concatenate([m.reshape(len(msg), -1) for m in msgs], axis=1)
    return leaves, root, flat


@pytest.mark.parametrize("shape", [(3, 2, 2, 2), (9, 6, 3, 3), (4, 3, 2, 4)])
@pytest.mark.parametrize("noise", ["flip", "mask", "soft"])
def test_reference_equals_the_numpy_path(shape, noise):
    grammar, msg, u = _case(*shape, n=40, noise=noise)
    ref = bp_sample_reference(msg, grammar.rules, grammar.weights, grammar.vocab, grammar.s, u)
    got = _numpy(grammar, msg, u)
    np.testing.assert_allclose(ref[2], got[2], atol=1e-12)
    assert (ref[1] == got[1]).all() and (ref[0] == got[0]).mean() >= 0.999


def test_flatten_layout():
    grammar = sample_rules(RHMSpec(3, 2, 2, 2), np.random.default_rng(1))
    rules, weights, meta, total = flatten(grammar.rules, grammar.weights, grammar.vocab, 2)
    assert meta[:, 0].tolist() == [3, 3, 3] and meta[:2, 1].tolist() == [2, 2]
    assert meta[:, 4].tolist() == [0, 3, 9] and total == 3 + 6 + 12
    assert rules.size == 2 * 3 * 2 * 2 and weights.size == 2 * 3 * 2
    assert SPEC.name == "rhm_bp"


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(3, 2, 2, 2), (9, 6, 3, 4), (8, 4, 3, 5)])
@pytest.mark.parametrize("noise", ["flip", "mask", "soft"])
def test_kernel_equals_the_numpy_path(shape, noise):
    from iclr25.gpu.kernels.rhm_bp import rhm_bp_cuda

    grammar, msg, u = _case(*shape, n=500, noise=noise)
    leaves, root, messages = rhm_bp_cuda(
        msg, grammar.rules, grammar.weights, grammar.vocab, grammar.s, u, return_messages=True
    )
    want = _numpy(grammar, msg, u)
    np.testing.assert_allclose(messages, want[2], atol=1e-5)
    assert (leaves == want[0]).mean() >= 0.999 and (root == want[1]).mean() >= 0.999

"""Exact BP denoiser of tree grammars on the GPU: one block per datum.

``rhm_bp_cuda(leaf, rules, weights, vocab, s, uniforms)`` runs the upward pass and the
posterior sampling of ``iclr25/core/diffusion_probe/bp.py`` on the device, drawing from
the same uniforms, and returns (leaves (n, d), root (n,)) as numpy arrays (with
``return_messages=True`` also the normalised messages of every level, float32, in the
layout of :func:`reference.flatten`). Grammars are passed as plain arrays (``rules[ℓ]``
(n_ℓ, m, s), ``weights[ℓ]`` (n_ℓ, m), ``vocab``): this package imports nothing from
``iclr25.core``. Messages are float32 (numpy: float64), so a draw can differ where two
cumulative sums straddle a uniform; tests require ≥ 99.9 % equal tokens and messages to
1e-5. Data are processed in chunks whose scratch fits :data:`SCRATCH_BYTES`.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.rhm_bp.reference import bp_sample_reference, flatten
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="rhm_bp",
    package=__name__,
    description="RHM belief propagation + posterior sampling, one block per datum (fp32)",
)
THREADS = 128
SCRATCH_BYTES = 512 * 2**20


def rhm_bp_cuda(leaf, rules, weights, vocab, s, uniforms, prior=None, return_messages=False):
    """The kernel (module docstring); inputs numpy or CuPy, outputs numpy."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    depth = len(rules)
    d = s**depth
    rules_flat, weights_flat, meta, total = flatten(rules, weights, vocab, s)
    leaf = cp.asarray(leaf, dtype=cp.float32)  # (n, d, v)
    n = leaf.shape[0]
    if leaf.shape[1:] != (d, vocab[-1]):
        raise ValueError(f"leaf messages must be (n, {d}, {vocab[-1]}), got {leaf.shape}")
    uniforms = cp.asarray(uniforms, dtype=cp.float64)
    prior = np.full(vocab[0], 1.0 / vocab[0]) if prior is None else np.asarray(prior)
    args_const = (
        cp.asarray(rules_flat),
        cp.asarray(weights_flat),
        cp.asarray(meta.ravel()),
        cp.asarray(prior, dtype=cp.float32),
    )
    kernel = load_module(SPEC.name).get_function("rhm_bp_sample")
    chunk = max(1, SCRATCH_BYTES // (4 * total))
    leaves = cp.zeros((n, d), dtype=cp.int64)
    roots = cp.zeros(n, dtype=cp.int64)
    messages = np.zeros((n, total), np.float32) if return_messages else None
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        scratch = cp.zeros((stop - start, total), dtype=cp.float32)
        args = (
            cp.ascontiguousarray(leaf[start:stop]),
            *args_const,
            cp.ascontiguousarray(uniforms[start:stop]),
            scratch,
            np.int32(stop - start),
            np.int32(depth),
            np.int32(s),
            np.int32(d),
            np.int32(total),
            np.int32(uniforms.shape[1]),
            leaves[start:stop],
            roots[start:stop],
        )
        kernel((stop - start,), (THREADS,), args, shared_mem=2 * d * 4)
        if return_messages:
            messages[start:stop] = scratch.get()
    out = (leaves.get(), roots.get())
    return (*out, messages) if return_messages else out


__all__ = ["SPEC", "rhm_bp_cuda", "bp_sample_reference", "flatten"]

"""The forward (noising) processes on tokens, as leaf evidence for the exact denoiser.

Each returns the leaf messages λ_i(a) ∝ p(x_t,i | x_0,i = a), shape (n, d, v):

- ``mask`` (absorbing diffusion, MDLM-like): each token is masked with probability q;
  a masked leaf gets the uniform message, an unmasked one the one-hot of its token;
- ``flip`` (uniform substitution, D3PM-uniform): x_t,i = x_0,i with probability 1 − ε,
  otherwise a uniformly drawn symbol (possibly the same). x_t is *sampled*; the message
  is the likelihood (1 − ε)·1[a = x_t,i] + ε/v;
- ``soft`` (the "ε-process" of public RHM BP code): every leaf gets
  (1 − ε)·onehot(x_0,i) + ε/v, centred on the clean token; nothing is sampled.

``level`` is q or ε in [0, 1]; level 0 pins every leaf, level 1 leaves no information.
Uniforms come from ``rng`` in a fixed order, so a seed fixes x_t.
"""

from __future__ import annotations

import numpy as np

NOISES = ("flip", "mask", "soft")


def leaf_messages(noise: str, x0: np.ndarray, v: int, level: float, rng: np.random.Generator):
    """(messages (n, d, v) float64, noisy tokens x_t (n, d) or None for soft)."""
    n, d = x0.shape
    onehot = np.zeros((n, d, v))
    if noise == "soft":
        np.put_along_axis(onehot, x0[..., None], 1.0, axis=-1)
        return (1.0 - level) * onehot + level / v, None
    if noise == "mask":
        masked = rng.random((n, d)) < level
        np.put_along_axis(onehot, x0[..., None], 1.0, axis=-1)
        onehot[masked] = 1.0 / v
        xt = np.where(masked, -1, x0)  # -1 = the mask token
        return onehot, xt
    if noise == "flip":
        replace = rng.random((n, d)) < level
        random_symbol = rng.integers(0, v, size=(n, d))
        xt = np.where(replace, random_symbol, x0)
        msg = np.full((n, d, v), level / v)
        np.put_along_axis(msg, xt[..., None], 1.0 - level + level / v, axis=-1)
        return msg, xt
    raise ValueError(f"unknown noise {noise!r}; choose from {', '.join(NOISES)}")

"""Matérn Gaussian random fields on a 2-D grid by circulant embedding (exact sampling).

The covariance of a stationary field on a regular grid of ``n × n`` points (spacing h) is
block-Toeplitz with Toeplitz blocks; it embeds in a block-circulant matrix on a periodic
grid of ``M × M`` points (M ≥ 2(n − 1)), whose eigenvalues are the 2-D FFT of its first
row (Dietrich & Newsam 1997). When they are all ≥ 0 (up to rounding), a complex Gaussian
vector scaled by √eigenvalue and transformed back gives, in its real and imaginary parts,
two independent exact draws of the field on the torus, whose n × n corner has exactly the
Matérn covariance. Negative eigenvalues mean the embedding is too small: M is doubled
(up to :data:`MAX_DOUBLINGS` times). The kernel is :func:`.grf.matern_kernel` of the
Euclidean distance.

Building block for ``--dim 2`` (issue 27); not wired into problems or commands yet.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.pi_dion import grf

MAX_DOUBLINGS = 4
NEGATIVE_TOL = 1e-10  # relative: eigenvalues above −tol·max are rounding, set to 0


def embedding_eigenvalues(n: int, h: float, nu: float, ell: float) -> np.ndarray:
    """√-ready eigenvalues (M, M) of the smallest valid circulant embedding."""
    size = 2 * (n - 1)
    for _ in range(MAX_DOUBLINGS + 1):
        k = np.arange(size)
        dist = np.minimum(k, size - k) * h  # (M,) periodic distance along one axis
        r = np.hypot(dist[:, None], dist[None, :])  # (M, M)
        eig = np.fft.fft2(grf.matern_kernel(r, nu, ell)).real
        if eig.min() >= -NEGATIVE_TOL * eig.max():
            return np.maximum(eig, 0.0)
        size *= 2
    raise ValueError(f"no nonnegative circulant embedding up to {size // 2} points for "
                     f"ν = {nu}, ℓ = {ell}")  # fmt: skip


def sample(n: int, count: int, nu: float, ell: float, rng: np.random.Generator) -> np.ndarray:
    """``count`` draws of f on the n × n grid of [0, 1]² (spacing 1/(n − 1)) → (count, n, n)."""
    eig = embedding_eigenvalues(n, 1.0 / (n - 1), nu, ell)
    size = eig.shape[0]
    pairs = (count + 1) // 2
    out = np.empty((2 * pairs, n, n))
    chunk = max(1, 2**22 // size**2)  # pairs per FFT batch (≈ 64 MB of complex numbers)
    for start in range(0, pairs, chunk):
        k = min(chunk, pairs - start)
        z = rng.standard_normal((2, k, size, size))
        field = np.fft.fft2(np.sqrt(eig / size**2) * (z[0] + 1j * z[1]))  # (k, M, M)
        out[2 * start : 2 * (start + k) : 2] = field.real[:, :n, :n]
        out[2 * start + 1 : 2 * (start + k) : 2] = field.imag[:, :n, :n]
    return out[:count]

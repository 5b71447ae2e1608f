"""Matérn Gaussian random fields on a 1-D grid (the prior of the unknown source f).

k(r) = σ² 2^{1-ν}/Γ(ν) (√(2ν) r/ℓ)^ν K_ν(√(2ν) r/ℓ), with the closed forms for
ν = 1/2, 3/2, 5/2. Samples are drawn exactly (Cholesky of the covariance matrix on the
grid), so the Bayes reference in :mod:`.bayes` uses the very prior the data came from.
"""

from __future__ import annotations

import numpy as np

from iclr25.errors import UsageError

JITTER = 1e-10  # relative diagonal jitter for the Cholesky factor


def matern_kernel(r: np.ndarray, nu: float, ell: float, sigma: float = 1.0) -> np.ndarray:
    """k(r) for distances ``r`` ≥ 0 (any shape)."""
    if nu <= 0 or ell <= 0:
        raise UsageError(
            f"Matérn ν = {nu}, ℓ = {ell} must be positive", "use e.g. --nu 2.5 --ell 0.2"
        )
    s = np.abs(np.asarray(r, np.float64)) / ell
    if nu == 0.5:
        return sigma**2 * np.exp(-s)
    if nu == 1.5:
        a = np.sqrt(3.0) * s
        return sigma**2 * (1 + a) * np.exp(-a)
    if nu == 2.5:
        a = np.sqrt(5.0) * s
        return sigma**2 * (1 + a + a**2 / 3) * np.exp(-a)
    from scipy.special import gamma, kv

    a = np.sqrt(2 * nu) * s
    with np.errstate(invalid="ignore"):
        k = sigma**2 * 2 ** (1 - nu) / gamma(nu) * a**nu * kv(nu, a)
    return np.where(a == 0, sigma**2, k)


def covariance(x: np.ndarray, nu: float, ell: float, sigma: float = 1.0) -> np.ndarray:
    """C_ij = k(|x_i − x_j|) for grid points ``x`` (n,) → (n, n)."""
    return matern_kernel(x[:, None] - x[None, :], nu, ell, sigma)


def sample(x: np.ndarray, n: int, nu: float, ell: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of f on the grid ``x`` → (n, len(x))."""
    cov = covariance(x, nu, ell)
    chol = np.linalg.cholesky(cov + JITTER * np.eye(len(x)))
    return rng.standard_normal((n, len(x))) @ chol.T

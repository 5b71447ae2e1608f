"""What changes together after a forward-backward run (Sclocchi et al., ICLR 2025, Sec. 3).

For n runs (each from its own datum x_0), σ (n, d) holds the change indicators
σ_i = 1[x̂_0,i ≠ x_0,i]. Paper symbols -> code:

    C(r, t)        -> :func:`correlation_by_distance` (mean over i of Cov(σ_i, σ_{i+r}),
                      per-position means; r = 0 is the mean variance)
    C by height h  -> :func:`correlation_by_height` (pairs whose lowest common ancestor in
                      the tree is at height h, h = 1..L; block-sum variances, exact)
    χ(t)           -> ``chi`` = Var(Σ_i σ_i) / d (the sum of C(r) over both signs of r)
    χ̃(t)           -> ``chi_norm`` = χ / mean_i Var(σ_i): 1 for independent changes. Raw χ
                      peaks where the change probability is 1/2 even without any
                      correlation, so every verdict uses χ̃. Undefined (None) when no
                      token ever changes (mean variance 0).

Variances are over runs with the unbiased (n − 1) normaliser.
"""

from __future__ import annotations

import math

import numpy as np


def change_stats(sigma: np.ndarray) -> dict:
    """``change_fraction``, ``chi``, ``chi_norm`` of change indicators σ (n, d)."""
    n, d = sigma.shape
    s = sigma.astype(np.float64)
    total = s.sum(axis=1)  # (n,)
    chi = float(total.var(ddof=1)) / d if n > 1 else math.nan
    mean_var = float(s.var(axis=0, ddof=1).mean()) if n > 1 else math.nan
    return {
        "change_fraction": float(s.mean()),
        "chi": chi,
        "chi_norm": chi / mean_var if mean_var > 0 else None,
    }


def correlation_by_distance(sigma: np.ndarray, max_r: int | None = None) -> list[float]:
    """C(r) for r = 0..max_r (default d − 1), via the FFT autocorrelation of centred σ."""
    n, d = sigma.shape
    centred = sigma.astype(np.float64) - sigma.mean(axis=0)  # per-position means
    size = 1 << (2 * d - 1).bit_length()
    spectrum = np.fft.rfft(centred, n=size, axis=1)
    auto = np.fft.irfft((spectrum * spectrum.conj()).sum(axis=0), n=size)[:d]  # Σ_runs Σ_i
    pairs = d - np.arange(d)  # positions i with i + r < d
    c = auto / (pairs * max(n - 1, 1))
    upto = d - 1 if max_r is None else min(max_r, d - 1)
    return [float(x) for x in c[: upto + 1]]


def correlation_by_height(sigma: np.ndarray, s: int) -> list[float]:
    """Mean Cov(σ_i, σ_j) over ordered pairs i ≠ j whose lowest common ancestor is at
    height h = 1..L (blocks of s^h leaves): the block-variance identity
    Σ_{i,j in a block} Cov = Var(block sum), differenced between heights."""
    n, d = sigma.shape
    depth = round(math.log(d, s))
    x = sigma.astype(np.float64)
    within = [float(x.var(axis=0, ddof=1).sum())]  # height 0: Σ_i Var σ_i
    for h in range(1, depth + 1):
        blocks = x.reshape(n, d // s**h, s**h).sum(axis=2)  # (n, blocks)
        within.append(float(blocks.var(axis=0, ddof=1).sum()))
    return [(within[h] - within[h - 1]) / (d * (s**h - s ** (h - 1))) for h in range(1, depth + 1)]


def class_midpoint(levels: list[float], class_change: list[float], classes: int) -> float | None:
    """The noise level where P(class changed) first reaches half its maximum (1 − 1/n_c)/2,
    by linear interpolation between grid points (None when it never does)."""
    half = 0.5 * (1.0 - 1.0 / classes)
    for i in range(1, len(levels)):
        a, b = class_change[i - 1], class_change[i]
        if a < half <= b:
            return float(levels[i - 1] + (half - a) * (levels[i] - levels[i - 1]) / (b - a))
    if class_change and class_change[0] >= half:
        return float(levels[0])
    return None


def peak_level(levels: list[float], values: list[float | None]) -> tuple[float, float] | None:
    """(centroid of the levels whose value is within 10 % of the maximum, the maximum)."""
    pairs = [(lv, v) for lv, v in zip(levels, values, strict=True) if v is not None]
    if not pairs:
        return None
    top = max(v for _, v in pairs)
    near = [lv for lv, v in pairs if v >= 0.9 * top]
    return float(np.mean(near)), float(top)

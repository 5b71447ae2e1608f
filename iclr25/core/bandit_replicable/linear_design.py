"""Building blocks of the linear batched algorithm: G-optimal designs, integer counts, and
replicable (pigeonhole) rounding of a least-squares estimate.

- :func:`g_optimal_design`: the Kiefer–Wolfowitz design π on a finite set of arms
  (maximal a^T V(π)^{-1} a equals the rank; Lattimore & Szepesvári, *Bandit Algorithms*,
  Thm 21.1), by the multiplicative algorithm. Deterministic.
- :func:`design_counts`: π → integer pull counts for a batch of L rounds (floor, then the
  largest remainders, ties to the lowest index). Deterministic.
- :func:`pigeonhole_round`: rounds θ̂ coordinate-wise on a grid of spacing s_i, shifted by
  one of 2d+1 offsets o_j = j/(2d+1), choosing the first offset for which no coordinate
  lies within η_i of a rounding boundary. With |θ̂_i - θ_i| ≤ η_i, θ and θ̂ round to the
  same point, so the rounded θ̃ is a function of (θ, j): 2d+1 possible outcomes.
"""

from __future__ import annotations

import numpy as np

#: η_i / s_i: each coordinate blocks at most 2 of the 2d+1 offsets (an arc of length
#: 2·0.9/(2d+1) < 2 grid steps), so d coordinates leave at least one offset free
BLOCK_FRACTION = 0.9


def g_optimal_design(features: np.ndarray, iters: int = 2000, tol: float = 1e-3) -> np.ndarray:
    """π over the rows of ``features`` (n, d) with max_a a^T V(π)^+ a ≤ (1 + tol) · rank.

    The multiplicative algorithm π_a ← π_a g_a / rank (Silvey, Titterington & Torsney 1978),
    which increases det V(π) monotonically; by the Kiefer–Wolfowitz theorem the D-optimal
    design is G-optimal, with max_a g_a = rank."""
    n, d = features.shape
    rank = max(1, int(np.linalg.matrix_rank(features)))
    pi = np.full(n, 1.0 / n)
    for _ in range(iters):
        v = features.T @ (pi[:, None] * features)  # (d, d) V(π)
        g = np.einsum("ij,jk,ik->i", features, np.linalg.pinv(v, hermitian=True), features)
        if g.max() <= rank * (1.0 + tol):
            break
        pi = pi * g / rank
        pi /= pi.sum()
    return pi


def design_counts(pi: np.ndarray, rounds: int) -> np.ndarray:
    """Integer counts summing to ``rounds``: ⌊π L⌋ plus the largest remainders."""
    raw = pi * rounds
    counts = np.floor(raw).astype(np.int64)
    left = int(rounds - counts.sum())
    if left > 0:
        order = np.argsort(-(raw - counts), kind="stable")  # largest remainder, lowest index
        counts[order[:left]] += 1
    return counts


def offsets(dim: int) -> np.ndarray:
    return np.arange(2 * dim + 1) / (2 * dim + 1)  # (2d+1,) o_j


def pigeonhole_round(theta_hat: np.ndarray, eta: np.ndarray):
    """Replicable rounding of θ̂ (runs, d) with accuracies η (runs, d).

    Returns (θ̃ (runs, d), offset index j (runs,), lattice integers (runs, d), spacing s)."""
    dim = theta_hat.shape[1]
    spacing = eta * (2 * dim + 1) / BLOCK_FRACTION  # (runs, d) s_i
    o = offsets(dim)
    z = theta_hat[:, :, None] / spacing[:, :, None] - o[None, None, :]  # (runs, d, 2d+1)
    to_boundary = np.abs(z - np.floor(z) - 0.5)  # distance to the nearest half-integer
    halfwidth = (eta / spacing)[:, :, None]
    blocked = (to_boundary <= halfwidth).any(axis=1)  # (runs, 2d+1)
    choice = np.argmax(~blocked, axis=1)  # first free offset; one always exists
    rows = np.arange(theta_hat.shape[0])
    lattice = np.round(z[rows, :, choice]).astype(np.int64)  # (runs, d)
    theta_tilde = spacing * (lattice + o[choice][:, None])
    return theta_tilde, choice, lattice, spacing


def group_rows(matrix: np.ndarray):
    """Distinct rows and, for each row, the index of its distinct row."""
    uniques, inverse = np.unique(matrix, axis=0, return_inverse=True)
    return uniques, inverse.reshape(-1)

"""The exact Bayes posterior mean E[f | d] for the linear–Gaussian problems (the floor).

Prior f ~ N(0, C) on the fine grid, data d = H f + e, e ~ N(0, σ² I) (H = sensors ∘ FD
solve, :func:`.problem.operators`). Then E[f | d] = C Hᵀ (H C Hᵀ + σ² I)⁻¹ d, the
minimum-mean-square-error estimate: no method can have a lower expected nMSE. The same
formula with the prior cross-covariance of u gives E[u | d].
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from iclr25.core.pi_dion import fd
from iclr25.core.pi_dion.problem import Operators, Problem, fine_cells


def gain(ops: Operators) -> np.ndarray:
    """K = C Hᵀ (H C Hᵀ + σ² I)⁻¹ restricted to the 129-point grid → (129, m)."""
    chc = ops.forward @ ops.prior_cov @ ops.forward.T  # (m, m)
    chc += (ops.noise_std**2 + 1e-12 * np.trace(chc) / len(chc)) * np.eye(len(chc))
    cross = ops.prior_cov[ops.to_grid] @ ops.forward.T  # (129, m)
    return sla.solve(chc, cross.T, assume_a="pos").T


def state_gain(p: Problem, ops: Operators) -> np.ndarray:
    """The gain for u: Cov(u_grid, d) (H C Hᵀ + σ² I)⁻¹ → (129, m)."""
    n_fine = fine_cells() - 1
    solve_mat = np.linalg.inv(fd.operator(n_fine, p.c).toarray())
    u_of_f = np.zeros((n_fine + 2, n_fine + 2))
    u_of_f[1:-1, 1:-1] = solve_mat  # (513, 513): f ↦ u on the full fine grid
    chc = ops.forward @ ops.prior_cov @ ops.forward.T
    chc += (ops.noise_std**2 + 1e-12 * np.trace(chc) / len(chc)) * np.eye(len(chc))
    cross = u_of_f[ops.to_grid] @ ops.prior_cov @ ops.forward.T  # (129, m)
    return sla.solve(chc, cross.T, assume_a="pos").T


def posterior_mean(d: np.ndarray, k_gain: np.ndarray) -> np.ndarray:
    """E[· | d] on the grid for data ``d`` (N, m) → (N, 129)."""
    return d @ k_gain.T

"""Tikhonov regularisation on the FD grid with α by the discrepancy principle.

Unknown: u on the 127 interior points of the 129-point grid (h = 1/128); f = 𝓛_h u.
Estimate: min_u ‖S u − d‖² + α ‖h⁴ D² 𝓛_h u‖² (S: linear interpolation to the sensors,
D²: second difference of f, so smooth sources are cheap), α per instance such that
‖S u_α − d‖² = τ m σ² (Morozov's discrepancy principle, τ = 1).

All α at once: with B = SᵀS + PᵀP (P = h⁴ D² 𝓛_h) the generalised eigenvectors V of
(SᵀS, B) diagonalise both, so u_α = V (Vᵀ Sᵀ d) / (λ + α(1 − λ)) and the residual of
every instance is a vectorised function of its own α; bisection in log α runs on all
instances together. f at x = 0, 1 (not determined by 𝓛_h u) is extrapolated linearly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from iclr25.core.pi_dion import fd
from iclr25.core.pi_dion.problem import GRID_CELLS

LOG_ALPHA_RANGE = (-30.0, 10.0)
BISECTIONS = 60


@dataclass(frozen=True)
class TikhonovSolver:
    v: np.ndarray  # (n, n) generalised eigenvectors, Vᵀ B V = I
    lam: np.ndarray  # (n,) eigenvalues of SᵀS relative to B, in [0, 1]
    sv: np.ndarray  # (m, n) S V
    s: np.ndarray  # (m, n) S
    lap: np.ndarray  # (n, n) 𝓛_h


def build(sensors: np.ndarray, c: float) -> TikhonovSolver:
    n = GRID_CELLS - 1
    h = 1.0 / GRID_CELLS
    s = fd.interpolation(n, sensors)  # (m, n)
    lap = fd.operator(n, c).toarray()
    d2 = (np.eye(n, k=-1) - 2 * np.eye(n) + np.eye(n, k=1))[1:-1] / h**2  # (n-2, n)
    p = h**4 * d2 @ lap
    sts, ptp = s.T @ s, p.T @ p
    lam, v = sla.eigh(sts, sts + ptp)
    return TikhonovSolver(v, np.clip(lam, 0.0, 1.0), s @ v, s, lap)


def _coefficients(solver: TikhonovSolver, c: np.ndarray, log_alpha: np.ndarray) -> np.ndarray:
    alpha = 10.0 ** log_alpha[:, None]
    return c / (solver.lam + alpha * (1 - solver.lam))  # (N, n)


def choose_alpha(solver: TikhonovSolver, d: np.ndarray, noise_std: float) -> np.ndarray:
    """log10 α per instance with ‖S u_α − d‖² = m σ² (bisection; clipped to the range)."""
    c = d @ solver.sv  # (N, n) = Vᵀ Sᵀ d per instance
    target = d.shape[1] * noise_std**2
    lo = np.full(len(d), LOG_ALPHA_RANGE[0])
    hi = np.full(len(d), LOG_ALPHA_RANGE[1])
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        resid = ((_coefficients(solver, c, mid) @ solver.sv.T - d) ** 2).sum(1)
        too_rough = resid < target  # residual grows with α: room for more smoothing
        lo = np.where(too_rough, mid, lo)
        hi = np.where(too_rough, hi, mid)
    return (lo + hi) / 2


def solve(
    solver: TikhonovSolver, d: np.ndarray, log_alpha: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(f, u) on the 129-point grid for data ``d`` (N, m) and log10 α (N,)."""
    c = d @ solver.sv
    u_int = _coefficients(solver, c, log_alpha) @ solver.v.T  # (N, n)
    f_int = u_int @ solver.lap.T  # (N, n); 𝓛_h is symmetric
    f = np.concatenate(
        [2 * f_int[:, :1] - f_int[:, 1:2], f_int, 2 * f_int[:, -1:] - f_int[:, -2:-1]], axis=1
    )
    zero = np.zeros((len(d), 1))
    return f, np.concatenate([zero, u_int, zero], axis=1)


def reconstruct(sensors: np.ndarray, c: float, d: np.ndarray, noise_std: float):
    """Tikhonov + discrepancy principle: (f, u, log10 α), each row one instance."""
    solver = build(sensors, c)
    log_alpha = choose_alpha(solver, d, noise_std)
    f, u = solve(solver, d, log_alpha)
    return f, u, log_alpha

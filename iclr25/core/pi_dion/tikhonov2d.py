"""Tikhonov regularisation in 2-D: min ‖S u − d‖² + α ‖h⁴ Δ_h 𝓛_h u‖² on the methods' grid.

The 2-D counterpart of :mod:`.tikhonov` (same solver type, same α rules: the discrepancy
principle with a noise level, GCV without): unknown u on the (cells − 1)² interior points
of the (cells + 1)² grid, f = 𝓛_h u (5-point −Δ_h + c), penalty the 5-point Laplacian of f
at every interior point, with f extended to ∂Ω by linear extrapolation (the same
extension the output uses for f on ∂Ω, which 𝓛_h u does not determine), S bilinear
interpolation to the sensors. The penalty's null space is 4-dimensional (a test counts
it), the 2-D counterpart of the linear f that ‖f''‖ leaves free in 1-D.

Building block for ``--dim 2``; not wired into commands yet.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from iclr25.core.pi_dion import fd2d
from iclr25.core.pi_dion.tikhonov import TikhonovSolver, _coefficients


def build(sensors: np.ndarray, c: float, cells: int = 32) -> TikhonovSolver:
    """The solver for sensors (m, 2) on the (cells + 1)² grid."""
    n = cells - 1
    h = 1.0 / cells
    s = fd2d.interpolation(n, sensors).toarray()  # (m, n²)
    lap = fd2d.operator(n, c).toarray()  # (n², n²)
    p = h**4 * _laplace_of_extrapolated(n, h) @ lap
    sts, ptp = s.T @ s, p.T @ p
    lam, v = sla.eigh(sts, sts + ptp)
    return TikhonovSolver(v, np.clip(lam, 0.0, 1.0), s @ v, s, lap)


def _laplace_of_extrapolated(n: int, h: float) -> np.ndarray:
    """(n², n²): the 5-point Laplacian at every interior node of f extended to ∂Ω by
    :func:`_extrapolate`. (Only at nodes with four interior neighbours, as in 1-D, the
    penalty would leave every discrete-harmonic f free — a space as large as the ring of
    boundary-adjacent nodes, which the sensors barely see — and α would not regularise.)"""
    full = _extrapolate(np.eye(n * n).reshape(n * n, n, n))  # (n², n+2, n+2) basis images
    lap = (full[:, :-2, 1:-1] + full[:, 2:, 1:-1] + full[:, 1:-1, :-2] + full[:, 1:-1, 2:]
           - 4 * full[:, 1:-1, 1:-1]) / h**2  # fmt: skip
    return lap.reshape(n * n, n * n).T  # (nodes, basis)


def _extrapolate(interior: np.ndarray) -> np.ndarray:
    """(N, n, n) → (N, n + 2, n + 2): boundary values by linear extrapolation per axis."""
    rows = np.concatenate([2 * interior[:, :1] - interior[:, 1:2], interior,
                           2 * interior[:, -1:] - interior[:, -2:-1]], axis=1)  # fmt: skip
    return np.concatenate([2 * rows[:, :, :1] - rows[:, :, 1:2], rows,
                           2 * rows[:, :, -1:] - rows[:, :, -2:-1]], axis=2)  # fmt: skip


def solve(solver: TikhonovSolver, d: np.ndarray, log_alpha: np.ndarray, cells: int = 32):
    """(f, u) on the (cells + 1)² grid, row-major (N, (cells + 1)²), for data ``d`` (N, m)."""
    n = cells - 1
    u_int = _coefficients(solver, d @ solver.sv, log_alpha) @ solver.v.T  # (N, n²)
    f_int = u_int @ solver.lap.T  # (N, n²)
    u = np.zeros((len(d), n + 2, n + 2))
    u[:, 1:-1, 1:-1] = u_int.reshape(-1, n, n)
    f = _extrapolate(f_int.reshape(-1, n, n))
    return f.reshape(len(d), -1), u.reshape(len(d), -1)

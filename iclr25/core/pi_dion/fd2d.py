"""Second-order finite differences for −Δu + c u = f on (0,1)², u = 0 on ∂Ω (2-D).

The 5-point Laplacian on ``n × n`` interior points (h = 1/(n+1)) is diagonalised exactly
by the type-I discrete sine transform: with λ_i = (2 − 2 cos(iπh))/h² (the 1-D
eigenvalues, i = 1..n), (−Δ_h + c) has eigenvalues λ_i + λ_j + c on the sine modes, so a
solve is two DSTs and a division — O(n² log n) for any number of right-hand sides, and
exactly the sparse 5-point solve (tested against scipy's sparse LU).

Building block for ``--dim 2`` (issue 27); not wired into problems or commands yet.
"""

from __future__ import annotations

import numpy as np
import scipy.fft as sfft
import scipy.sparse as sp

from iclr25.core.pi_dion import fd


def eigenvalues(n: int) -> np.ndarray:
    """λ_i of −d²/dx² on the 1-D interior grid (Dirichlet), i = 1..n → (n,)."""
    h = 1.0 / (n + 1)
    return (2 - 2 * np.cos(np.pi * np.arange(1, n + 1) * h)) / h**2


def operator(n: int, c: float) -> sp.csc_matrix:
    """The (n², n²) matrix of −Δ_h + c, row-major (index i·n + j for x_i, y_j)."""
    one_d = fd.operator(n, 0.0)  # (n, n) −D²
    eye = sp.identity(n, format="csc")
    return (sp.kron(one_d, eye) + sp.kron(eye, one_d) + c * sp.identity(n * n)).tocsc()


def solve(f: np.ndarray, c: float) -> np.ndarray:
    """u on the interior grid for sources ``f`` (..., n, n) on the same grid."""
    n = f.shape[-1]
    if f.shape[-2] != n:
        raise ValueError(f"f must be (..., n, n), got {f.shape}")
    lam = eigenvalues(n)
    denom = lam[:, None] + lam[None, :] + c  # (n, n)
    if np.any(np.abs(denom) < 1e-12 * np.abs(denom).max()):
        raise ValueError(f"c = {c} makes −Δ_h + c singular on this grid")
    coef = sfft.dstn(f, type=1, axes=(-2, -1))  # (..., n, n) sine coefficients (unnormalised)
    return sfft.idstn(coef / denom, type=1, axes=(-2, -1))


def interpolation(n: int, points: np.ndarray) -> sp.csr_matrix:
    """(m, n²) bilinear interpolation from interior grid values (boundary 0) to ``points``
    (m, 2) in [0, 1]²: the tensor product of the 1-D weights of :func:`fd.interpolation`."""
    points = np.asarray(points, np.float64)
    wx = fd.interpolation(n, points[:, 0])  # (m, n)
    wy = fd.interpolation(n, points[:, 1])  # (m, n)
    rows = np.einsum("mi,mj->mij", wx, wy).reshape(len(points), n * n)  # (m, n²)
    return sp.csr_matrix(rows)

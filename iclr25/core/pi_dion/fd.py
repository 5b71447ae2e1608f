"""Second-order finite differences for −u'' + c u = f on (0,1), u(0) = u(1) = 0.

c = k for reaction–diffusion, c = −κ² for Helmholtz. ``n`` interior points, h = 1/(n+1).
The data generator solves on a grid 4× finer than any method's grid (no inverse crime).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def interior(n: int) -> np.ndarray:
    """The ``n`` interior points of the uniform grid on [0, 1]."""
    return np.arange(1, n + 1) / (n + 1)


def operator(n: int, c: float) -> sp.csc_matrix:
    """The (n, n) matrix of −D² + c on the interior grid (Dirichlet boundary)."""
    h = 1.0 / (n + 1)
    main = np.full(n, 2.0 / h**2 + c)
    off = np.full(n - 1, -1.0 / h**2)
    return sp.diags([off, main, off], [-1, 0, 1], format="csc")


def solve(f: np.ndarray, c: float) -> np.ndarray:
    """u on the interior grid for sources ``f`` (..., n) given on the same grid."""
    n = f.shape[-1]
    lu = spla.splu(operator(n, c))
    flat = f.reshape(-1, n).T  # (n, batch)
    return lu.solve(np.ascontiguousarray(flat)).T.reshape(f.shape)


def interpolation(n: int, points: np.ndarray) -> np.ndarray:
    """(len(points), n): piecewise-linear interpolation from the interior grid values
    (boundary values 0) to ``points`` in [0, 1]."""
    h = 1.0 / (n + 1)
    t = np.clip(np.asarray(points, np.float64) / h, 0.0, n + 1 - 1e-12)
    left = np.floor(t).astype(int)  # node index in 0..n (0 = boundary)
    w = t - left
    mat = np.zeros((len(points), n))
    rows = np.arange(len(points))
    for node, weight in ((left, 1 - w), (left + 1, w)):
        inside = (node >= 1) & (node <= n)
        np.add.at(mat, (rows[inside], node[inside] - 1), weight[inside])
    return mat

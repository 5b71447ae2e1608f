"""The 1-D Darcy inverse problem: −(a u')' = 1 on (0,1), u(0) = u(1) = 0, unknown a = exp(g).

Paper → code (Cho & Son 2025 name a Darcy-flow coefficient problem; the exact setting
could not be read, so this one is ours): a → ``a``, its log g → ``g``, the state u →
``u``; the data are u at the sensors plus noise.

Discretisation (conservative, second order): nodes x_k = k h, k = 0..n+1, h = 1/(n+1);
g lives on the nodes, a on the cell midpoints as the arithmetic mean
a_{k+½} = (e^{g_k} + e^{g_{k+1}})/2, and for the interior nodes i = 1..n
  (A(g) u)_i = −[a_{i+½}(u_{i+1} − u_i) − a_{i−½}(u_i − u_{i−1})] / h² = f_i,
a symmetric positive-definite tridiagonal system (solved by the Thomas algorithm,
vectorised over instances and right-hand sides).

Generator (as for the linear PDEs): g from the Matérn GRF (ν = 2.5, ℓ = 0.2, σ = 1) on the
513 nodes of the grid 4× finer than the methods' 129-point grid; u by the fine solve; the
sensors read u by linear interpolation (no inverse crime). Noise: i.i.d. Gaussian with
σ_noise = noise × RMS(u at the sensors) under the prior, the RMS estimated once from a
fixed reference draw (:data:`RMS_DRAWS` instances, seed :data:`RMS_SEED`) because the map
g ↦ u is nonlinear and has no closed-form second moment.

Sensitivity (for Gauss–Newton, :mod:`.darcy_tikhonov`): with w_k = u_{k+1} − u_k and
Λ = A⁻¹ Sᵀ (one adjoint solve per sensor; A is symmetric),
  ∂(S u)/∂a_{k+½} = −(Λ_{k+1} − Λ_k) w_k / h²,  ∂a_{k+½}/∂g_j = e^{g_j}/2 (j = k, k+1).

Identifiability: the flux a u' = −(x − c) vanishes at one point c (where u is largest), so
u' = 0 there and a (hence g) is weakly determined by u near c; errors are reported there
apart (:func:`flux_zero_window`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from iclr25.core.pi_dion import fd, grf
from iclr25.core.pi_dion.problem import GRID_CELLS, Problem, fine_cells, grid, sensor_points

RMS_DRAWS = 1000  # reference draws for RMS(u at the sensors) under the prior
RMS_SEED = 20251202
FLUX_WINDOW = 0.05  # |x − c| < this counts as "near the flux zero" (a weakly determined)


def midpoint_a(g: np.ndarray) -> np.ndarray:
    """a at the cell midpoints (..., n+1) from g on all nodes (..., n+2)."""
    e = np.exp(g)
    return 0.5 * (e[..., 1:] + e[..., :-1])


def thomas(diag: np.ndarray, off: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve symmetric tridiagonal systems: ``diag`` (N, n), ``off`` (N, n−1) (the
    sub/super-diagonal), ``rhs`` (N, n) or (N, n, k) → the same shape as ``rhs``."""
    vec = rhs.ndim == 2
    b = rhs[..., None] if vec else rhs  # (N, n, k)
    n = diag.shape[1]
    cp = np.empty_like(diag)
    dp = np.empty(b.shape, np.float64)
    cp[:, 0] = off[:, 0] / diag[:, 0] if n > 1 else 0.0
    dp[:, 0] = b[:, 0] / diag[:, :1]
    for i in range(1, n):
        denom = diag[:, i] - off[:, i - 1] * cp[:, i - 1]  # (N,)
        if i < n - 1:
            cp[:, i] = off[:, i] / denom
        dp[:, i] = (b[:, i] - off[:, i - 1, None] * dp[:, i - 1]) / denom[:, None]
    x = np.empty_like(dp)
    x[:, -1] = dp[:, -1]
    for i in range(n - 2, -1, -1):
        x[:, i] = dp[:, i] - cp[:, i, None] * x[:, i + 1]
    return x[..., 0] if vec else x


def system(g: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(diagonal (N, n), off-diagonal (N, n−1), h) of A(g) for g on all nodes (N, n+2)."""
    n = g.shape[-1] - 2
    h = 1.0 / (n + 1)
    a = midpoint_a(g)  # (N, n+1)
    return (a[:, :-1] + a[:, 1:]) / h**2, -a[:, 1:-1] / h**2, h


def solve(g: np.ndarray, f: np.ndarray | float = 1.0) -> np.ndarray:
    """u on all nodes (N, n+2) (zero at both ends) for g on all nodes (N, n+2), source ``f``
    on the interior nodes (broadcast to (N, n); default 1)."""
    g = np.atleast_2d(np.asarray(g, np.float64))
    diag, off, _ = system(g)
    rhs = np.broadcast_to(np.asarray(f, np.float64), diag.shape).copy()
    u = np.zeros_like(g)
    u[:, 1:-1] = thomas(diag, off, rhs)
    return u


def sensor_jacobian(g: np.ndarray, u: np.ndarray, s: np.ndarray) -> np.ndarray:
    """∂(S u)/∂g (N, m, n+2) at g (N, n+2) with u = solve(g) (N, n+2); ``s`` (m, n) reads the
    interior nodes at the sensors (:func:`fd.interpolation`). Adjoint form (docstring)."""
    diag, off, h = system(g)
    lam = thomas(diag, off, np.broadcast_to(s.T, (len(g), *s.T.shape)).copy())  # (N, n, m)
    lam = np.pad(lam, ((0, 0), (1, 1), (0, 0)))  # (N, n+2, m), Λ = 0 at the boundary nodes
    w = np.diff(u, axis=1)  # (N, n+1)
    c = -(lam[:, 1:] - lam[:, :-1]) * (w / h**2)[..., None]  # (N, n+1, m) ∂(Su)/∂a_{k+½}
    half_e = 0.5 * np.exp(g)  # (N, n+2)
    jac = np.zeros((len(g), g.shape[1], s.shape[0]))
    jac[:, :-1] += c * half_e[:, :-1, None]  # a_{k+½} depends on g_k
    jac[:, 1:] += c * half_e[:, 1:, None]  # and on g_{k+1}
    return jac.transpose(0, 2, 1)  # (N, m, n+2)


def flux_zero_window(u: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(N, len(points)) mask of the points within :data:`FLUX_WINDOW` of c, the point where
    the flux a u' vanishes (the maximum of u; per instance, ``u`` on ``points``)."""
    c = points[np.argmax(u, axis=1)]  # (N,)
    return np.abs(points[None, :] - c[:, None]) < FLUX_WINDOW


@dataclass
class DarcyDataset:
    x: np.ndarray  # (m,) sensor positions
    d: np.ndarray  # (N, m) noisy sensor data
    grid: np.ndarray  # (129,)
    g: np.ndarray  # (N, 129) log-coefficient on the grid
    a: np.ndarray  # (N, 129) a = exp(g)
    u: np.ndarray  # (N, 129) the true state on the grid
    noise_std: float


def _fine_draw(p: Problem, n: int, rng: np.random.Generator, x: np.ndarray):
    """(g on the 513 fine nodes, u there, clean sensor data) for ``n`` prior draws."""
    x_full = np.linspace(0.0, 1.0, fine_cells() + 1)
    g_full = grf.sample(x_full, n, p.nu, p.ell, rng)  # (N, 513)
    u_full = solve(g_full)
    clean = u_full[:, 1:-1] @ fd.interpolation(fine_cells() - 1, x).T  # (N, m)
    return g_full, u_full, clean


@lru_cache(maxsize=8)
def _reference_rms(nu: float, ell: float, sensors: tuple[float, ...]) -> float:
    x = np.asarray(sensors)
    _, _, clean = _fine_draw(Problem(nu=nu, ell=ell), RMS_DRAWS, np.random.default_rng(RMS_SEED), x)
    return float(np.sqrt(np.mean(clean**2)))


def noise_std(p: Problem, sensors: np.ndarray | None = None) -> float:
    """σ_noise = noise × RMS(u at the sensors) under the prior (fixed reference draw)."""
    x = sensor_points(p) if sensors is None else np.asarray(sensors, np.float64)
    return p.noise * _reference_rms(p.nu, p.ell, tuple(float(v) for v in x))


def generate(p: Problem, n: int, rng: np.random.Generator) -> DarcyDataset:
    """``n`` instances: g from the prior, u by the fine FD solve, noisy sensor data."""
    x = sensor_points(p)
    sigma = noise_std(p, x)
    g_full, u_full, clean = _fine_draw(p, n, rng, x)
    d = clean + sigma * rng.standard_normal(clean.shape)
    idx = np.arange(0, fine_cells() + 1, fine_cells() // GRID_CELLS)
    g = g_full[:, idx]
    return DarcyDataset(x, d, grid(), g, np.exp(g), u_full[:, idx], sigma)


def residual_rel(u: np.ndarray, a: np.ndarray, points: np.ndarray) -> np.ndarray:
    """‖−(a u')' − 1‖ / ‖1‖ at the interior points of a uniform output grid (conservative
    differences, a at midpoints by the arithmetic mean) → (N,)."""
    h = float(np.diff(points).mean())
    a_mid = 0.5 * (a[:, 1:] + a[:, :-1])
    flux = a_mid * np.diff(u, axis=1) / h  # (N, G−1)
    res = -np.diff(flux, axis=1) / h - 1.0  # (N, G−2)
    return np.sqrt((res**2).mean(1))

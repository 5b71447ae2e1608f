"""The 2-D linear-Gaussian generator and its exact Bayes posterior mean (the 2-D floor).

Problem (issue 27, ``--dim 2``; notation partly ours): −Δu + c u = f on (0,1)², u = 0 on
∂Ω, f ~ Matérn GRF on the closed square, data d = S u + e at a ``side × side`` grid of
uniform interior sensors (16 × 16 by default), e ~ N(0, σ² I). The generator works on a
grid ``fine_factor``× finer than the methods' grid (no inverse crime): u by the 5-point
FD solve (:mod:`.fd2d`), sensors read by bilinear interpolation.

The data map H = S ∘ (−Δ_h + c)⁻¹ is linear, so E[f | d] = C Hᵀ (H C Hᵀ + σ² I)⁻¹ d. The
prior covariance C of the fine grid (129² points by default) is never formed: C Hᵀ is
computed by FFT in the circulant embedding of :mod:`.grf2d` (its corner block is C), and
Hᵀ by one sine-transform solve per sensor. E[u | d] uses Cov(u, d) = A⁻¹ C Hᵀ.

Building block for ``--dim 2``; not wired into problems or commands yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.pi_dion import fd2d, grf2d

SENSOR_CHUNK = 32  # sensors per FFT batch (memory: chunk × M² complex numbers)


@dataclass(frozen=True)
class Layout2D:
    cells: int = 32  # the methods' grid: (cells + 1)² points on [0, 1]²
    fine_factor: int = 4  # the generator's grid is this much finer
    side: int = 16  # sensors per axis (uniform interior points)

    @property
    def fine_cells(self) -> int:
        return self.cells * self.fine_factor

    def sensors(self) -> np.ndarray:
        """(side², 2) sensor positions, row-major."""
        s = np.arange(1, self.side + 1) / (self.side + 1)
        x, y = np.meshgrid(s, s, indexing="ij")
        return np.stack([x.ravel(), y.ravel()], axis=1)


@dataclass(frozen=True)
class Operators2D:
    c_ht: np.ndarray  # (m, F, F) C Hᵀ on the full fine grid (F = fine_cells + 1)
    hch: np.ndarray  # (m, m) H C Hᵀ
    u_cov: np.ndarray  # (m, F, F) Cov(u, d) on the full fine grid
    noise_std: float


def _adjoint_rows(layout: Layout2D, c: float, sensors: np.ndarray) -> np.ndarray:
    """Hᵀ for each sensor on the full fine grid (boundary f does not enter) → (m, F, F)."""
    n = layout.fine_cells - 1
    s = fd2d.interpolation(n, sensors).toarray().reshape(-1, n, n)  # (m, n, n)
    rows = np.zeros((len(s), n + 2, n + 2))
    rows[:, 1:-1, 1:-1] = fd2d.solve(s, c)  # A symmetric: Aᵀ⁻¹ Sᵀ = A⁻¹ Sᵀ
    return rows


def _cov_times(fields: np.ndarray, eig: np.ndarray) -> np.ndarray:
    """C v for fields v (k, F, F) through the circulant embedding (eigenvalues ``eig``)."""
    size, f_pts = eig.shape[0], fields.shape[-1]
    out = np.empty_like(fields)
    for start in range(0, len(fields), SENSOR_CHUNK):
        block = np.zeros((len(fields[start : start + SENSOR_CHUNK]), size, size))
        block[:, :f_pts, :f_pts] = fields[start : start + SENSOR_CHUNK]
        prod = np.fft.ifft2(np.fft.fft2(block) * eig).real  # (k, M, M)
        out[start : start + SENSOR_CHUNK] = prod[:, :f_pts, :f_pts]
    return out


def operators(layout: Layout2D, c: float, nu: float, ell: float, noise: float,
              sensors: np.ndarray | None = None) -> Operators2D:  # fmt: skip
    """C Hᵀ, H C Hᵀ, Cov(u, d) and σ = noise × RMS(d) under the prior, for the layout's
    sensor grid or the positions ``sensors`` (m, 2) given."""
    f_pts = layout.fine_cells + 1
    eig = grf2d.embedding_eigenvalues(f_pts, 1.0 / layout.fine_cells, nu, ell)
    ht = _adjoint_rows(layout, c, layout.sensors() if sensors is None else sensors)
    c_ht = _cov_times(ht, eig)  # (m, F, F)
    hch = np.einsum("sij,tij->st", ht, c_ht)  # (m, m)
    u_cov = np.zeros_like(c_ht)
    u_cov[:, 1:-1, 1:-1] = fd2d.solve(c_ht[:, 1:-1, 1:-1], c)
    sigma = noise * float(np.sqrt(np.mean(np.diag(hch))))
    return Operators2D(c_ht, hch, u_cov, sigma)


def gains(layout: Layout2D, ops: Operators2D) -> tuple[np.ndarray, np.ndarray]:
    """(K_f, K_u): E[f | d] = K_f d and E[u | d] = K_u d on the methods' grid, each
    ((cells + 1)², m), row-major."""
    m = len(ops.hch)
    system = ops.hch + (ops.noise_std**2 + 1e-12 * np.trace(ops.hch) / m) * np.eye(m)
    step = layout.fine_factor
    cross_f = ops.c_ht[:, ::step, ::step].reshape(m, -1)  # (m, G) Cov(d, f_grid)
    cross_u = ops.u_cov[:, ::step, ::step].reshape(m, -1)  # (m, G) Cov(d, u_grid)
    solved = np.linalg.solve(system, np.concatenate([cross_f, cross_u], axis=1))  # (m, 2G)
    k_f, k_u = np.split(solved.T, 2, axis=0)
    return k_f, k_u


def generate(layout: Layout2D, c: float, nu: float, ell: float, ops: Operators2D, n: int,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """``n`` instances → (d (n, m), f (n, G), u (n, G)) with G = (cells + 1)², row-major."""
    f_pts = layout.fine_cells + 1
    f_full = grf2d.sample(f_pts, n, nu, ell, rng)  # (n, F, F)
    u_full = np.zeros_like(f_full)
    u_full[:, 1:-1, 1:-1] = fd2d.solve(f_full[:, 1:-1, 1:-1], c)
    s = fd2d.interpolation(f_pts - 2, layout.sensors())  # (m, n_int²) sparse
    d = (s @ u_full[:, 1:-1, 1:-1].reshape(n, -1).T).T  # (n, m)
    d = d + ops.noise_std * rng.standard_normal(d.shape)
    step = layout.fine_factor
    return d, f_full[:, ::step, ::step].reshape(n, -1), u_full[:, ::step, ::step].reshape(n, -1)

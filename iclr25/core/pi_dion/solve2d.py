"""Solve a user's 2-D inverse problem with a trained 2-D PI-DION or a classical reference.

Measurements (x, y, u) → f and u on a ``grid × grid`` output grid of [0, 1]², by
``pi-dion`` (a :mod:`.train2d` model, evaluated at the output points directly), by
``tikhonov`` (:mod:`.tikhonov2d` on the 33×33 methods' grid; α by the discrepancy
principle with ``noise_std``, else by GCV) or ``bayes`` (:mod:`.bayes2d`, the posterior
mean under the Matérn prior at these sensors; σ = ``noise_std``, else the problem's
relative level × RMS(d) under the prior), then bilinear interpolation to the output grid.
Diagnostics as in 1-D: ``residual_rel`` (5-point 𝓛_h u − f against f on the output grid's
interior) and ``misfit_rel`` (‖u(sensors) − d‖ / ‖d‖).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from iclr25.core.pi_dion import bayes2d, tikhonov, tikhonov2d
from iclr25.core.pi_dion.measurements import Measurements, identifiable_fraction
from iclr25.core.pi_dion.problem import Problem
from iclr25.errors import UsageError

LAYOUT = bayes2d.Layout2D()  # the methods' 33×33 grid and the generator's 129×129 one


def _resample(fields: np.ndarray, grid: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Bilinear values of fields (N, G0, G0) on ``grid`` (G0,) at points (k, 2) → (N, k)."""
    return np.stack([RegularGridInterpolator((grid, grid), f)(points) for f in fields])


def _classical(p: Problem, data: Measurements, method: str, noise_std: float | None):
    """(u, f) as (N, 33, 33) and the α-rule facts."""
    cells, side = LAYOUT.cells, LAYOUT.cells + 1
    if method == "tikhonov":
        solver = tikhonov2d.build(data.x, p.c, cells)
        if noise_std is None:
            log_alpha, sigma = tikhonov.choose_alpha_gcv(solver, data.u)
            facts = {"alpha_rule": "gcv", "noise_std": None,
                     "noise_std_estimate": sigma.tolist()}  # fmt: skip
        else:
            log_alpha = tikhonov.choose_alpha(solver, data.u, max(noise_std, 1e-300))
            facts = {"alpha_rule": "discrepancy", "noise_std": noise_std}
        f, u = tikhonov2d.solve(solver, data.u, log_alpha, cells)
        facts["log10_alpha"] = log_alpha.tolist()
        return u.reshape(-1, side, side), f.reshape(-1, side, side), facts
    ops = bayes2d.operators(LAYOUT, p.c, p.nu, p.ell, p.noise, data.x)
    if noise_std is not None:
        ops = replace(ops, noise_std=noise_std)
    k_f, k_u = bayes2d.gains(LAYOUT, ops)
    u, f = data.u @ k_u.T, data.u @ k_f.T  # (N, 33²)
    return u.reshape(-1, side, side), f.reshape(-1, side, side), {"noise_std": ops.noise_std}


def residual_rel(u: np.ndarray, f: np.ndarray, h: float, c: float) -> np.ndarray:
    """‖−Δ_h u + c u − f‖ / ‖f‖ at the interior points of (N, G, G) fields → (N,)."""
    lap = (u[:, 2:, 1:-1] + u[:, :-2, 1:-1] + u[:, 1:-1, 2:] + u[:, 1:-1, :-2]
           - 4 * u[:, 1:-1, 1:-1]) / h**2  # fmt: skip
    res = (-lap + c * u[:, 1:-1, 1:-1] - f[:, 1:-1, 1:-1]).reshape(len(u), -1)
    norm = np.linalg.norm(f[:, 1:-1, 1:-1].reshape(len(u), -1), axis=1)
    return np.linalg.norm(res, axis=1) / np.maximum(norm, 1e-300)


def solve(data: Measurements, p: Problem, method: str, grid: int, noise_std: float | None,
          loaded=None):  # fmt: skip
    """f and u on grid × grid points (rows of length grid², row-major) with diagnostics;
    ``loaded``: the :class:`.saved.SavedModel` of method ``pi-dion``."""
    if method not in ("tikhonov", "bayes", "pi-dion"):
        raise UsageError(f"--method {method} with --dim 2 is not built",
                         "use --method pi-dion, tikhonov or bayes")  # fmt: skip
    out = np.linspace(0.0, 1.0, grid)
    x, y = np.meshgrid(out, out, indexing="ij")
    points = np.stack([x.ravel(), y.ravel()], axis=1)  # (grid², 2)
    if method == "pi-dion" and loaded is None:
        raise UsageError("--method pi-dion with --dim 2 needs a trained 2-D model",
                         "train one (train --dim 2 --save MODEL), or use --method tikhonov or "
                         "bayes")  # fmt: skip
    if method == "pi-dion":
        from iclr25.core.pi_dion.train2d import predict_2d

        u, f = (v.astype(np.float64) for v in predict_2d(loaded.model, data.u, data.x, points))
        u_at = predict_2d(loaded.model, data.u, data.x, data.x)[0].astype(np.float64)
        facts = {}
    else:
        u33, f33, facts = _classical(p, data, method, noise_std)
        base = np.linspace(0.0, 1.0, LAYOUT.cells + 1)
        u, f = _resample(u33, base, points), _resample(f33, base, points)  # (N, grid²)
        u_at = _resample(u33, base, data.x)  # (N, m)
    misfit = np.linalg.norm(u_at - data.u, axis=1)
    misfit /= np.maximum(np.linalg.norm(data.u, axis=1), 1e-300)
    square = (len(u), grid, grid)
    return {
        "method": method,
        "grid": out.tolist(),
        "f": f.tolist(),
        "u": u.tolist(),
        "instances": len(data.u),
        "sensors": len(data.x),
        "identifiable_fraction": identifiable_fraction(data.x),
        "residual_rel": residual_rel(u.reshape(square), f.reshape(square), out[1], p.c).tolist(),
        "misfit_rel": misfit.tolist(),
        **facts,
    }

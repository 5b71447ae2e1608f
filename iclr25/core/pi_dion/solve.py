"""Solve a user's inverse problem: measurements of u → f and u on a grid.

Methods: ``pi-dion`` (one forward pass of a trained model; it only reads the sensor
layout it was trained on), ``tikhonov`` (:mod:`.tikhonov`: α by the discrepancy principle
when the noise standard deviation ``noise_std`` is given, else by GCV, which needs no noise
level and estimates σ per instance) and ``bayes`` (:mod:`.bayes`, the posterior mean under
the generator's Matérn prior — exact when the data came from that prior; σ is
``noise_std`` when given, else the problem's relative level × RMS(u at these sensors)
under the prior, what `generate` uses).

Diagnostics per instance: ``residual_rel`` = ‖𝓛_h u − f‖ / ‖f‖ on the output grid's
interior (second-order FD; how far the pair (u, f) is from solving the PDE) and
``misfit_rel`` = ‖u(sensors) − d‖ / ‖d‖.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from iclr25.core.pi_dion import bayes, problem, tikhonov
from iclr25.core.pi_dion.measurements import Measurements, identifiable_fraction, sensor_misfit
from iclr25.core.pi_dion.problem import Problem
from iclr25.errors import UsageError

METHODS = ("pi-dion", "tikhonov", "bayes")


@dataclass(frozen=True)
class SolveConfig:
    method: str = "pi-dion"
    grid: int = 129  # output points on [0, 1]
    # σ: tikhonov uses the discrepancy principle with it (None: GCV); bayes uses it (None:
    # the problem's relative level × RMS(u) under the prior)
    noise_std: float | None = None


def check(cfg: SolveConfig) -> None:
    if cfg.method not in METHODS:
        raise UsageError(f"unknown --method {cfg.method!r}", f"use one of: {', '.join(METHODS)}")
    if cfg.grid < 3:
        raise UsageError(f"--grid {cfg.grid}", "use at least 3 points, e.g. 129")
    if cfg.noise_std is not None and not cfg.noise_std >= 0:
        raise UsageError(f"--noise-std {cfg.noise_std} is negative", "use σ ≥ 0")


def _classical(p: Problem, data: Measurements, cfg: SolveConfig) -> tuple:
    """(u, f) on the 129-point grid and the α-rule facts, for tikhonov or bayes."""
    if cfg.method == "tikhonov" and cfg.noise_std is None:
        f, u, log_alpha, sigma = tikhonov.reconstruct_gcv(data.x, p.c, data.u)
        return u, f, {"alpha_rule": "gcv", "noise_std": None,
                      "noise_std_estimate": sigma.tolist(),
                      "log10_alpha": log_alpha.tolist()}  # fmt: skip
    if cfg.method == "tikhonov":
        f, u, log_alpha = tikhonov.reconstruct(data.x, p.c, data.u, max(cfg.noise_std, 1e-300))
        return u, f, {"alpha_rule": "discrepancy", "noise_std": cfg.noise_std,
                      "log10_alpha": log_alpha.tolist()}  # fmt: skip
    ops = problem.operators(p, data.x)  # the prior: σ by default, and the Bayes gains
    sigma = ops.noise_std if cfg.noise_std is None else cfg.noise_std
    ops = replace(ops, noise_std=sigma)
    u = bayes.posterior_mean(data.u, bayes.state_gain(p, ops))
    f = bayes.posterior_mean(data.u, bayes.gain(ops))
    return u, f, {"noise_std": sigma}


def residual_rel(u: np.ndarray, f: np.ndarray, grid: np.ndarray, c: float) -> np.ndarray:
    """‖−u'' + c u − f‖ / ‖f‖ at the interior grid points (second differences) → (N,)."""
    h = np.diff(grid).mean()
    lap = -(u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2]) / h**2 + c * u[:, 1:-1]
    num = np.linalg.norm(lap - f[:, 1:-1], axis=1)
    return num / np.maximum(np.linalg.norm(f[:, 1:-1], axis=1), 1e-300)


def solve(data: Measurements, p: Problem, cfg: SolveConfig, saved=None) -> dict:
    """f and u on ``cfg.grid`` points for every instance, with diagnostics."""
    check(cfg)
    grid = np.linspace(0.0, 1.0, cfg.grid)
    facts = {"noise_std": None}
    if cfg.method == "pi-dion":
        from iclr25.core.pi_dion import train

        u, f = train.predict(saved.model, data.u, grid)
        u, f = u.astype(np.float64), f.astype(np.float64)
    else:
        u129, f129, facts = _classical(p, data, cfg)
        base = problem.grid()
        u = np.stack([np.interp(grid, base, row) for row in u129])
        f = np.stack([np.interp(grid, base, row) for row in f129])
    misfit = sensor_misfit(u, grid, data)
    return {
        "method": cfg.method,
        "grid": grid.tolist(),
        "f": f.tolist(),
        "u": u.tolist(),
        "instances": len(data.u),
        "sensors": len(data.x),
        "identifiable_fraction": identifiable_fraction(data.x),
        "residual_rel": residual_rel(u, f, grid, p.c).tolist(),
        "misfit_rel": misfit.tolist(),
        **facts,
    }

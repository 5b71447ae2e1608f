"""Solve a user's darcy problem: measurements of u → a, g = log a and u on a grid.

Methods: ``pi-dion`` (one forward pass of a trained darcy model; it reads only the sensor
layout it was trained on) and ``tikhonov`` (:mod:`.darcy_tikhonov`, Gauss–Newton with the
discrepancy principle; σ is ``noise_std`` when given, else the problem's relative level ×
RMS(d) of each instance). ``bayes`` is refused: the problem is nonlinear and the posterior
mean has no closed form.

Diagnostics per instance: ``residual_rel`` = RMS of −(a u')' − 1 at the interior grid
points (conservative differences; the right-hand side is 1, so this is relative), and
``misfit_rel`` = ‖u(sensors) − d‖ / ‖d‖.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.pi_dion import darcy, darcy_tikhonov, problem
from iclr25.core.pi_dion.measurements import Measurements, identifiable_fraction, sensor_misfit
from iclr25.errors import UsageError

METHODS = ("pi-dion", "tikhonov")


def check(method: str) -> None:
    if method == "bayes":
        raise UsageError("--method bayes is not built for --pde darcy: the problem is "
                         "nonlinear and E[a | d] has no closed form",
                         "use --method tikhonov or pi-dion")  # fmt: skip
    if method not in METHODS:
        raise UsageError(f"unknown --method {method!r}", f"use one of: {', '.join(METHODS)}")


def solve(data: Measurements, p: problem.Problem, cfg, saved=None) -> dict:
    """a, g and u on ``cfg.grid`` points for every instance, with diagnostics."""
    check(cfg.method)
    grid = np.linspace(0.0, 1.0, cfg.grid)
    facts: dict = {"noise_std": cfg.noise_std}
    if cfg.method == "pi-dion":
        from iclr25.core.pi_dion import darcy_model

        u, g = darcy_model.predict(saved.model, data.u, grid)
    else:
        rms = np.sqrt((data.u**2).mean(1))
        sigma = p.noise * rms if cfg.noise_std is None else np.full(len(data.u), cfg.noise_std)
        g129, _, u129, log_alpha, reached = darcy_tikhonov.reconstruct(data.x, data.u, sigma)
        base = problem.grid()
        u = np.stack([np.interp(grid, base, row) for row in u129])
        g = np.stack([np.interp(grid, base, row) for row in g129])
        facts = {"alpha_rule": "discrepancy", "noise_std": sigma.tolist(),
                 "log10_alpha": log_alpha.tolist(),
                 "discrepancy_reached": reached.tolist()}  # fmt: skip
    a = np.exp(g)
    misfit = sensor_misfit(u, grid, data)
    return {
        "method": cfg.method,
        "grid": grid.tolist(),
        "a": a.tolist(),
        "g": g.tolist(),
        "u": u.tolist(),
        "instances": len(data.u),
        "sensors": len(data.x),
        "identifiable_fraction": identifiable_fraction(data.x),
        "residual_rel": darcy.residual_rel(u, a, grid).tolist(),
        "misfit_rel": misfit.tolist(),
        **facts,
    }

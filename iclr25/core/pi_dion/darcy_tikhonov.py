"""Tikhonov for darcy by Gauss–Newton on the FD grid, α by the discrepancy principle.

Unknown: g = log a on the 129 nodes of the methods' grid (h = 1/128); u(g) by the
conservative FD solve of :mod:`.darcy` on that grid (the generator's grid is 4× finer).
Estimate, per instance:
  min_g  Φ_α(g) = ‖S u(g) − d‖² + α ‖L g‖²,   L = √h D²   (D²: second difference / h²),
so ‖L g‖² ≈ ∫ g''² — smooth log-coefficients are cheap and the affine part of g is free
(the data fix it). ‖D g‖² was the other option of the issue; D² matches the Matérn-5/2
prior's smoothness better and leaves the level of g (the overall scale of a, which the
data determine best) unpenalised.

Gauss–Newton: δ = −(JᵀJ + α LᵀL)⁻¹ (Jᵀ r + α LᵀL g), r = S u − d, with the exact
Jacobian J = ∂(S u)/∂g from the adjoint of the FD system (:func:`.darcy.sensor_jacobian`,
tested against finite differences), and a backtracking step (halve until Φ_α decreases).
All instances are solved together (batched linear algebra).

α by the discrepancy principle (Morozov, τ = 1) with continuation: start at a large α from
the constant-a least-squares fit, lower log10 α in steps of :data:`LOG_ALPHA_STEP` with
:data:`STEPS_PER_ALPHA` warm-started GN steps each, and keep, per instance, the first
α with ‖S u − d‖² ≤ m σ² (so α is within one step of the discrepancy α); then
:data:`FINAL_STEPS` more GN steps at that α. An instance that never reaches the target
(e.g. σ = 0) keeps the smallest α (reported by ``reached``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.pi_dion import darcy, fd
from iclr25.core.pi_dion.problem import GRID_CELLS

LOG_ALPHA_START = -2.0
LOG_ALPHA_STOP = -14.0
LOG_ALPHA_STEP = 0.5
STEPS_PER_ALPHA = 2
FINAL_STEPS = 6
HALVINGS = 8  # backtracking: step sizes 1, 1/2, …, 2^-HALVINGS (then no step)


@dataclass(frozen=True)
class GNProblem:
    s: np.ndarray  # (m, n) interpolation from the interior nodes to the sensors
    reg: np.ndarray  # (n+2, n+2) LᵀL
    nodes: np.ndarray  # (n+2,) the grid


def build(sensors: np.ndarray, cells: int = GRID_CELLS) -> GNProblem:
    n = cells - 1
    h = 1.0 / cells
    d2 = (np.eye(n + 2, k=-1) - 2 * np.eye(n + 2) + np.eye(n + 2, k=1))[1:-1] / h**2  # (n, n+2)
    lmat = np.sqrt(h) * d2
    return GNProblem(fd.interpolation(n, sensors), lmat.T @ lmat, np.linspace(0, 1, n + 2))


def initial_guess(gp: GNProblem, d: np.ndarray) -> np.ndarray:
    """The constant g that fits best: for constant a, u = x(1−x)/(2a), so 1/a is the
    least-squares factor of q = x(1−x)/2 at the sensors → (N, n+2)."""
    q = gp.s @ (gp.nodes[1:-1] * (1 - gp.nodes[1:-1]) / 2)  # (m,)
    inv_a = np.maximum(d @ q / (q @ q), 1e-6)  # (N,)
    return np.repeat(np.log(1 / inv_a)[:, None], len(gp.nodes), axis=1)


def objective(gp: GNProblem, g: np.ndarray, d: np.ndarray, alpha: np.ndarray):
    """(Φ_α (N,), misfit ‖S u − d‖² (N,), u (N, n+2)) at g (N, n+2)."""
    u = darcy.solve(g)
    misfit = ((u[:, 1:-1] @ gp.s.T - d) ** 2).sum(1)
    return misfit + alpha * np.einsum("ij,jk,ik->i", g, gp.reg, g), misfit, u


def gn_step(gp: GNProblem, g: np.ndarray, d: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """One Gauss–Newton step with backtracking for every instance → new g (N, n+2)."""
    phi, _, u = objective(gp, g, d, alpha)
    jac = darcy.sensor_jacobian(g, u, gp.s)  # (N, m, n+2)
    r = u[:, 1:-1] @ gp.s.T - d  # (N, m)
    hess = np.einsum("nmi,nmj->nij", jac, jac) + alpha[:, None, None] * gp.reg
    grad = np.einsum("nmi,nm->ni", jac, r) + alpha[:, None] * (g @ gp.reg)
    delta = -np.linalg.solve(hess, grad[..., None])[..., 0]  # (N, n+2)
    out, pending, t = g.copy(), np.ones(len(g), bool), 1.0
    for _ in range(HALVINGS + 1):
        trial = g + t * delta
        phi_t = objective(gp, trial, d, alpha)[0]
        take = pending & np.isfinite(phi_t) & (phi_t < phi)
        out[take] = trial[take]
        pending &= ~take
        if not pending.any():
            break
        t /= 2
    return out


def gauss_newton(gp: GNProblem, d: np.ndarray, alpha: np.ndarray, g0=None, steps: int = 20):
    """g (N, n+2) after ``steps`` GN steps at fixed α (N,) (from ``g0`` or the constant fit)."""
    g = initial_guess(gp, d) if g0 is None else g0
    for _ in range(steps):
        g = gn_step(gp, g, d, alpha)
    return g


def discrepancy(gp: GNProblem, d: np.ndarray, noise_std: np.ndarray | float):
    """(g (N, n+2), log10 α (N,), reached (N,) bool) by continuation in α (docstring)."""
    n_inst, m = d.shape
    target = m * np.broadcast_to(np.asarray(noise_std, np.float64), (n_inst,)) ** 2
    g = initial_guess(gp, d)
    log_alpha = np.full(n_inst, LOG_ALPHA_START)
    done = np.zeros(n_inst, bool)
    levels = np.arange(LOG_ALPHA_START, LOG_ALPHA_STOP - 1e-9, -LOG_ALPHA_STEP)
    for level in levels:
        act = ~done
        if not act.any():
            break
        log_alpha[act] = level
        alpha = 10.0 ** log_alpha[act]
        for _ in range(STEPS_PER_ALPHA):
            g[act] = gn_step(gp, g[act], d[act], alpha)
        misfit = objective(gp, g[act], d[act], alpha)[1]
        done[np.flatnonzero(act)[misfit <= target[act]]] = True
    g = gauss_newton(gp, d, 10.0**log_alpha, g, FINAL_STEPS)
    reached = objective(gp, g, d, 10.0**log_alpha)[1] <= target * (1 + 1e-9)
    return g, log_alpha, done | reached


def reconstruct(sensors: np.ndarray, d: np.ndarray, noise_std):
    """Tikhonov–Gauss–Newton with the discrepancy principle: (g, a, u on the 129-point
    grid, log10 α, discrepancy reached), each row one instance."""
    gp = build(sensors)
    g, log_alpha, reached = discrepancy(gp, d, noise_std)
    return g, np.exp(g), darcy.solve(g), log_alpha, reached

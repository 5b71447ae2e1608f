"""Reference solvers: the convex reformulations written in cvxpy (a test and benchmark
dependency, not a runtime one). Used to check :mod:`convex_solver` and as the peer of
``benchmarks/bench_dro_bound.py``.

Shafieezadeh-Abadeh, Mohajerin Esfahani & Kuhn (2015), Theorem 1 — robust logistic
regression with cost ‖x − x'‖ + κ·1{y ≠ y'} over a type-1 Wasserstein ball::

    min_{w, b, λ, s}  λρ + (1/n) Σ_i s_i
    s.t.  ‖w‖_* ≤ λ,  s_i ≥ log(1 + exp(−y_i(wᵀx_i + b))),
          s_i ≥ log(1 + exp(y_i(wᵀx_i + b))) − κλ        (dropped when κ = ∞)

and the regression analogue with a Lipschitz loss and fixed targets,
min E_n L(y − wᵀx − b) + ρ·Lip·‖w‖_*.
"""

from __future__ import annotations

import math

import numpy as np

from iclr25.errors import UsageError


def _cvxpy():
    try:
        import cvxpy as cp
    except ImportError:
        raise UsageError(
            "the cvxpy reference needs cvxpy",
            "pip install cvxpy (it is in the dev and bench extras)",
        ) from None
    return cp


def _dual_norm(cp, w, p: float):
    if p == 1.0:
        return cp.norm(w, "inf")
    if math.isinf(p):
        return cp.norm(w, 1)
    return cp.norm(w, p / (p - 1.0))


def _solve(cp, problem, solver: str | None, tight: bool):
    kwargs = {}
    if (solver or "CLARABEL") == "CLARABEL" and tight:
        kwargs = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}
    problem.solve(solver=solver or cp.CLARABEL, **kwargs)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy status {problem.status}")


def robust_logistic_cvxpy(
    X,
    y,
    rho: float,
    kappa: float = math.inf,
    p: float = 2.0,
    solver: str | None = None,
    tight: bool = True,
) -> dict:
    """Solve the reformulation; returns objective, coefficients, intercept, lambda."""
    cp = _cvxpy()
    n, d = X.shape
    w, b, lam, s = cp.Variable(d), cp.Variable(), cp.Variable(), cp.Variable(n)
    z = cp.multiply(y, X @ w + b)
    cons = [_dual_norm(cp, w, p) <= lam, s >= cp.logistic(-z)]
    if math.isfinite(kappa):
        cons.append(s >= cp.logistic(z) - kappa * lam)
    problem = cp.Problem(cp.Minimize(lam * rho + cp.sum(s) / n), cons)
    _solve(cp, problem, solver, tight)
    return {
        "objective": float(problem.value),
        "coefficients": np.asarray(w.value).copy(),
        "intercept": float(b.value),
        "lambda": float(lam.value),
    }


def robust_regression_cvxpy(
    X,
    y,
    rho: float,
    loss: str = "absolute",
    huber_delta: float = 1.0,
    p: float = 2.0,
    solver: str | None = None,
) -> dict:
    """min E_n L(y − wᵀx − b) + ρ·Lip·‖w‖_* for the absolute or Huber loss."""
    cp = _cvxpy()
    n, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    r = y - X @ w - b
    if loss == "absolute":
        data, lip = cp.sum(cp.abs(r)) / n, 1.0
    else:  # cvxpy's huber(r, M) = 2·(our Huber with δ = M)
        data, lip = cp.sum(cp.huber(r, huber_delta)) / (2 * n), huber_delta
    problem = cp.Problem(cp.Minimize(data + rho * lip * _dual_norm(cp, w, p)))
    _solve(cp, problem, solver, True)
    return {
        "objective": float(problem.value),
        "coefficients": np.asarray(w.value).copy(),
        "intercept": float(b.value),
    }


def robust_margin_cvxpy(
    X, y, rho: float, loss: str = "hinge", p: float = 2.0, solver: str | None = None
) -> dict:
    """min E_n L(y(wᵀx + b)) + ρ·‖w‖_* (q = 1, κ = ∞; ρ = 0: ERM) for the hinge or the
    logistic loss (both 1-Lipschitz with the slope bound attained)."""
    cp = _cvxpy()
    n, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    z = cp.multiply(y, X @ w + b)
    data = cp.sum(cp.pos(1 - z)) / n if loss == "hinge" else cp.sum(cp.logistic(-z)) / n
    problem = cp.Problem(cp.Minimize(data + rho * _dual_norm(cp, w, p)))
    _solve(cp, problem, solver, True)
    return {
        "objective": float(problem.value),
        "coefficients": np.asarray(w.value).copy(),
        "intercept": float(b.value),
    }

"""Exact robust linear/logistic regression for q = 1: a smoothed Newton method with
continuation (the fast path of :mod:`fit`).

For q = 1, unbounded support and a convex loss whose slope bound Lip is attained, the
robust problem is the convex program (Shafieezadeh-Abadeh, Mohajerin Esfahani & Kuhn
2015, Theorem 1; κ = ∞ gives norm-regularised regression)::

    κ = ∞:  min_{w,b}     E_n L(u_i) + ρ·Lip·‖w‖_*
    κ < ∞:  min_{w,b,λ}   λρ + E_n max(L(z_i), L(−z_i) − κλ)   s.t.  Lip·‖w‖_* ≤ λ

with u_i = y_i(wᵀx_i + b) (margins) or y_i − wᵀx_i − b (residuals). We solve it by
Newton's method on a smooth approximation whose error is O(τ), for τ = 10⁻², …, 10⁻¹⁰
with warm starts: max(0, t) -> τ·log(1 + e^(t/τ)), the hinge and |r| likewise, the dual
norm -> (Σ_j (w_j² + τ²)^(r/2))^(1/r) (r = p*; a soft-max for r = ∞) and the constraint
-> a log-barrier of weight τ. The data enter only through per-sample scalars, so one
Newton step costs one (n × (d+1)) weighted Gram matrix: O(n d²).

Code names -> symbols: ``w`` -> w, ``b`` -> b, ``lam`` -> λ, ``tau`` -> τ, ``lip`` -> Lip,
``r`` -> p* (exponent of the dual norm ‖·‖_*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, softmax

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.losses import Loss

TAUS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)


@dataclass
class NewtonResult:
    w: np.ndarray
    b: float
    lam: float | None  # None when κ = ∞ (λ* = Lip·‖w‖_* then)
    newton_steps: int
    converged: bool


def smooth_dual_norm(w: np.ndarray, r: float, tau: float):
    """(N_τ(w), ∇N_τ, ∇²N_τ) of the smoothed ‖w‖_r (exact as τ -> 0)."""
    d = len(w)
    if d == 0:
        return 0.0, np.zeros(0), np.zeros((0, 0))
    if math.isinf(r):  # soft-max of (w, −w): bias ≤ τ log(2d)
        z = np.concatenate([w, -w]) / tau
        p = softmax(z)
        value = tau * (np.log(np.exp(z - z.max()).sum()) + z.max())
        diff = p[:d] - p[d:]
        return value, diff, (np.diag(p[:d] + p[d:]) - np.outer(diff, diff)) / tau
    s = w * w + tau * tau  # (d,)
    root = np.sqrt(s)
    m = root.max()
    value = m * np.power(np.power(root / m, r).sum(), 1.0 / r)
    ratio = np.power(root / value, r - 1.0)  # (√s_j / N)^(r−1)
    g = ratio * w / root
    diag = ratio * ((r - 1.0) * w * w + tau * tau) / (s * root)
    return value, g, np.diag(diag) + (1.0 - r) * np.outer(g, g) / value


class _Problem:
    """The smoothed objective F_τ(v) with v = (w, b[, λ]), its gradient and Hessian."""

    def __init__(self, X, y, loss: Loss, cost: TransportCost, rho: float, fit_intercept: bool):
        n, d = X.shape
        self.n, self.d, self.loss, self.cost, self.rho = n, d, loss, cost, rho
        self.lip = loss.lipschitz
        self.r = cost.dual_p
        ones = np.ones((n, 1)) if fit_intercept else np.zeros((n, 1))
        design = np.hstack([X, ones])  # (n, d+1)
        if loss.kind == "margin":
            self.A, self.base = y[:, None] * design, np.zeros(n)  # u = y (wᵀx + b)
        else:
            self.A, self.base = -design, y.astype(np.float64)  # u = y − wᵀx − b
        self.switch = loss.kind == "margin" and not cost.labels_fixed
        self.dim = d + 1 + (1 if self.switch else 0)

    def split(self, v):
        return v[: self.d], (v[self.d + 1] if self.switch else None)

    def feasible(self, v, tau: float) -> bool:
        if not self.switch:
            return True
        w, lam = self.split(v)
        return lam > self.lip * smooth_dual_norm(w, self.r, tau)[0]

    def terms(self, v, tau: float):
        """Per-sample (h, h_u, h_uu, h_λ, h_λλ, h_uλ) of the smoothed loss part."""
        u = self.base + self.A @ v[: self.d + 1]
        a, a1, a2 = self.loss.smooth(u, tau)
        if not self.switch:
            zero = np.zeros_like(u)
            return a, a1, a2, zero, zero, zero
        lam = v[-1]
        bm, bm1, bm2 = self.loss.smooth(-u, tau)  # B(u) = L(−u): B' = −L'(−u), B'' = L''(−u)
        bm1 = -bm1
        t = (bm - a - self.cost.kappa * lam) / tau
        sp, s1 = tau * np.logaddexp(0.0, t), expit(t)
        s2 = s1 * (1.0 - s1) / tau
        diff1 = bm1 - a1
        h = a + sp
        h_u = a1 + s1 * diff1
        h_uu = a2 + s2 * diff1**2 + s1 * (bm2 - a2)
        k = self.cost.kappa
        return h, h_u, h_uu, -k * s1, k * k * s2, -k * s2 * diff1

    def regulariser(self, v, tau: float):
        """(value, gradient, Hessian) of the norm / barrier part, over all of v."""
        w, lam = self.split(v)
        nv, ng, nh = smooth_dual_norm(w, self.r, tau)
        grad, hess = np.zeros(self.dim), np.zeros((self.dim, self.dim))
        d = self.d
        if not self.switch:
            c = self.rho * self.lip
            grad[:d], hess[:d, :d] = c * ng, c * nh
            return c * nv, grad, hess
        gap = lam - self.lip * nv  # > 0 inside the domain
        value = self.rho * lam - tau * math.log(gap)
        gg = np.zeros(self.dim)
        gg[:d], gg[-1] = -self.lip * ng, 1.0  # ∇gap
        grad = self.rho * np.eye(self.dim)[-1] - tau * gg / gap
        hess = tau * np.outer(gg, gg) / gap**2
        hess[:d, :d] += tau * self.lip * nh / gap
        return value, grad, hess

    def value(self, v, tau: float) -> float:
        if not self.feasible(v, tau):
            return math.inf
        h = self.terms(v, tau)[0]
        return float(h.mean()) + self.regulariser(v, tau)[0]

    def grad_hess(self, v, tau: float):
        h, hu, huu, hl, hll, hul = self.terms(v, tau)
        n, k = self.n, self.d + 1
        grad = np.zeros(self.dim)
        hess = np.zeros((self.dim, self.dim))
        grad[:k] = self.A.T @ hu / n
        hess[:k, :k] = (self.A.T * huu) @ self.A / n  # (d+1, d+1) weighted Gram
        if self.switch:
            grad[-1] = hl.mean()
            hess[-1, -1] = hll.mean()
            hess[:k, -1] = hess[-1, :k] = self.A.T @ hul / n
        _, rg, rh = self.regulariser(v, tau)
        return grad + rg, hess + rh


def _newton(problem: _Problem, v: np.ndarray, tau: float, max_steps: int = 100, tol: float = 1e-15):
    """Damped Newton on F_τ until the Newton decrement is below ``tol``·(1 + |F|)."""
    f = problem.value(v, tau)
    steps = 0
    for steps in range(1, max_steps + 1):  # noqa: B007
        g, H = problem.grad_hess(v, tau)
        ridge = 1e-12 * max(1.0, float(np.abs(np.diag(H)).max()))
        try:
            delta = -np.linalg.solve(H + ridge * np.eye(len(v)), g)
        except np.linalg.LinAlgError:
            delta = -np.linalg.lstsq(H + ridge * np.eye(len(v)), g, rcond=None)[0]
        decrement = -float(g @ delta)
        if decrement < 0:  # not a descent direction (numerical): fall back to the gradient
            delta, decrement = -g, float(g @ g)
        if decrement <= tol * (1.0 + abs(f)):
            return v, steps, True
        t = 1.0
        while t > 1e-16:
            trial = v + t * delta
            f_trial = problem.value(trial, tau)
            if f_trial <= f - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            return v, steps, True  # no further decrease is representable
        if abs(f - f_trial) <= 1e-15 * (1.0 + abs(f)) and t < 1e-8:
            return trial, steps, True
        v, f = trial, f_trial
    return v, steps, False


def solve_q1(
    X: np.ndarray,
    y: np.ndarray,
    loss: Loss,
    cost: TransportCost,
    rho: float,
    fit_intercept: bool = True,
    taus: tuple[float, ...] = TAUS,
    init: NewtonResult | None = None,
) -> NewtonResult:
    """Minimise the exact q = 1 robust objective (or the ERM objective when ρ = 0)."""
    problem = _Problem(
        np.asarray(X, np.float64), np.asarray(y, np.float64), loss, cost, rho, fit_intercept
    )
    v = np.zeros(problem.dim)
    if init is not None:
        v[: problem.d], v[problem.d] = init.w, init.b
    if problem.switch:
        w_norm = smooth_dual_norm(v[: problem.d], problem.r, taus[0])[0]
        v[-1] = max(init.lam if init and init.lam else 1.0, 2.0 * problem.lip * w_norm + 1.0)
    total, ok = 0, True
    for k, tau in enumerate(taus):
        # intermediate stages only need to be as accurate as their own smoothing bias
        tol = 1e-15 if k == len(taus) - 1 else 1e-3 * tau
        v, steps, ok = _newton(problem, v, tau, tol=tol)
        total += steps
        if np.abs(v[: problem.d]).max(initial=0.0) > 1e8:
            ok = False  # the minimiser does not exist (e.g. separable data without robustness)
            break
    w, lam = problem.split(v)
    return NewtonResult(
        w.copy(), float(v[problem.d]), None if lam is None else float(lam), total, ok
    )

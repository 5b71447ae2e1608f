"""Fits against exact references: the Shafieezadeh-Abadeh et al. (2015) reformulation in
cvxpy to 1e-4 relative (objective and coefficients), and optimality checks elsewhere."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.entropic import EntropicConfig
from iclr25.core.dro_bound.fit import FitConfig, _design, fit_linear, robust_risk_and_grad
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.models import LinearModel
from iclr25.core.dro_bound.reference_cvxpy import robust_logistic_cvxpy, robust_regression_cvxpy
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.testing import assert_close


@pytest.mark.parametrize("kappa", [math.inf, 2.0, 0.8])
@pytest.mark.parametrize("p", [2.0, 1.0, math.inf])
def test_robust_logistic_matches_the_convex_reformulation(make_clf, kappa, p):
    """Known answer: Shafieezadeh-Abadeh, Mohajerin Esfahani & Kuhn (2015), Theorem 1,
    solved by cvxpy/Clarabel; our smoothed Newton must agree to 1e-4 relative."""
    X, y = make_clf(n=150, d=4, seed=1)
    rho = 0.05
    ours = fit_linear(
        X, y, "logistic", get_loss("logistic"), FitConfig(rho, TransportCost(p=p, kappa=kappa))
    )
    ref = robust_logistic_cvxpy(X, y, rho, kappa, p)
    assert ours.robust_objective == pytest.approx(ref["objective"], rel=1e-4)
    scale = np.abs(ref["coefficients"]).max()
    assert scale > 0.1  # a non-degenerate instance
    assert_close(ours.model.coef, ref["coefficients"], rtol=1e-4, atol=1e-4 * scale)
    assert ours.model.intercept == pytest.approx(ref["intercept"], rel=1e-4, abs=1e-4 * scale)
    assert ours.converged


def test_erm_logistic_matches_cvxpy(make_clf):
    X, y = make_clf(n=150, d=4, seed=2)
    ours = fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(0.0))
    ref = robust_logistic_cvxpy(X, y, 0.0)
    assert ours.robust_objective == pytest.approx(ref["objective"], rel=1e-6)
    assert_close(ours.model.coef, ref["coefficients"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("loss", ["absolute", "huber"])
def test_robust_lad_and_huber_match_cvxpy(make_reg, loss):
    X, y = make_reg(n=120, d=3, seed=4)
    ours = fit_linear(X, y, "linear", get_loss(loss, 0.5), FitConfig(0.1))
    ref = robust_regression_cvxpy(X, y, 0.1, loss, 0.5)
    assert ours.robust_objective == pytest.approx(ref["objective"], rel=1e-4)
    assert_close(ours.model.coef, ref["coefficients"], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "loss,q,kappa",
    [
        ("logistic", 2.0, math.inf),
        ("hinge", 2.0, math.inf),
        ("logistic", 2.0, 1.0),
        ("ramp", 1.0, math.inf),
    ],
)
def test_envelope_gradient_and_local_optimality(make_clf, loss, q, kappa):
    """The generic path: ∂R/∂θ by the envelope theorem equals finite differences where R is
    differentiable (κ = ∞: with finite κ the optimal λ* sits where a sample is indifferent
    between switching its label or not, a kink of R in θ), and the fitted θ is no worse
    than the ERM model, nor (convex losses) than nearby points."""
    X, y = make_clf(n=60, d=3, seed=5)
    L, cost, rho = get_loss(loss), TransportCost(q=q, kappa=kappa), 0.1
    A, base = _design(X, y, L, True)
    fit = fit_linear(X, y, "logistic", L, FitConfig(rho, cost))
    theta = np.r_[fit.model.coef, fit.model.intercept]
    if L.convex and cost.labels_fixed:
        probe = theta + np.array([0.3, -0.2, 0.1, 0.05])
        grad = robust_risk_and_grad(probe, A, base, L, cost, rho)[1]
        numeric = approx_fprime(
            probe, lambda t: robust_risk_and_grad(t, A, base, L, cost, rho)[0], 1e-7
        )
        assert_close(grad, numeric, rtol=1e-4, atol=1e-5)
    erm = fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(0.0))
    erm_theta = LinearModel("logistic", L, erm.model.coef, erm.model.intercept)  # same loss
    erm_robust = robust_risk(erm_theta, X, y, RiskConfig(rho, cost)).robust_risk
    assert fit.robust_objective <= erm_robust + 1e-9
    if not L.convex:
        return  # the ramp objective is not convex: L-BFGS returns a local solution
    rng = np.random.default_rng(0)
    for _ in range(5):
        nearby = theta + 1e-2 * rng.normal(size=theta.size)
        assert fit.robust_objective <= robust_risk_and_grad(nearby, A, base, L, cost, rho)[0] + 1e-8


def test_squared_loss_q2_fit_is_the_square_root_lasso(make_reg):
    """min (√(E r²) + √ρ‖w‖₂)² — the same minimiser as the square-root lasso."""
    import cvxpy as cp

    X, y = make_reg(n=100, d=3, seed=6)
    rho = 0.05
    fit = fit_linear(X, y, "linear", get_loss("squared"), FitConfig(rho, TransportCost(q=2.0)))
    w, b = cp.Variable(3), cp.Variable()
    obj = cp.norm(y - X @ w - b, 2) / math.sqrt(len(y)) + math.sqrt(rho) * cp.norm(w, 2)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    assert fit.robust_objective == pytest.approx(prob.value**2, rel=1e-5)
    assert_close(fit.model.coef, w.value, rtol=1e-3, atol=1e-4)


def test_entropic_fit_improves_the_entropic_objective(make_clf):
    X, y = make_clf(n=60, d=3, seed=7)
    cost, ent = TransportCost(q=2.0), EntropicConfig(0.05, samples=32)
    fit = fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(0.1, cost, ent))
    erm = fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(0.0))
    erm_ent = robust_risk(erm.model, X, y, RiskConfig(0.1, cost, entropic=ent)).robust_risk
    same = robust_risk(fit.model, X, y, RiskConfig(0.1, cost, entropic=ent)).robust_risk
    assert same == pytest.approx(fit.robust_objective, rel=1e-8)  # same samples, same value
    assert fit.robust_objective < erm_ent

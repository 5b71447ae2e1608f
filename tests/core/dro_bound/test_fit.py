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
from iclr25.core.dro_bound.reference_cvxpy import (
    robust_logistic_cvxpy,
    robust_margin_cvxpy,
    robust_regression_cvxpy,
)
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.errors import UsageError
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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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


# ---------------------------------------------------------------------------------------
# ERM for every loss, and the fit's check against its own starting point
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_squared_loss_erm_is_least_squares(seed):
    """Known answer: ρ = 0 with the squared loss is ordinary least squares
    (numpy.linalg.lstsq on [X, 1]), also with feature scales 10⁻² … 10² and a large
    intercept (the diabetes-like case that used to return w = 0, b = 0)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 5)) * np.array([0.01, 1.0, 10.0, 100.0, 3.0])
    y = X @ rng.normal(size=5) + 150.0 + 50.0 * rng.normal(size=150)
    fit = fit_linear(X, y, "linear", get_loss("squared"), FitConfig(0.0))
    ref, *_ = np.linalg.lstsq(np.c_[X, np.ones(len(X))], y, rcond=None)
    assert_close(np.r_[fit.model.coef, fit.model.intercept], ref, rtol=1e-8, atol=1e-8)
    assert fit.robust_objective == pytest.approx(np.mean((y - np.c_[X, np.ones(150)] @ ref) ** 2))
    assert fit.robust_objective < np.mean(y**2) / 2  # far from the zero model
    assert fit.improved


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_rho_zero_margin_fit_is_the_erm(make_clf, loss):
    """ρ = 0 is ERM: against cvxpy's ERM of the same loss (objective to 1e-6)."""
    X, y = make_clf(n=120, d=3, seed=11)
    ours = fit_linear(X, y, "logistic", get_loss(loss), FitConfig(0.0))
    ref = robust_margin_cvxpy(X, y, 0.0, loss)
    assert ours.robust_objective == pytest.approx(ref["objective"], rel=1e-6, abs=1e-8)
    assert ours.robust_objective == pytest.approx(ours.empirical_risk)


@pytest.mark.parametrize("loss", ["absolute", "huber"])
def test_rho_zero_regression_fit_is_the_erm(make_reg, loss):
    X, y = make_reg(n=120, d=3, seed=12)
    ours = fit_linear(X, y, "linear", get_loss(loss, 0.5), FitConfig(0.0))
    ref = robust_regression_cvxpy(X, y, 0.0, loss, 0.5)
    assert ours.robust_objective == pytest.approx(ref["objective"], rel=1e-6, abs=1e-8)


@pytest.mark.parametrize(
    "kind,loss",
    [
        ("logistic", "logistic"),
        ("logistic", "hinge"),
        ("linear", "absolute"),
        ("linear", "huber"),
        ("linear", "squared"),
    ],
)
def test_robust_fit_tends_to_the_erm_as_rho_vanishes(make_clf, make_reg, kind, loss):
    """Every loss through its robust path (q = 2: L-BFGS on the exact robust risk) at
    ρ = 10⁻¹⁰ ends at the ERM objective of the ρ = 0 path (least squares or Newton)."""
    X, y = (make_clf if kind == "logistic" else make_reg)(n=100, d=3, seed=13)
    L = get_loss(loss)
    erm = fit_linear(X, y, kind, L, FitConfig(0.0))
    tiny = fit_linear(X, y, kind, L, FitConfig(1e-10, TransportCost(q=2.0)))
    assert tiny.robust_objective >= erm.robust_objective - 1e-7 * max(1, erm.robust_objective)
    assert tiny.robust_objective == pytest.approx(erm.robust_objective, rel=1e-3, abs=1e-4)


def test_ramp_erm_is_no_worse_than_its_hinge_start(make_clf):
    """The ramp loss is not convex: its ERM is a local solution from the hinge ERM; it is
    at least as good as that start on the ramp risk, and so is the tiny-ρ robust fit."""
    X, y = make_clf(n=100, d=3, seed=13)
    ramp = get_loss("ramp")
    hinge = fit_linear(X, y, "logistic", get_loss("hinge"), FitConfig(0.0)).model
    start = float(np.mean(ramp.value(y * hinge.predict(X))))
    for rho, cost in ((0.0, TransportCost()), (1e-10, TransportCost(q=2.0))):
        fit = fit_linear(X, y, "logistic", ramp, FitConfig(rho, cost))
        assert fit.improved and fit.robust_objective <= start + 1e-6


def test_robust_hinge_matches_cvxpy(make_clf):
    X, y = make_clf(n=120, d=4, seed=14)
    ours = fit_linear(X, y, "logistic", get_loss("hinge"), FitConfig(0.08))
    ref = robust_margin_cvxpy(X, y, 0.08, "hinge")
    assert ours.robust_objective == pytest.approx(ref["objective"], rel=1e-4)


@pytest.mark.parametrize("q", [1.0, 1.5])
def test_squared_loss_below_q2_is_refused(make_reg, q):
    """The robust squared loss is +∞ for q < 2 (docs: refused); ρ = 0 stays allowed."""
    X, y = make_reg(n=40, d=2, seed=15)
    with pytest.raises(UsageError, match="--q 2"):
        fit_linear(X, y, "linear", get_loss("squared"), FitConfig(0.1, TransportCost(q=q)))
    fit_linear(X, y, "linear", get_loss("squared"), FitConfig(0.0, TransportCost(q=q)))


def test_a_fit_worse_than_its_start_returns_the_start(make_clf, monkeypatch):
    """A solver that ends above its starting point's objective (here: forced) is caught:
    the start (w = 0) is returned, improved = False, and the note says so."""
    import iclr25.core.dro_bound.fit as fit_module
    from iclr25.core.dro_bound.convex_solver import NewtonResult

    X, y = make_clf(n=60, d=3, seed=16)
    monkeypatch.setattr(
        fit_module, "solve_q1", lambda *a, **k: NewtonResult(np.full(3, 50.0), 9.0, None, 3, True)
    )
    fit = fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(0.1))
    assert not fit.improved and not fit.converged
    assert_close(fit.model.coef, np.zeros(3))
    assert fit.robust_objective == pytest.approx(math.log(2.0))  # the zero model's risk
    assert "starting point is returned" in fit.details["note"]


def test_every_fit_reports_its_start(make_clf):
    X, y = make_clf(n=80, d=3, seed=17)
    for cost in (TransportCost(), TransportCost(q=2.0)):
        fit = fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(0.05, cost))
        assert fit.improved and fit.robust_objective <= fit.start_objective + 1e-12

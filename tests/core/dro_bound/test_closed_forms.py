"""Known answers for the exact robust risks of linear models."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.core.dro_bound.closed_forms import (
    linear_inner_sup,
    linear_robust_risk,
    lipschitz_formula,
    piecewise_linear_dual,
    sup_1d,
)
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.losses import get_loss
from iclr25.testing import assert_close

RNG = np.random.default_rng(3)
U = RNG.normal(scale=1.5, size=120)  # margins or residuals of some linear model


def primal_lower_bound(loss, u, a, rho, eps=1e-9):
    """A feasible worst case for q = 1, κ = ∞: a mass ε/n of the best atom moves by
    t = ρn/ε along the adversarial direction (cost exactly ρ). Its expected loss is a lower
    bound of R_ρ that tends to E ℓ + ρ·Lip·a as ε -> 0 (slope-attaining losses)."""
    n = len(u)
    t = rho * n / eps
    gain = loss.worst_shift(u, a * t) - loss.value(u)
    return float(np.mean(loss.value(u)) + eps / n * gain.max())


@pytest.mark.parametrize("name", ["logistic", "hinge", "absolute", "huber"])
@pytest.mark.parametrize("rho", [0.01, 0.3])
def test_q1_robust_risk_is_empirical_plus_rho_lip_norm(name, rho):
    """Linear model, cost ‖x − x'‖ (q = 1), labels fixed, unbounded support: the robust risk
    equals E_n ℓ + ρ·Lip·‖θ‖_* (Shafieezadeh-Abadeh et al. 2015; Chen & Paschalidis 2018
    for absolute/Huber). Checked against a primal feasible distribution, to 1e-6."""
    loss = get_loss(name, huber_delta=0.8)
    a = 1.7
    res = linear_robust_risk(loss, U, a, TransportCost(), rho)
    expected = float(np.mean(loss.value(U))) + rho * loss.lipschitz * a
    assert res.value == pytest.approx(expected, rel=1e-12)
    lower = primal_lower_bound(loss, U, a, rho)
    assert lower <= res.value + 1e-12
    assert res.value - lower <= 1e-6 * res.value


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_ramp_loss_formula_is_only_an_upper_bound(rho):
    """The ramp loss is 1-Lipschitz but bounded, so its slope bound is never attained: the
    exact robust risk (1-D dual with the exact inner sup) stays below E ℓ + ρ·Lip·‖w‖_*
    (Kantorovich–Rubinstein), strictly for a large radius, and above a primal feasible point."""
    loss = get_loss("ramp")
    a = 1.3
    res = linear_robust_risk(loss, U, a, TransportCost(), rho)
    bound = lipschitz_formula(float(np.mean(loss.value(U))), rho, 1.0, a)
    assert res.value <= bound * (1 + 1e-10)
    if rho >= 0.5:
        assert res.value < bound - 0.05
    # primal: move the mass of the k points of smallest positive margin to margin 0 (loss 1)
    pos = np.sort(U[U > 0])
    moved, budget, value = 0, rho * len(U), float(np.sum(loss.value(U)))
    for z in pos:
        if budget < z / a:
            value += (budget * a / z) * (1.0 - loss.value(np.array([z]))[0])  # partial mass
            break
        budget -= z / a
        value += 1.0 - loss.value(np.array([z]))[0]
        moved += 1
    assert value / len(U) <= res.value + 1e-9


@pytest.mark.parametrize("kappa", [0.2, 1.0, 5.0])
def test_piecewise_linear_dual_matches_a_dense_search(kappa):
    """κ finite, q = 1: λρ + mean max(L(z), L(−z) − κλ) over λ ≥ Lip·a, minimised exactly;
    compared with the same function on a dense λ grid."""
    loss, a, rho = get_loss("logistic"), 0.9, 0.08
    kept, switched = loss.value(U), loss.value(-U)
    value, lam = piecewise_linear_dual(kept, switched, kappa, rho, a)
    grid = np.linspace(a, a + 20.0, 400001)
    best = math.inf
    for chunk in np.array_split(grid, 100):
        vals = chunk[:, None] * rho + np.maximum(
            kept[None, :], switched[None, :] - kappa * chunk[:, None]
        )
        best = min(best, float((vals.mean(axis=1)).min()))
    assert value <= best + 1e-12
    assert value == pytest.approx(best, abs=1e-6)
    res = linear_robust_risk(loss, U, a, TransportCost(kappa=kappa), rho)
    assert res.value == pytest.approx(value, rel=1e-12)


def test_squared_loss_q2_matches_the_regularised_form():
    """Squared loss, cost ‖x − x'‖_2² with the target fixed: R_ρ = (√(E r²) + √ρ·‖w‖₂)²
    (Blanchet, Kang & Murthy 2019, the square-root-lasso identity)."""
    loss = get_loss("squared")
    for a, rho in [(0.5, 0.1), (2.0, 0.01), (1.0, 1.0)]:
        res = linear_robust_risk(loss, U, a, TransportCost(q=2.0), rho)
        expected = (math.sqrt(np.mean(U**2)) + math.sqrt(rho) * a) ** 2
        assert res.value == pytest.approx(expected, rel=1e-8)


@given(st.floats(-4, 4), st.floats(0.05, 5.0), st.sampled_from(["logistic", "hinge", "huber"]))
@settings(max_examples=40)
def test_one_dimensional_search_finds_the_global_maximum(u, mu, name):
    loss = get_loss(name)
    value, s = sup_1d(loss, np.array([u]), mu, 2.0)
    grid = np.linspace(0, (loss.lipschitz / mu) * 1.01, 200001)
    brute = np.max(loss.worst_shift(u, grid) - mu * grid**2)
    assert value[0] >= brute - 1e-9
    assert value[0] <= brute + 1e-6 * (1 + abs(brute))
    assert_close(loss.worst_shift(u, s) - mu * s**2, value, rtol=1e-12, atol=1e-12)


LOSS_Q = [
    ("logistic", 1.0),
    ("hinge", 1.0),
    ("ramp", 1.0),
    ("absolute", 1.0),
    ("logistic", 2.0),
    ("hinge", 2.0),
    ("squared", 2.0),
    ("huber", 2.0),
]


@given(
    st.sampled_from(LOSS_Q),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.sampled_from([math.inf, 0.5, 3.0]),
    st.floats(0.0, 3.0),
)
@settings(max_examples=25)
def test_robust_risk_is_monotone_in_rho_and_above_the_empirical_risk(lq, r1, r2, kappa, a):
    name, q = lq
    loss = get_loss(name)
    if loss.kind != "margin":
        kappa = math.inf
    cost = TransportCost(q=q, kappa=kappa)
    u = U[:40]
    lo, hi = sorted((r1, r2))
    R_lo = linear_robust_risk(loss, u, a, cost, lo).value
    R_hi = linear_robust_risk(loss, u, a, cost, hi).value
    empirical = float(np.mean(loss.value(u)))
    assert R_lo >= empirical - 1e-10
    assert R_hi >= R_lo - 1e-8 * (1 + abs(R_lo))


def test_inner_sup_of_a_flat_model_is_the_loss():
    """w = 0: moving features changes nothing; only label switches (cost κ) can help."""
    loss = get_loss("logistic")
    res = linear_inner_sup(loss, U, 0.0, 1.0, TransportCost())
    assert_close(res.values, loss.value(U))
    flip = linear_inner_sup(loss, U, 0.0, 0.1, TransportCost(kappa=1.0))
    assert_close(flip.values, np.maximum(loss.value(U), loss.value(-U) - 0.1))

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.dro_bound.costs import TransportCost, dual_exponent, norm_p
from iclr25.core.dro_bound.losses import MARGIN_LOSSES, RESIDUAL_LOSSES, get_loss
from iclr25.errors import UsageError
from iclr25.testing import assert_close

P_VALUES = [1.0, 1.5, 2.0, 3.0, math.inf]


def test_dual_exponents_known_pairs():
    assert dual_exponent(1.0) == math.inf
    assert dual_exponent(math.inf) == 1.0
    assert dual_exponent(2.0) == 2.0
    assert_close(dual_exponent(3.0), 1.5)


@pytest.mark.parametrize("p", P_VALUES)
def test_norm_matches_numpy(p):
    v = np.random.default_rng(0).normal(size=(7, 5))
    assert_close(norm_p(v, p), np.linalg.norm(v, ord=p, axis=1), rtol=1e-12)


@given(
    st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    st.sampled_from(P_VALUES),
)
def test_holder_is_attained(w_list, p):
    """|wᵀΔ| ≤ ‖w‖_*‖Δ‖_p with equality for Δ ∝ sign(w)|w|^(p*−1) (the closed forms rely
    on the best move of length t shifting wᵀx by exactly ‖w‖_*·t)."""
    w = np.asarray(w_list)
    cost = TransportCost(p=p)
    r = cost.dual_p
    if math.isinf(r):
        delta = np.zeros(3)
        j = int(np.argmax(np.abs(w)))
        delta[j] = np.sign(w[j])
    elif r == 1.0:
        delta = np.sign(w)
    else:
        delta = np.sign(w) * np.abs(w) ** (r - 1.0)
    if not np.any(delta):
        return
    delta = delta / norm_p(delta, p)
    assert abs(w @ delta) == pytest.approx(cost.dual_norm(w), rel=1e-9, abs=1e-12)
    other = np.random.default_rng(1).normal(size=(20, 3))
    other /= norm_p(other, p)[:, None]
    assert np.all(np.abs(other @ w) <= cost.dual_norm(w) * (1 + 1e-12) + 1e-12)


def test_cost_with_label_switch():
    cost = TransportCost(p=2.0, q=2.0, kappa=3.0)
    x, xp = np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])
    assert_close(cost(x, np.array([1.0]), xp, np.array([1.0])), np.array([25.0]))
    assert_close(cost(x, np.array([1.0]), xp, np.array([-1.0])), np.array([28.0]))


@pytest.mark.parametrize(
    "kwargs,fix",
    [({"p": 0.5}, "p ≥ 1"), ({"q": 0.5}, "q = 1"), ({"kappa": 0.0}, "inf to keep labels")],
)
def test_cost_refuses_bad_values(kwargs, fix):
    with pytest.raises(UsageError, match=fix):
        TransportCost(**kwargs)


@pytest.mark.parametrize("name", MARGIN_LOSSES + RESIDUAL_LOSSES)
def test_derivatives_match_finite_differences(name):
    loss = get_loss(name, huber_delta=0.7)
    u = np.array([-2.3, -0.4, 0.37, 0.55, 1.8, 2.9])  # away from kinks
    h = 1e-6
    numeric = (loss.value(u + h) - loss.value(u - h)) / (2 * h)
    assert_close(loss.derivative(u), numeric, rtol=1e-5, atol=1e-6)
    num2 = (loss.derivative(u + h) - loss.derivative(u - h)) / (2 * h)
    assert_close(loss.second(u), num2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", MARGIN_LOSSES + RESIDUAL_LOSSES)
def test_lipschitz_constant_bounds_the_slope(name):
    loss = get_loss(name, huber_delta=0.7)
    u = np.linspace(-20, 20, 4001)
    slope = np.abs(np.diff(loss.value(u)) / np.diff(u))
    assert slope.max() <= loss.lipschitz * (1 + 1e-9)
    if loss.slope_attained:  # reached at the far end of the adversarial direction
        far = -50.0 if loss.kind == "margin" else 50.0
        assert abs(loss.derivative(np.array([far]))[0]) == pytest.approx(loss.lipschitz, 1e-9)


@pytest.mark.parametrize("name", ["logistic", "hinge", "absolute", "huber", "squared"])
def test_smoothed_losses_converge(name):
    loss = get_loss(name)
    u = np.linspace(-3, 3, 61)
    value, d1, _ = loss.smooth(u, 1e-9)
    assert_close(value, loss.value(u), atol=1e-8)


def test_unknown_loss_lists_the_known_ones():
    with pytest.raises(UsageError, match="logistic"):
        get_loss("cauchy")


def test_torch_values_match_numpy():
    import torch

    u = np.linspace(-3, 3, 13)
    for name in MARGIN_LOSSES + RESIDUAL_LOSSES:
        loss = get_loss(name, huber_delta=0.7)
        got = loss.torch_value(torch.as_tensor(u)).numpy()
        assert_close(got, loss.value(u), rtol=1e-12, atol=1e-12, what=name)

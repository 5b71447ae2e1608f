"""The general path (projected gradient ascent inside the 1-D dual) against the exact
closed forms on linear models: agreement to 1e-3 (the issue's requirement)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from iclr25.core.dro_bound.closed_forms import linear_inner_sup
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.inner_max import InnerMaxConfig, inner_maximize
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.models import LinearModel
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.testing import assert_close

W, B = np.array([1.0, -0.5, 0.3]), 0.2


@pytest.mark.parametrize(
    "loss,q,kappa",
    [
        ("logistic", 1.0, math.inf),
        ("logistic", 2.0, math.inf),
        ("logistic", 2.0, 0.7),
        ("hinge", 2.0, 0.7),
        ("hinge", 1.0, 0.7),
    ],
)
def test_general_path_matches_closed_forms(loss, q, kappa, make_clf, make_reg):
    X, y = make_clf(n=40)
    model = LinearModel("logistic", get_loss(loss), W, B)
    cfg = RiskConfig(0.1, TransportCost(2.0, q, kappa))
    exact = robust_risk(model, X, y, cfg)
    general = robust_risk(model, X, y, RiskConfig(0.1, cfg.cost, solver="pga"))
    assert general.method.startswith("estimate: projected gradient ascent")
    assert general.robust_risk == pytest.approx(exact.robust_risk, rel=1e-3)
    assert general.diagnostics["converged_fraction"] == 1.0


def test_general_path_regression_q2(make_clf, make_reg):
    X, y = make_reg(n=40)
    model = LinearModel("linear", get_loss("huber", 0.5), W, B)
    cfg = RiskConfig(0.2, TransportCost(2.0, 2.0))
    exact = robust_risk(model, X, y, cfg)
    general = robust_risk(model, X, y, RiskConfig(0.2, cfg.cost, solver="pga"))
    assert general.robust_risk == pytest.approx(exact.robust_risk, rel=1e-3)


def test_inner_sups_match_per_sample_and_runaway_is_detected(make_clf, make_reg):
    X, y = make_clf(n=30)
    loss = get_loss("logistic")
    model = LinearModel("logistic", loss, W, B)
    fn = model.torch_loss_fn(torch.float64, "cpu")
    xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    a = float(np.linalg.norm(W))
    u = model.scalars(X, y)
    # q = 1: just above the slope the sup is at ξ_i (φ_i = ℓ), just below it is +∞
    above = inner_maximize(fn, xt, yt, 1.01 * a, TransportCost(), 1.0)
    assert_close(above.values, loss.value(u), rtol=1e-9)
    assert above.unbounded == 0 and above.converged == 1.0
    below = inner_maximize(fn, xt, yt, 0.99 * a, TransportCost(), 1.0)
    assert below.unbounded == len(u)
    # q = 2: finite maximisers at a distance, equal to the 1-D exact search
    res = inner_maximize(fn, xt, yt, 0.6, TransportCost(q=2.0), 1.0)
    assert_close(
        res.values, linear_inner_sup(loss, u, a, 0.6, TransportCost(q=2.0)).values, rtol=1e-7
    )
    assert res.start_agreement > 0.9


def test_box_support_is_respected(make_clf, make_reg):
    X, y = make_clf(n=20)
    X = np.clip(X, -1.0, 1.0)
    model = LinearModel("logistic", get_loss("logistic"), W, B)
    fn = model.torch_loss_fn(torch.float64, "cpu")
    cfg = InnerMaxConfig(support=(-1.0, 1.0))
    res = inner_maximize(
        fn, torch.as_tensor(X), torch.as_tensor(y), 0.05, TransportCost(), 1.0, cfg
    )
    z = res.maximisers.numpy()
    assert z.min() >= -1.0 and z.max() <= 1.0
    assert res.unbounded == 0  # a bounded support keeps every sup finite
    # with λ this small the worst case sits on a face of the box, against the margin
    assert np.mean(np.isclose(np.abs(z), 1.0)) > 0.5


def test_empty_input(make_clf, make_reg):
    model = LinearModel("logistic", get_loss("logistic"), W, B)
    fn = model.torch_loss_fn(torch.float64, "cpu")
    res = inner_maximize(
        fn,
        torch.zeros((0, 3), dtype=torch.float64),
        torch.zeros(0, dtype=torch.float64),
        1.0,
        TransportCost(),
        1.0,
    )
    assert res.values.shape == (0,)

"""The theory radius: its formula on a hand-computed case, its cells, its refusals, and its
validity on bounded data (where it is a theorem, every θ must be covered)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.fit import FitConfig, fit_linear
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.synthetic import sample_synthetic, support_bounds
from iclr25.core.dro_bound.theory import (
    TheoryConfig,
    check_support,
    theory_radius,
    unavailable_reason,
)
from iclr25.errors import InputError, UsageError


def test_hand_computed_radius():
    """X = 2, n = 100, δ = 0.05, logistic, w = (0.3, 0.4), b = 0.2: cell (0, 0) with
    B₀ = 1/X = 0.5, C₀ = 1; reach B₀X + C₀ = 2, width 4; δ₀₀ = 0.05·36/π⁴;
    ρ = [2·2/√100 + 4·√(log(1/δ₀₀)/200)] / 0.5 = (0.4 + 0.565058)/0.5 = 1.930116."""
    logistic = get_loss("logistic")
    th = theory_radius(np.array([0.3, 0.4]), 0.2, 100, 0.05, logistic, TheoryConfig(2.0))
    assert th.cell == (0, 0)
    assert th.rademacher_term == pytest.approx(0.4)
    assert th.concentration_term == pytest.approx(0.565058, abs=1e-6)
    assert th.rho == pytest.approx(1.930116, abs=1e-6)
    assert th.epsilon == pytest.approx(0.965058, abs=1e-6)  # Lip = 1


def test_cells_and_the_flat_model():
    logistic = get_loss("logistic")
    cfg = TheoryConfig(2.0)
    assert theory_radius(np.array([0.6, 0.0]), -1.5, 100, 0.05, logistic, cfg).cell == (1, 1)
    assert theory_radius(np.array([8.0]), 0.0, 100, 0.05, logistic, cfg).cell == (4, 0)
    assert math.isinf(theory_radius(np.zeros(3), 0.3, 100, 0.05, logistic, cfg).rho)
    # regression: the width is Y + reach instead of 2·reach
    reg = theory_radius(
        np.array([0.5]), 0.0, 100, 0.05, get_loss("absolute"), TheoryConfig(2.0, 3.0)
    )
    assert reg.concentration_term == pytest.approx(
        (3.0 + 2.0) * math.sqrt(math.log(math.pi**4 / (36 * 0.05)) / 200)
    )


def test_refusals():
    logistic = get_loss("logistic")
    assert unavailable_reason("logistic", logistic, TransportCost(), False) is None
    assert "MLP" in unavailable_reason("mlp", logistic, TransportCost(), False)
    assert "--epsilon" in unavailable_reason("logistic", logistic, TransportCost(), True)
    assert "ramp" in unavailable_reason("logistic", get_loss("ramp"), TransportCost(), False)
    assert "--p 2 --q 1" in unavailable_reason("logistic", logistic, TransportCost(q=2.0), False)
    with pytest.raises(UsageError, match="--support-radius"):
        TheoryConfig(0.0)
    X = np.array([[3.0, 0.0], [0.1, 0.2]])
    with pytest.raises(InputError, match="data row 1 has ‖x‖₂ = 3 > --support-radius 2"):
        check_support(X, np.ones(2), logistic, TheoryConfig(2.0))
    with pytest.raises(UsageError, match="--target-bound"):
        check_support(X[1:], np.ones(1), get_loss("absolute"), TheoryConfig(2.0))


@pytest.mark.parametrize("name", ["ball-classes", "ball-linear"])
def test_the_theory_radius_covers_every_theta(name):
    """On bounded data the bound is a theorem: over 15 samples, the ERM model and 20
    random θ each satisfy E_n ℓ + ρ_θ·Lip·‖w‖₂ ≥ E_P ℓ (E_P from 100 000 fresh rows), and
    ε(θ) bounds the observed deviation E_P ℓ − E_n ℓ."""
    d, n = 4, 300
    X_test, y_test = sample_synthetic(name, 100_000, d, np.random.default_rng(99))
    support, target_bound = support_bounds(name, d)
    cfg = TheoryConfig(support, target_bound)
    kind = "logistic" if name == "ball-classes" else "linear"
    loss = get_loss("logistic" if kind == "logistic" else "absolute")
    rng = np.random.default_rng(5)
    for trial in range(15):
        X, y = sample_synthetic(name, n, d, np.random.default_rng(trial))
        check_support(X, y, loss, cfg)
        erm = fit_linear(X, y, kind, loss, FitConfig(0.0)).model
        thetas = [(erm.coef, erm.intercept)] + [
            (rng.normal(size=d) * rng.uniform(0.1, 3.0), rng.uniform(-1, 1)) for _ in range(20)
        ]
        for w, b in thetas:
            margin = y * (X @ w + b) if kind == "logistic" else y - X @ w - b
            margin_test = (
                y_test * (X_test @ w + b) if kind == "logistic" else y_test - X_test @ w - b
            )
            emp, true = loss.value(margin).mean(), loss.value(margin_test).mean()
            th = theory_radius(w, b, n, 0.05, loss, cfg)
            assert true - emp <= th.epsilon
            assert emp + th.rho * loss.lipschitz * np.linalg.norm(w) >= true

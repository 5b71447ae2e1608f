"""A small ReLU MLP trained robustly has a lower robust risk than the ERM one (both
measured by the converged general dual), and the ERM one fits the data better."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.entropic import EntropicConfig
from iclr25.core.dro_bound.fit_mlp import MLPConfig, train_mlp
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.core.dro_bound.synthetic import sample_synthetic
from iclr25.errors import UsageError


@pytest.mark.parametrize(
    "entropic", [None, pytest.param(EntropicConfig(0.02, samples=16), marks=pytest.mark.slow)]
)
def test_robust_training_lowers_the_robust_risk(entropic):
    X, y = sample_synthetic("gaussian-classes", 80, 2, np.random.default_rng(0))
    loss, cost, rho = get_loss("logistic"), TransportCost(q=2.0), 0.3
    config = MLPConfig(hidden=(8,), epochs=150, lr=0.02)
    erm = train_mlp(X, y, loss, 0.0, cost, config)
    rob = train_mlp(X, y, loss, rho, cost, config, entropic)
    risk = RiskConfig(rho, cost)
    r_erm = robust_risk(erm.model, X, y, risk)
    r_rob = robust_risk(rob.model, X, y, risk)
    assert r_rob.robust_risk < r_erm.robust_risk
    assert r_erm.empirical_risk < r_rob.empirical_risk
    for r in (r_erm, r_rob):
        assert r.diagnostics["converged_fraction"] == 1.0
        assert r.robust_risk >= r.empirical_risk


def test_mlp_config_validation():
    with pytest.raises(UsageError, match="--hidden"):
        MLPConfig(hidden=(0,))

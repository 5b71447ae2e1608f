"""A small ReLU MLP trained robustly (warm-started from the ERM network) has a robust-risk
estimate no higher than its ERM start's (both by the multi-start general dual), the ERM one
fits the data better, and the risk is labelled an estimate with its spread."""

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
    rob = train_mlp(X, y, loss, rho, cost, config, entropic, init=erm.model)
    risk = RiskConfig(rho, cost)
    r_erm = robust_risk(erm.model, X, y, risk)
    r_rob = robust_risk(rob.model, X, y, risk)
    assert r_rob.robust_risk <= r_erm.robust_risk  # no worse than the ERM starting point
    assert r_rob.robust_risk < r_erm.robust_risk - 0.01  # and here clearly better
    assert r_erm.empirical_risk < r_rob.empirical_risk
    for r in (r_erm, r_rob):
        assert not r.exact and r.method.startswith("estimate")
        assert r.diagnostics["restarts"] == 3 and r.diagnostics["spread_across_restarts"] >= 0
        assert r.diagnostics["converged_fraction"] == 1.0
        assert r.robust_risk >= r.empirical_risk


def test_the_fit_keeps_its_start_when_training_did_not_help():
    """The workflow's monotone check: an estimated objective above the start's keeps the
    start (ERM) and says so."""
    from iclr25.core.dro_bound.pipeline import _mlp_check

    worse = _mlp_check({"solver": "Adam"}, objective=0.40, start_objective=0.35)
    assert not worse["improved"] and "ERM network is returned" in worse["note"]
    better = _mlp_check({"solver": "Adam"}, objective=0.30, start_objective=0.35)
    assert better["improved"] and "note" not in better
    assert better["converged"] is None and "no convergence test" in better["stopping"]


def test_mlp_config_validation():
    with pytest.raises(UsageError, match="--hidden"):
        MLPConfig(hidden=(0,))

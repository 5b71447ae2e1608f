"""The risk/fit/certify workflows in-process: refusals with their fix (the CLI maps them to
exit 2), and what every result says about its radius and its rows."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.dro_bound.certificate import CertificateConfig
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.coverage import CoverageConfig
from iclr25.core.dro_bound.fit_mlp import MLPConfig
from iclr25.core.dro_bound.pipeline import certify_headline, run_certify, run_fit, run_risk
from iclr25.core.dro_bound.setup import DataSpec, ModelSpec, RobustSpec
from iclr25.core.dro_bound.theory import TheoryConfig
from iclr25.errors import InputError, UsageError

BALL = DataSpec(synthetic="ball-classes", n=200, d=3)
CLASSES = DataSpec(synthetic="gaussian-classes", n=200, d=3)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: run_fit(DataSpec(synthetic="linear-gaussian"), ModelSpec(),
                         RobustSpec(rho=0.1, cost=TransportCost(kappa=1.0))),
         "classification only"),
        (lambda: run_fit(BALL, ModelSpec(), RobustSpec(
            radius="theory", certificate=CertificateConfig(theory=TheoryConfig(5.0)))),
         "certify --rho theory"),
        (lambda: run_certify(BALL, ModelSpec(), RobustSpec(
            radius="theory", certificate=CertificateConfig(theory=TheoryConfig(1.0)))),
         "bounds every possible feature vector"),
        (lambda: run_certify(BALL, ModelSpec(loss="ramp"), RobustSpec(
            radius="theory", certificate=CertificateConfig(theory=TheoryConfig(5.0)))),
         "not ramp"),
        (lambda: run_fit(CLASSES, ModelSpec(model="mlp"), RobustSpec()),
         "--radius-constant C"),
        (lambda: run_risk(CLASSES, ModelSpec(coef=(1.0, 2.0)), RobustSpec(rho=0.1)),
         "one coefficient per feature"),
        (lambda: run_certify(DataSpec(synthetic="gaussian-classes", n=50, d=2), ModelSpec(),
                             RobustSpec()),
         "held-out rows"),
        (lambda: CoverageConfig(test_size=10**8), "pass a smaller --test-size"),
    ],
)  # fmt: skip
def test_refusals_name_the_fix(call, match):
    with pytest.raises((UsageError, InputError), match=match):
        call()


def test_fit_with_the_calibrated_radius_uses_the_certified_rows_only():
    res = run_fit(CLASSES, ModelSpec(), RobustSpec(certificate=CertificateConfig(bootstrap=20)))
    assert res["radius_kind"] == "calibrated" and res["data"]["certified_rows"] == 140
    assert res["radius"]["split"]["calibration_rows"] == 60
    assert res["improved"] and res["robust_objective"] <= res["start_objective"]
    assert res["robust_objective"] <= res["erm_robust_risk"] + 1e-12


def test_risk_at_a_given_radius_and_the_headline():
    res = run_risk(CLASSES, ModelSpec(coef=(1.0, 0.0, -1.0), intercept=0.1), RobustSpec(rho=0.05))
    assert res["radius_kind"] == "user" and res["risk_kind"] == "exact"
    # q = 1, κ = ∞: R = E_n ℓ + ρ‖w‖₂ exactly
    assert res["robust_risk"] == pytest.approx(res["empirical_risk"] + 0.05 * np.sqrt(2.0))
    cert = run_certify(CLASSES, ModelSpec(), RobustSpec(rho=0.05))
    line = certify_headline(cert)
    assert line.startswith("[user, exact] ρ = 0.05")
    assert ("holds" in line) == cert["bound_holds"]


def test_mlp_certificate_is_labelled_an_estimate():
    res = run_certify(
        DataSpec(synthetic="gaussian-classes", n=40, d=2),
        ModelSpec(model="mlp", mlp=MLPConfig(hidden=(4,), epochs=20)),
        RobustSpec(rho=0.2, cost=TransportCost(q=2.0)),
    )
    assert res["risk_kind"] == "estimate"
    assert res["statement"].startswith("[estimate — not a certificate")
    assert res["diagnostics"]["restarts"] == 3
    assert res["diagnostics"]["spread_across_restarts"] >= 0

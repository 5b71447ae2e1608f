"""The radius kinds (calibrated on held-out rows, user), the bootstrap estimator behind the
calibrated kind, and the coverage experiment (trials through iclr25.parallel)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.core.dro_bound.bootstrap import (
    BootstrapConfig,
    _optimism,
    bootstrap_radius,
)
from iclr25.core.dro_bound.certificate import (
    CertificateConfig,
    calibrated_radius,
    certificate_radius,
    split_rows,
    statement,
    user_radius,
)
from iclr25.core.dro_bound.closed_forms import linear_robust_risk
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.coverage import (
    CoverageConfig,
    TrialConfig,
    coverage_tasks,
    coverage_trial,
)
from iclr25.core.dro_bound.coverage_report import fit_slope, summarize, wilson_interval
from iclr25.core.dro_bound.fit import FitConfig, fit_linear
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.synthetic import sample_synthetic
from iclr25.errors import UsageError
from iclr25.parallel import Execution, run_tasks


def test_radius_formula():
    # ρ_n = c·√(log(1/δ)/n): c = 2, δ = e^−1, n = 100 -> 2·√(1/100) = 0.2
    assert certificate_radius(2.0, 100, math.exp(-1.0)) == pytest.approx(0.2)
    est = user_radius(CertificateConfig(0.05, 0.5), 400)
    assert est.rho == pytest.approx(0.5 * math.sqrt(math.log(20.0) / 400))
    assert est.kind == "user" and est.guarantee.startswith("user")
    given = user_radius(CertificateConfig(0.05), 400, rho=0.1)
    assert given.rho == 0.1 and given.constant == pytest.approx(0.1 * math.sqrt(400 / math.log(20)))


def test_bad_certificate_options():
    with pytest.raises(UsageError, match="--delta"):
        CertificateConfig(delta=1.5)
    with pytest.raises(UsageError, match="at least 10"):
        CertificateConfig(bootstrap=3)
    with pytest.raises(UsageError, match="--calibration-split"):
        CertificateConfig(calibration_split=1.0)


def test_split_rows_is_a_disjoint_cover():
    cal, cert = split_rows(100, 0.3, seed=4)
    assert len(cal) == 30 and len(cert) == 70
    assert not set(cal) & set(cert) and set(cal) | set(cert) == set(range(100))
    again = split_rows(100, 0.3, seed=4)
    assert (again[0] == cal).all()  # reproducible by seed
    with pytest.raises(UsageError, match="held-out rows"):
        split_rows(40, 0.3, seed=0)  # 12 held-out rows: too few


def _closed_form_pieces():
    cost = TransportCost()

    def risk(model, X, y, rho):
        return linear_robust_risk(
            model.loss, model.scalars(X, y), cost.dual_norm(model.coef), cost, rho
        ).value

    return cost, risk, (lambda m, X, y: m.losses(X, y))


def _refit(X, y, rho):
    return [fit_linear(X, y, "logistic", get_loss("logistic"), FitConfig(rho)).model]


def test_calibrated_radius_uses_no_certified_row():
    """By construction: calibrated_radius sees the held-out rows and the certified sample's
    size only. Changing every certified row leaves the radius unchanged; changing the
    held-out rows changes it; ρ = c·√(log(1/δ)/n_cert) with c from the held-out rows."""
    _, risk, losses = _closed_form_pieces()
    X, y = sample_synthetic("gaussian-classes", 200, 2, np.random.default_rng(0))
    cal, cert = split_rows(200, 0.3, seed=1)
    config = CertificateConfig(0.1, bootstrap=20)

    def radius(X_, y_):
        return calibrated_radius(X_[cal], y_[cal], len(cert), [], risk, losses, _refit, config, 3)

    first = radius(X, y)
    X2 = X.copy()
    X2[cert] = 100.0 * np.random.default_rng(9).normal(size=(len(cert), 2))
    assert radius(X2, y).rho == first.rho
    X3 = X.copy()
    X3[cal] *= 3.0
    assert radius(X3, y).rho != first.rho
    assert first.split == {
        "calibration_rows": 60,
        "certified_rows": 140,
        "calibration_split": 0.3,
        "rule": first.split["rule"],
    }
    assert first.rho == pytest.approx(certificate_radius(first.constant, 140, 0.1))


def test_bootstrap_radius_shrinks_like_one_over_root_n():
    """The estimated ρ at 4n is about half the one at n (c is n-free), on one distribution."""
    _, risk, losses = _closed_form_pieces()
    loss = get_loss("logistic")
    rhos = []
    for n in (300, 1200):
        X, y = sample_synthetic("gaussian-classes", n, 2, np.random.default_rng(n))
        fixed = [fit_linear(X, y, "logistic", loss, FitConfig(0.0)).model]
        est = bootstrap_radius(
            X,
            y,
            fixed,
            risk,
            losses,
            None,
            BootstrapConfig(0.1, 200),
            np.random.default_rng(0),
            1.0 / math.sqrt(n),
        )
        rhos.append(est.rho)
        assert 0.0 < est.rho < 1.0 and est.infinite_share == 0.0
    assert 0.3 < rhos[1] / rhos[0] < 0.8


def test_statement_names_its_kind_and_what_it_bounds():
    radius = user_radius(CertificateConfig(0.05, 0.5), 400)
    text = statement(0.41, 0.38, radius)
    for piece in ("[user]", "95%", "n = 400", "0.41", "0.38", f"{radius.rho:.4g}", "E_P[ℓ(θ; ξ)]"):
        assert piece in text
    smooth = statement(0.41, 0.38, radius, {"sigma": 0.05})
    assert "smoothed true risk" in smooth and "not a bound on E_P ℓ itself" in smooth
    assert "R^ε_ρ" in smooth
    estimate = statement(0.41, 0.38, radius, estimate=True)
    assert estimate.startswith("[estimate — not a certificate")


def test_wilson_interval_known_values():
    # 8 successes out of 10 at 95 %: (0.4902, 0.9433) (Wilson 1927; standard tables)
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_slope_known_answer():
    """Gaps exactly 2·n^(−1/2) (no noise): the fitted slope is −1/2, its interval a point."""
    ns = (100, 400, 1600)
    gaps = [np.full(5, 2.0 / math.sqrt(n)) for n in ns]
    out = fit_slope(ns, gaps)
    assert out["slope"] == pytest.approx(-0.5)
    assert out["ci"][0] == pytest.approx(-0.5) and out["contains_minus_half"]
    failed = fit_slope(ns, [np.full(5, -0.1)] * 3)
    assert failed["slope"] is None and "≤ 0" in failed["reason"]


class _Memoriser:
    """A 'model' that knows its training rows: loss 0 on them, 1 elsewhere."""

    def __init__(self, rows):
        self.rows = {tuple(r) for r in rows}

    def losses(self, X, y):
        return np.array([0.0 if tuple(r) in self.rows else 1.0 for r in X])


def test_optimism_correction_known_answer():
    """A memorising model has full-sample loss = out-of-bag share and out-of-bag loss 1, so
    the correction is E[1 − OOB share] = 1 − (1 − 1/n)^n (0.634 at n = 100); a fixed model
    gets none."""
    n = 100
    X = np.arange(n, dtype=float)[:, None]
    y = np.ones(n)
    rng = np.random.default_rng(0)
    fixed = _Memoriser(X[: n // 2])
    draws = []
    for _ in range(400):
        idx = rng.integers(0, n, size=n)
        draws.append((idx, [fixed, _Memoriser(X[idx])]))
    full, shift = _optimism(draws, X, y, lambda m, X_, y_: m.losses(X_, y_))
    assert full.shape == (400, 2)
    assert shift[1] == pytest.approx(1 - (1 - 1 / n) ** n, abs=0.01)
    assert abs(shift[0]) < 0.03  # a model that does not depend on the resample


def test_bootstrap_needs_enough_samples():
    X, y = sample_synthetic("gaussian-classes", 12, 2, np.random.default_rng(0))
    _, risk, losses = _closed_form_pieces()
    with pytest.raises(UsageError, match="--radius-constant"):
        bootstrap_radius(
            X, y, [], risk, losses, None, BootstrapConfig(0.05), np.random.default_rng(0), 0.1
        )


# ---------------------------------------------------------------------------------------
# coverage
# ---------------------------------------------------------------------------------------
def test_coverage_config_validation():
    with pytest.raises(UsageError, match="distribution"):
        CoverageConfig(distribution="uniform")
    with pytest.raises(UsageError, match="--trials"):
        CoverageConfig(trials=1)
    with pytest.raises(UsageError, match="theory kind does not apply"):
        CoverageConfig(kinds=("theory",))  # gaussian-classes is unbounded
    with pytest.raises(UsageError, match="--radius-constant"):
        CoverageConfig(kinds=("user",))
    with pytest.raises(UsageError, match="held-out rows"):
        CoverageConfig(n_grid=(40,))
    assert CoverageConfig().active_kinds == ("calibrated",)
    assert CoverageConfig(distribution="ball-classes").active_kinds == ("calibrated", "theory")


def test_one_trial_checks_every_kind_on_the_same_sample():
    """A trial on bounded data: each kind's certificate is evaluated for θ̂ and uniformly
    over the θ set; the theory radius (a proof under the support bound) holds for all."""
    config = CoverageConfig(
        "ball-classes", (200,), (3,), 2, 0.1, (), 0.5, bootstrap=10, test_size=20000
    )
    out = coverage_trial(TrialConfig(config, 3, 200, 0), seed=123)
    assert set(out) >= {"calibrated", "theory", "user", "empirical"}
    assert out["calibrated"]["certified_rows"] == 140 and out["user"]["certified_rows"] == 200
    assert out["theory"]["uniform"] and out["theory"]["thetas_covered"] == 1.0
    assert out["theory"]["rho"] > 10 * out["calibrated"]["rho"]  # a proof costs a lot
    assert out["empirical"]["rho"] == 0.0
    for kind in ("calibrated", "theory", "user", "empirical"):
        r = out[kind]
        assert r["gap"] == pytest.approx(r["robust_risk"] - r["target_risk"])
        assert r["covered"] == (r["gap"] >= 0)
        assert r["uniform"] <= r["covered"]


def test_coverage_holds_on_a_small_grid():
    """Gaussian classes, d = 2: with c calibrated on held-out rows the robust empirical risk
    is above the true risk in ≥ 1 − δ of trials, up to a binomial margin (3 s.e.); the
    control (ρ = 0) is not; the gap shrinks with n."""
    delta, trials = 0.1, 16
    config = CoverageConfig(
        n_grid=(200, 800), d_grid=(2,), trials=trials, delta=delta, bootstrap=20,
        test_size=20000, seed=1,
    )  # fmt: skip
    outcome = run_tasks(coverage_tasks(config), Execution(cache=False))
    results = summarize(config, outcome.results)
    margin = 3 * math.sqrt(delta * (1 - delta) / trials)
    cal = [c for c in results["cells"] if c["kind"] == "calibrated"]
    control = [c for c in results["cells"] if c["kind"] == "empirical"]
    for cell in cal:
        assert cell["coverage"] >= 1 - delta - margin, cell
        assert cell["mean_gap"] > 0
    assert all(c["coverage"] < 0.8 for c in control)
    assert cal[1]["mean_gap"] < cal[0]["mean_gap"]
    assert results["verdict"]["control_fails"] == "met"
    assert results["headline"].startswith("calibrated radius: coverage of θ̂ ≥")

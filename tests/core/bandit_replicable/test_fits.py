"""Exponent fits past exploration, and where two fitted regret curves cross."""

from __future__ import annotations

import math

import pytest

from iclr25.core.bandit_replicable import fits


def test_exploiting_rule():
    assert fits.exploiting(40.0, 100.0) and not fits.exploiting(60.0, 100.0)
    assert fits.exploiting(5.0, 0.0)  # nothing to exploit: every arm equal


def test_honest_fit_drops_exploration_horizons():
    t = [1e3, 1e4, 1e5, 1e6]
    regret = [0.64e3, 2 * 1e4**0.5, 2 * 1e5**0.5, 2 * 1e6**0.5]  # linear first, then √T
    fit = fits.honest_fit(t, regret, [False, True, True, True])
    assert fit["fitted_exponent"] == pytest.approx(0.5)
    assert fit["exploration_horizons"] == [1000] and fit["fit_horizons"] == [10**4, 10**5, 10**6]
    assert fit["fitted_exponent_all_horizons"] < 0.5  # the burn-in bends the naive fit
    two = fits.honest_fit(t, regret, [False, False, True, True])
    assert two["fitted_exponent"] == pytest.approx(0.5) and two["fitted_exponent_ci95"] is None


def test_crossing_known_answer():
    # R_a = 100 T^0.5, R_b = T^(2/3): 100 T^0.5 = T^(2/3) at T = 100^6 = 1e12
    t = [1e3, 1e4, 1e5, 1e6]
    a = fits.fit_exponent(t, [100 * x**0.5 for x in t])
    b = fits.fit_exponent(t, [x ** (2 / 3) for x in t])
    out = fits.crossing(a, b, beyond=1e6)
    assert out["horizon"] == pytest.approx(1e12, rel=1e-6)
    assert out["range"][0] == pytest.approx(1e12, rel=1e-4)  # exact fits: zero-width CIs
    assert "extrapolated" in out["note"]
    never = fits.crossing(b, a, beyond=1e6)
    assert never["horizon"] is None and "no crossing ahead" in never["note"]
    missing = fits.crossing({"fitted_exponent": None}, b, beyond=1e6)
    assert missing["horizon"] is None


def test_crossing_range_is_open_when_a_slope_interval_reaches_the_other():
    a = {
        "fitted_exponent": 0.5,
        "fitted_exponent_ci95": [0.3, 0.7],
        "log_intercept": 3.0,
        "centroid": [10.0, 8.0],
    }
    b = {
        "fitted_exponent": 0.6,
        "fitted_exponent_ci95": [0.55, 0.65],
        "log_intercept": 2.0,
        "centroid": [10.0, 8.0],
    }
    out = fits.crossing(a, b, beyond=1e6)
    assert out["horizon"] == pytest.approx(math.exp(10.0))
    assert out["range"][1] is None  # a slope of 0.7 > 0.65 never overtakes

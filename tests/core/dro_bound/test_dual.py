from __future__ import annotations

import math

import pytest

from iclr25.core.dro_bound.dual import minimize_dual, minimize_dual_by_slope, required_radius
from iclr25.errors import RunFailure


def with_slope(lam: float) -> tuple[float, float]:
    """(Φ(λ), −Φ'(λ)) for Φ = 1/λ."""
    return (1.0 / lam, 1.0 / lam**2) if lam > 0 else (math.inf, math.inf)


def phi_known(lam: float) -> float:
    """Φ(λ) = 1/λ (convex, decreasing): g(λ) = λρ + 1/λ has its minimum 2√ρ at λ = 1/√ρ."""
    return 1.0 / lam if lam > 0 else math.inf


@pytest.mark.parametrize("rho", [1e-4, 0.3, 25.0])
def test_value_search_finds_the_known_minimum(rho):
    sol = minimize_dual(phi_known, rho)
    assert sol.value == pytest.approx(2 * math.sqrt(rho), rel=1e-9)
    assert sol.lam == pytest.approx(1 / math.sqrt(rho), rel=1e-4)


@pytest.mark.parametrize("rho", [1e-4, 0.3, 25.0])
def test_slope_search_finds_the_known_minimum(rho):
    sol = minimize_dual_by_slope(with_slope, rho, lam_scale=1.0)
    assert sol.value == pytest.approx(2 * math.sqrt(rho), rel=1e-12)
    assert sol.lam == pytest.approx(1 / math.sqrt(rho), rel=1e-8)
    warm = minimize_dual_by_slope(with_slope, rho, lam_guess=3.0 / math.sqrt(rho))
    assert warm.value == pytest.approx(sol.value, rel=1e-12)


def test_minimum_at_the_feasibility_boundary():
    """Φ = c for λ ≥ 2, +∞ below (the q = 1 closed-form shape): λ* = 2."""
    sol = minimize_dual(lambda lam: 1.0 if lam >= 2.0 else math.inf, 0.5, lam_min=2.0)
    assert sol.lam == pytest.approx(2.0)
    assert sol.value == pytest.approx(2.0)


def test_everywhere_infinite_dual_is_a_run_failure():
    with pytest.raises(RunFailure, match="bounded support"):
        minimize_dual(lambda lam: math.inf, 0.1)


def test_required_radius_inverts_a_known_risk_curve():
    """R_ρ = 1 + 2√ρ (concave, increasing): R_ρ = 2 at ρ = 1/4."""
    assert required_radius(lambda r: 1 + 2 * math.sqrt(r), 2.0, 1e-3) == pytest.approx(0.25, 1e-9)
    assert required_radius(lambda r: 1 + 2 * math.sqrt(r), 0.5, 1e-3) == 0.0
    assert required_radius(lambda r: min(1 + r, 1.5), 2.0, 1e-3) == math.inf

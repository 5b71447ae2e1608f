"""Entropic robust risk: the log-sum-exp paths against their reference, and the ε -> 0
limit against the exact robust risk."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.entropic import EntropicConfig, minimize_entropic_dual
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.models import LinearModel
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.errors import RunFailure, UsageError
from iclr25.gpu.kernels.dro_logsumexp import lse_rows_cuda, lse_rows_reference, lse_rows_torch
from iclr25.testing import assert_close

SHAPES = [(1, 1), (5, 7), (33, 257), (3, 1000), (0, 4), (4, 0)]


def _inputs(n, m, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=3.0, size=(n, m)), rng.exponential(size=(n, m))


def test_reference_known_answer():
    """Two samples with (L − λC)/ε = 0 and log 3: log mean exp = log 2; weights 1/4, 3/4."""
    L = np.array([[0.0, math.log(3.0)]])
    C = np.array([[1.0, 5.0]])
    lse, wc = lse_rows_reference(L, C, 0.0, 1.0)
    assert_close(lse, np.array([math.log(2.0)]))
    assert_close(wc, np.array([0.25 * 1.0 + 0.75 * 5.0]))


@pytest.mark.parametrize("n,m", SHAPES)
@pytest.mark.parametrize("lam,eps", [(0.0, 1.0), (0.7, 0.01), (3.0, 1e-4)])
def test_torch_path_matches_reference(n, m, lam, eps):
    L, C = _inputs(n, m)
    lse, wc = lse_rows_torch(torch.as_tensor(L), torch.as_tensor(C), lam, eps)
    ref_lse, ref_wc = lse_rows_reference(L, C, lam, eps)
    assert_close(lse.numpy(), ref_lse, rtol=1e-12, atol=1e-10)
    assert_close(wc.numpy(), ref_wc, rtol=1e-12, atol=1e-10)


def test_extreme_values_do_not_overflow():
    L = np.array([[1e4, -1e4, 0.0]])
    C = np.zeros((1, 3))
    lse, wc = lse_rows_torch(torch.as_tensor(L), torch.as_tensor(C), 0.0, 1e-3)
    assert np.isfinite(lse.numpy()).all()
    assert lse.item() == pytest.approx(1e7 - math.log(3.0))


@pytest.mark.gpu
@pytest.mark.parametrize("n,m", SHAPES + [(20000, 512), (7, 4099)])
def test_cuda_kernel_matches_reference(n, m):
    import cupy as cp

    L, C = _inputs(n, m, seed=n + m)
    for lam, eps in [(0.0, 1.0), (0.7, 0.05), (2.0, 0.01)]:
        lse, wc = lse_rows_cuda(cp.asarray(L), cp.asarray(C), lam, eps)
        ref_lse, ref_wc = lse_rows_reference(L.astype(np.float32), C.astype(np.float32), lam, eps)
        assert_close(cp.asnumpy(lse), ref_lse, rtol=1e-4, atol=1e-3)
        assert_close(cp.asnumpy(wc), ref_wc, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("kappa", [math.inf, 1.0])
def test_entropic_risk_on_cuda_matches_cpu(make_clf, kappa):
    """The whole entropic path on the device (float32 tensors, the CUDA kernel inside the
    1-D dual) against the float64 CPU path on the same samples (drawn on the CPU)."""
    X, y = make_clf(n=301, d=3)
    model = LinearModel("logistic", get_loss("logistic"), np.array([1.0, -0.5, 0.3]), 0.1)
    cost = TransportCost(2.0, 2.0, kappa)
    ent = EntropicConfig(0.05, sigma=0.2, samples=257)
    cpu = robust_risk(model, X, y, RiskConfig(0.05, cost, entropic=ent))
    gpu = robust_risk(model, X, y, RiskConfig(0.05, cost, entropic=ent, device="cuda"))
    assert gpu.diagnostics["backend"] == "cuda-kernel"
    assert gpu.robust_risk == pytest.approx(cpu.robust_risk, rel=1e-4)
    assert gpu.lam == pytest.approx(cpu.lam, rel=1e-3)


def test_dual_minimiser_is_stationary():
    L, C = _inputs(50, 64)
    rho, eps = 0.5, 0.1
    value, lam, wc, _ = minimize_entropic_dual(torch.as_tensor(L), torch.as_tensor(C), rho, eps)
    assert lam > 0
    assert wc == pytest.approx(rho, rel=1e-8)  # g'(λ*) = ρ − mean weighted cost = 0

    def g(x):
        lse, _ = lse_rows_reference(L, C, x, eps)
        return x * rho + eps * lse.mean()

    assert value == pytest.approx(g(lam), rel=1e-10)
    assert value <= min(g(lam * 0.99), g(lam * 1.01))


@pytest.mark.parametrize("kappa", [math.inf, 1.0])
def test_entropic_tends_to_the_unregularised_risk(kappa):
    """As ε -> 0 (with many samples) R^ε_ρ -> R_ρ; the gap shrinks with ε."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 1))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=20) > 0, 1.0, -1.0)
    model = LinearModel("logistic", get_loss("logistic"), np.array([1.5]), 0.1)
    cost = TransportCost(2.0, 2.0, kappa)
    exact = robust_risk(model, X, y, RiskConfig(0.1, cost)).robust_risk
    gaps = []
    for eps in (0.1, 0.01, 1e-4):
        ent = EntropicConfig(eps, sigma=0.5, samples=20000)
        gaps.append(
            abs(robust_risk(model, X, y, RiskConfig(0.1, cost, entropic=ent)).robust_risk - exact)
        )
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-3 * exact


def test_entropic_never_exceeds_the_unregularised_risk(make_clf):
    """ε·log mean_j exp(a_j/ε) ≤ max_j a_j ≤ sup_ζ a(ζ), so for every λ, ε, σ and sample the
    entropic dual lies below the exact one, hence R^ε_ρ ≤ R_ρ (whatever the samples)."""
    X, y = make_clf(n=30, d=2)
    model = LinearModel("logistic", get_loss("logistic"), np.array([1.2, -0.7]), 0.2)
    for cost in (TransportCost(2.0, 1.0), TransportCost(2.0, 2.0, 0.5)):
        exact = robust_risk(model, X, y, RiskConfig(0.2, cost)).robust_risk
        for eps, sigma in ((1.0, 0.3), (0.05, 1.0), (1e-3, 0.1)):
            ent = EntropicConfig(eps, sigma=sigma, samples=200)
            value = robust_risk(model, X, y, RiskConfig(0.2, cost, entropic=ent)).robust_risk
            assert value <= exact + 1e-9, (cost, eps, sigma)


def _gaussian_entropic_dual(lam, rho, eps, sigma, d, mean_loss, w_sq):
    """λρ + mean_i ε log E exp((ℓ(ζ) − λ‖ζ − ξ_i‖²)/ε) for a loss linear in ζ,
    ℓ(ζ) = ℓ(ξ_i) − wᵀ(ζ − ξ_i), and ζ ~ N(ξ_i, σ²I): with z ~ N(0, I),
    E exp(α·z − β‖z‖²) = (1 + 2β)^(−d/2) exp(‖α‖²/(2(1 + 2β))), α = −σw/ε, β = λσ²/ε
    (a Gaussian integral)."""
    beta = lam * sigma**2 / eps
    return (
        lam * rho
        + mean_loss
        - 0.5 * eps * d * math.log1p(2 * beta)
        + sigma**2 * w_sq / (2 * eps * (1 + 2 * beta))
    )


def test_entropic_matches_the_gaussian_closed_form():
    """A loss linear in ζ (absolute residuals that stay positive: y ≫ wᵀζ) and cost ‖·‖₂²
    with the Gaussian reference: the entropic robust risk has a closed form (above), which
    the Monte Carlo estimate (sampling, cost, log-sum-exp, 1-D dual) must reproduce."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(3)
    n, d, rho, eps, sigma = 40, 2, 0.1, 0.2, 0.3
    X = rng.normal(size=(n, d))
    y = 50.0 + rng.normal(size=n)
    w = np.array([0.6, -0.8])
    model = LinearModel("linear", get_loss("absolute"), w, 0.5)
    mean_loss = float(np.mean(model.losses(X, y)))
    sol = minimize_scalar(
        lambda lam: _gaussian_entropic_dual(lam, rho, eps, sigma, d, mean_loss, w @ w),
        bounds=(0.0, 100.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert sol.x > 0.05  # an interior λ*: the ρ term is active
    ent = EntropicConfig(eps, sigma=sigma, samples=20000)
    report = robust_risk(model, X, y, RiskConfig(rho, TransportCost(2.0, 2.0), entropic=ent))
    assert report.diagnostics["sigma"] == sigma
    # the margin over the empirical risk is ≈ 0.073; Monte Carlo error ≈ 2e-4 (three seeds),
    # while a σ off by 10 % moves it by 0.019
    assert report.robust_risk - mean_loss == pytest.approx(sol.fun - mean_loss, abs=1e-3)
    assert report.lam == pytest.approx(sol.x, rel=0.01)
    assert report.diagnostics["mean_weighted_cost"] == pytest.approx(rho, rel=1e-6)


def test_entropic_needs_positive_radius_and_close_samples(make_clf):
    X, y = make_clf(n=20)
    model = LinearModel("logistic", get_loss("logistic"), np.array([1.0, 0.0, 0.0]), 0.0)
    with pytest.raises(UsageError, match="ρ = 0 is −∞"):
        robust_risk(model, X, y, RiskConfig(0.0, entropic=EntropicConfig(0.1)))
    huge = EntropicConfig(0.1, samples=10**7)  # n·m·d = 6e8 values: refused, not allocated
    with pytest.raises(UsageError, match="lower --samples"):
        robust_risk(model, X, y, RiskConfig(0.01, entropic=huge))
    far = EntropicConfig(0.1, sigma=50.0, samples=4)
    with pytest.raises(RunFailure, match="--sigma"):
        robust_risk(model, X, y, RiskConfig(0.01, entropic=far))


def test_smoothed_losses_known_answer():
    """The target of the entropic guarantee, E_{ζ~N(x, σ²I)} ℓ(θ; ζ), for the squared loss:
    E (r − σ wᵀN)² = r² + σ²‖w‖² (a Gaussian moment), by Monte Carlo to 3 %."""
    from iclr25.core.dro_bound.entropic import smoothed_losses

    model = LinearModel("linear", get_loss("squared"), np.array([1.0, -2.0]), 0.5)
    x = torch.tensor([[0.0, 0.0], [1.0, 1.0], [-1.0, 2.0]], dtype=torch.float64)
    y = torch.tensor([1.0, 0.0, 3.0], dtype=torch.float64)
    sigma = 0.7
    fn = model.torch_loss_fn(torch.float64, "cpu")
    gen = torch.Generator().manual_seed(0)
    got = smoothed_losses(fn, x, y, TransportCost(q=2.0), sigma, 20000, gen, False)
    r = y.numpy() - x.numpy() @ model.coef - model.intercept
    assert_close(got, r**2 + sigma**2 * 5.0, rtol=0.03)


def test_entropic_fit_starts_from_erm_and_checks_it(make_clf):
    """The entropic fit is warm-started from ERM and never ends above that start."""
    from iclr25.core.dro_bound.fit import FitConfig, fit_linear

    X, y = make_clf(n=60, d=3, seed=21)
    cfg = FitConfig(0.1, TransportCost(q=2.0), EntropicConfig(0.05, samples=16))
    fit = fit_linear(X, y, "logistic", get_loss("logistic"), cfg)
    assert fit.improved and fit.robust_objective <= fit.start_objective + 1e-9
    assert "from the ERM model" in fit.solver

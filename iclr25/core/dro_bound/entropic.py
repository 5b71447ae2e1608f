"""Entropic-regularised robust risk with a Gaussian reference, by Monte Carlo.

The regularised WDRO dual of Azizian, Iutzeler & Malick (2023), also covered by the
guarantees of Le & Malick (2025)::

    R^ε_ρ(θ; P_n) = inf_{λ ≥ 0} λρ
                    + (1/n) Σ_i ε log E_{ζ ~ π_0(·|ξ_i)} exp((ℓ(θ; ζ) − λ c(ξ_i, ζ)) / ε)

with the reference π_0(·|ξ_i): features x_i + σ·N(0, I); labels kept when κ = ∞ (and for
regression), otherwise kept or switched with probability 1/2 each (switching costs κ).
The expectation is a mean over m samples per point drawn once (common random numbers), so
the objective is a deterministic, smooth, convex function of λ; the 1-D minimisation
solves g'(λ) = ρ − mean_i Σ_j softmax_j((ℓ_ij − λ c_ij)/ε)·c_ij = 0 by bracketing and Brent.

Code names -> symbols: ``epsilon`` -> ε, ``sigma`` -> σ, ``samples`` -> m, ``L`` -> ℓ(θ; ζ_ij),
``C`` -> c(ξ_i, ζ_ij). As ε -> 0 the value tends to λρ + mean_i max_j (ℓ_ij − λ c_ij), and as m
grows that tends to the unregularised robust risk (tested). The default σ = ρ^(1/q)/√d
puts a typical sample at transport cost ≈ ρ (a choice; the paper leaves σ free). With
finitely many samples the dual is bounded below only if some samples cost less than ρ on
average; otherwise the run stops with an error naming --sigma and --samples.

The log-sum-exp rows are the hot path: a CuPy kernel on CUDA, vectorised torch on CPU
(:mod:`iclr25.gpu.kernels.dro_logsumexp`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.errors import RunFailure, UsageError

MAX_SAMPLE_VALUES = 6e7  # n·m·d float64 values of ζ kept in memory (≈ 0.5 GB)


@dataclass(frozen=True)
class EntropicConfig:
    epsilon: float  # ε > 0, the regularisation strength
    sigma: float | None = None  # σ of the Gaussian reference; None -> ρ^(1/q)/√d
    samples: int = 64  # m, Monte Carlo samples per data point

    def __post_init__(self) -> None:
        if not (self.epsilon > 0) or not math.isfinite(self.epsilon):
            raise UsageError(f"--epsilon {self.epsilon} is not positive", "pass ε > 0, e.g. 0.01")
        if self.sigma is not None and not (self.sigma > 0):
            raise UsageError(f"--sigma {self.sigma} is not positive", "pass σ > 0")
        if self.samples < 1:
            raise UsageError(f"--samples {self.samples} is below 1", "pass at least 1 sample")

    def sigma_for(self, rho: float, cost: TransportCost, d: int) -> float:
        """σ, by default ρ^(1/q)/√d: a typical sample then moves by about ρ^(1/q)."""
        if self.sigma is not None:
            return self.sigma
        return max(rho, 1e-6) ** (1.0 / cost.q) / math.sqrt(max(d, 1))


@dataclass
class ReferenceSamples:
    zeta: object  # torch (n, m, d): features of ζ_ij
    labels: object  # torch (n, m): labels of ζ_ij
    cost: object  # torch (n, m): c(ξ_i, ζ_ij)
    flipped: object  # torch (n, m) bool


@dataclass(frozen=True)
class EntropicResult:
    value: float  # R^ε_ρ
    lam: float
    mean_weighted_cost: float  # = ρ at an interior optimum
    epsilon: float
    sigma: float
    samples: int
    backend: str  # "cuda-kernel", "torch-cuda" or "torch-cpu"


def draw_reference(
    x, y, cost: TransportCost, sigma: float, m: int, generator, switch_labels: bool
) -> ReferenceSamples:
    """ζ_ij ~ π_0(·|ξ_i) for torch x (n, d), y (n,); drawn on CPU for reproducibility."""
    import torch

    from iclr25.core.dro_bound.inner_max import feature_cost_torch

    n, d = x.shape
    if n * m * max(d, 1) > MAX_SAMPLE_VALUES:
        raise UsageError(
            f"n·m·d = {n}·{m}·{d} = {n * m * d:.2g} Monte Carlo values is too many "
            f"(limit {MAX_SAMPLE_VALUES:.0e}: all samples stay in memory)",
            "lower --samples",
        )
    noise = torch.randn((n, m, d), generator=generator, dtype=torch.float64)
    zeta = x.detach().cpu().double()[:, None, :] + sigma * noise  # (n, m, d)
    feat = feature_cost_torch(zeta - x.detach().cpu().double()[:, None, :], cost)  # (n, m)
    if switch_labels:
        flipped = torch.rand((n, m), generator=generator, dtype=torch.float64) < 0.5
    else:
        flipped = torch.zeros((n, m), dtype=torch.bool)
    labels = torch.where(flipped, -y.cpu().double()[:, None], y.cpu().double()[:, None])
    c = feat + (flipped.double() * cost.kappa if switch_labels else 0.0)
    to = {"dtype": x.dtype, "device": x.device}
    return ReferenceSamples(zeta.to(**to), labels.to(**to), c.to(**to), flipped.to(x.device))


def lse_rows(L, C, lam: float, eps: float, device_kind: str):
    """(lse (n,), wc (n,)) as float64 numpy, with the kernel on CUDA when CuPy is there."""
    from iclr25.gpu import get_cupy
    from iclr25.gpu.kernels.dro_logsumexp import lse_rows_cuda, lse_rows_torch

    if device_kind == "cuda" and get_cupy() is not None and L.is_cuda:
        cp = get_cupy()
        lse, wc = lse_rows_cuda(cp.asarray(L.float()), cp.asarray(C.float()), lam, eps)
        return cp.asnumpy(lse).astype(np.float64), cp.asnumpy(wc).astype(np.float64), "cuda-kernel"
    lse, wc = lse_rows_torch(L, C, lam, eps)
    backend = "torch-cuda" if L.is_cuda else "torch-cpu"
    return lse.double().cpu().numpy(), wc.double().cpu().numpy(), backend


def minimize_entropic_dual(L, C, rho: float, eps: float, device_kind: str = "cpu"):
    """min_λ≥0 λρ + mean_i ε·lse_i(λ): returns (value, λ*, mean weighted cost, backend)."""
    backend = "torch-cpu"

    def slope(lam: float) -> float:  # g'(λ) = ρ − mean_i wc_i(λ), non-decreasing
        nonlocal backend
        _, wc, backend = lse_rows(L, C, lam, eps, device_kind)
        return rho - float(np.mean(wc))

    def value(lam: float) -> tuple[float, float]:
        lse, wc, _ = lse_rows(L, C, lam, eps, device_kind)
        return lam * rho + eps * float(np.mean(lse)), float(np.mean(wc))

    if slope(0.0) >= 0.0:
        lam = 0.0
    else:
        hi = 1.0
        while slope(hi) < 0.0 and hi < 1e15:
            hi *= 4.0
        if slope(hi) < 0.0:
            raise RunFailure(
                f"the entropic dual is unbounded below: the Monte Carlo samples cost more than "
                f"ρ = {rho:g} on average even at their closest",
                "decrease --sigma or increase --samples (or --rho)",
            )
        lam = brentq(slope, 0.0, hi, xtol=1e-14, rtol=1e-12, maxiter=200)
    val, wc = value(lam)
    return val, lam, wc, backend


def entropic_robust_risk(
    loss_fn,
    x,
    y,
    cost: TransportCost,
    rho: float,
    config: EntropicConfig,
    generator,
    switch_labels: bool,
    device_kind: str = "cpu",
) -> EntropicResult:
    """R^ε_ρ(θ; P_n) for a torch per-sample loss ``loss_fn(x (N, d), y (N,))``."""
    import torch

    sigma = config.sigma_for(rho, cost, x.shape[1])
    ref = draw_reference(x, y, cost, sigma, config.samples, generator, switch_labels)
    n, m, d = ref.zeta.shape
    with torch.no_grad():
        L = loss_fn(ref.zeta.reshape(n * m, d), ref.labels.reshape(n * m)).reshape(n, m)
    val, lam, wc, backend = minimize_entropic_dual(L, ref.cost, rho, config.epsilon, device_kind)
    return EntropicResult(val, lam, wc, config.epsilon, sigma, config.samples, backend)


def smoothed_losses(
    loss_fn, x, y, cost: TransportCost, sigma: float, samples: int, generator, switch_labels: bool
) -> np.ndarray:
    """E_{ζ~π₀(·|ξ_i)} ℓ(θ; ζ) per sample, (n,): the mean over ``samples`` reference draws.

    The quantity the entropic guarantee bounds (its mean over P is the smoothed true risk):
    π₀ itself is a feasible coupling of the regularised problem once ρ exceeds its mean
    transport cost, and it pays no entropy penalty, so R^ε_ρ(θ; P) ≥ E_P E_π₀ ℓ there."""
    import torch

    ref = draw_reference(x, y, cost, sigma, samples, generator, switch_labels)
    n, m, d = ref.zeta.shape
    with torch.no_grad():
        L = loss_fn(ref.zeta.reshape(n * m, d), ref.labels.reshape(n * m)).reshape(n, m)
    return L.double().mean(dim=1).cpu().numpy()

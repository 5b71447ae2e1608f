"""The forward-backward probe on an image diffusion model (the paper's second path).

Noise an image x_0 to a fraction t of the T diffusion steps, x_τ = √ᾱ_τ x_0 + σ_τ ε
(τ = round(t·T) − 1), run the *stochastic* reverse process from τ back to 0 (DDPM
ancestral sampling, Ho et al. 2020 Alg. 2, optionally on a respaced grid of ``steps``
points: DDIM with η = 1, which equals DDPM when the grid is every step), and measure what
changed. DDIM with η = 0 is a deterministic map, not a posterior sample: allowed with
``sampler="ddim"`` and reported as such.

Tokens: pixels, or P×P patches (``patch``); the change of a token is its mean squared
difference, or 1[change > ``threshold``] (binary). χ, χ̃ and the class change (the shipped
digit classifier's label of x_0 against that of x̂_0) are as in :mod:`observables`; C(r)
averages covariances over token pairs at Euclidean grid distance r (rounded). The class
midpoint is where the class change first reaches half of its largest measured value (a
generator's classes need not be uniform, so 1 − 1/n_c is not its ceiling).

Control ``gaussian``: data drawn from N(μ, Σ) with the data's mean and covariance (plus a
1e-4 ridge), denoised by *exact* posterior sampling, x_0 | x_τ ~ N(m, S) with
S = (Σ⁻¹ + (ᾱ/(1 − ᾱ)) I)⁻¹ and m = S (Σ⁻¹ μ + √ᾱ/(1 − ᾱ) x_τ): the same probe on data with
the same second moments and no hierarchy.

Hypothesis (fixed here): the model's χ̃ has an interior peak (not at the first or last
time of the grid) within 0.15 (in units of T) of the class midpoint; the Gaussian control
has no interior peak. Reported plainly either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from iclr25.core.diffusion_probe import observables

PEAK_TOLERANCE_T = 0.15


@dataclass(frozen=True)
class ImageProbeConfig:
    times: tuple[float, ...] = tuple(round(0.1 * i, 10) for i in range(1, 10))
    samples: int = 256
    patch: int = 1  # token = P×P patch (1 = pixel)
    threshold: float | None = None  # binary change above this mean squared difference
    steps: int | None = None  # reverse-process grid points (None = every step from τ)
    sampler: str = "ddpm"  # ddpm (stochastic) | ddim (deterministic map; warned)
    control: str | None = "gaussian"
    classifier: bool = True  # class change by the shipped digit classifier


@dataclass
class Denoiser:
    """An ε-prediction network and its schedule: ``eps(x, t_vec)``, ``alpha_bar`` (T,)."""

    eps: object
    alpha_bar: np.ndarray
    clip: float | None = 1.0


def reverse_from(
    den: Denoiser,
    x_tau: torch.Tensor,
    tau: int,
    steps: int | None,
    eta: float,
    gen: torch.Generator,
) -> torch.Tensor:
    """x̂_0 from x_τ: DDIM(η) over a grid from τ down to 0 (module docstring)."""
    count = tau + 1 if steps is None else max(1, min(steps, tau + 1))
    grid = sorted({int(round(x)) for x in np.linspace(tau, 0, count)}, reverse=True)
    abar = list(den.alpha_bar) + [1.0]
    x = x_tau
    for i, t in enumerate(grid):
        t_prev = grid[i + 1] if i + 1 < len(grid) else -1
        eps = den.eps(x, torch.full((x.shape[0],), t, dtype=torch.int64))
        x0 = (x - math.sqrt(1 - abar[t]) * eps) / math.sqrt(abar[t])
        if den.clip is not None:
            x0 = x0.clamp(-den.clip, den.clip)
            eps = (x - math.sqrt(abar[t]) * x0) / math.sqrt(1 - abar[t])
        if t_prev == -1:
            return x0
        a_t, a_p = abar[t], abar[t_prev]
        sigma = eta * math.sqrt((1 - a_p) / (1 - a_t) * (1 - a_t / a_p))
        x = math.sqrt(a_p) * x0 + math.sqrt(max(1 - a_p - sigma**2, 0.0)) * eps
        if sigma > 0:
            x = x + sigma * torch.randn(x.shape, generator=gen)
    return x


def token_changes(x0: np.ndarray, xhat: np.ndarray, patch: int, threshold: float | None):
    """(n, tokens) changes: mean squared difference per P×P patch (binary above threshold)."""
    n, c, h, w = x0.shape
    sq = ((xhat - x0) ** 2).mean(axis=1)  # (n, h, w)
    hp, wp = h // patch, w // patch
    sq = sq[:, : hp * patch, : wp * patch].reshape(n, hp, patch, wp, patch).mean(axis=(2, 4))
    change = sq.reshape(n, hp * wp)
    return (change > threshold).astype(np.float64) if threshold is not None else change


def correlation_by_grid_distance(change: np.ndarray, side: int) -> dict:
    """{r: mean covariance over ordered token pairs at rounded Euclidean distance r}."""
    cov = np.cov(change, rowvar=False, ddof=1)  # (tokens, tokens)
    ys, xs = np.divmod(np.arange(change.shape[1]), side)
    dist = np.rint(np.hypot(ys[:, None] - ys, xs[:, None] - xs)).astype(int)
    return {int(r): float(cov[dist == r].mean()) for r in np.unique(dist)}


def gaussian_control(data: np.ndarray, ridge: float = 1e-4):
    """(μ, Σ) of flattened data, with a ridge so Σ is invertible."""
    flat = data.reshape(len(data), -1).astype(np.float64)
    mu = flat.mean(axis=0)
    sigma = np.cov(flat, rowvar=False) + ridge * np.eye(flat.shape[1])
    return mu, sigma


def gaussian_posterior(mu, sigma, abar: float):
    """(A, b, S): x_0 | x_τ ~ N(A x_τ + b, S) for x_τ = √ᾱ x_0 + √(1 − ᾱ) ε, x_0 ~ N(μ, Σ)."""
    precision = np.linalg.inv(sigma)
    s = np.linalg.inv(precision + abar / (1 - abar) * np.eye(len(mu)))
    a = s * (math.sqrt(abar) / (1 - abar))
    b = s @ precision @ mu
    return a, b, s


def probe_gaussian(data: np.ndarray, alpha_bar: np.ndarray, config: ImageProbeConfig, rng):
    """The probe on N(μ, Σ) data with the exact posterior sampler (module docstring)."""
    shape = data.shape[1:]
    mu, sigma = gaussian_control(data)
    chol = np.linalg.cholesky(sigma)
    rows = []
    for t in config.times:
        tau = max(0, int(round(t * len(alpha_bar))) - 1)
        abar = float(alpha_bar[tau])
        x0 = mu + rng.standard_normal((config.samples, len(mu))) @ chol.T
        xt = math.sqrt(abar) * x0 + math.sqrt(1 - abar) * rng.standard_normal(x0.shape)
        a, b, s = gaussian_posterior(mu, sigma, abar)
        post_chol = np.linalg.cholesky(s + 1e-12 * np.eye(len(mu)))
        xhat = xt @ a.T + b + rng.standard_normal(x0.shape) @ post_chol.T
        change = token_changes(
            x0.reshape(-1, *shape), xhat.reshape(-1, *shape), config.patch, config.threshold
        )
        rows.append({"t": t, **observables.change_stats(change), "class_change": None})
    return rows


def probe_model(den: Denoiser, data: torch.Tensor, config: ImageProbeConfig, gen, classify):
    """The probe on the model: per-time rows (``t``, ``chi``, ``chi_norm``, ``class_change``,
    ``change_fraction``) and the grid correlation at each time."""
    eta = 1.0 if config.sampler == "ddpm" else 0.0
    T = len(den.alpha_bar)
    rows, corr = [], []
    idx = torch.randint(0, len(data), (config.samples,), generator=gen)
    x0 = data[idx].float()
    label0 = classify(x0) if classify else None
    side = x0.shape[-1] // config.patch
    for t in config.times:
        tau = max(0, int(round(t * T)) - 1)
        abar = float(den.alpha_bar[tau])
        x_tau = math.sqrt(abar) * x0 + math.sqrt(1 - abar) * torch.randn(x0.shape, generator=gen)
        with torch.no_grad():
            xhat = reverse_from(den, x_tau, tau, config.steps, eta, gen)
        change = token_changes(x0.numpy(), xhat.numpy(), config.patch, config.threshold)
        cls = float((classify(xhat) != label0).float().mean()) if classify else None
        rows.append({"t": t, **observables.change_stats(change), "class_change": cls})
        corr.append(correlation_by_grid_distance(change, side))
    return rows, corr


def interior_peak(times: list[float], chi_norm: list) -> float | None:
    """The centroid of the χ̃ peak when it lies strictly inside the grid, else None."""
    peak = observables.peak_level(times, chi_norm)
    if peak is None:
        return None
    top = int(np.nanargmax([np.nan if c is None else c for c in chi_norm]))
    return peak[0] if 0 < top < len(times) - 1 else None


def image_verdict(times, model_rows, control_rows) -> dict:
    chi_norm = [r["chi_norm"] for r in model_rows]
    peak = interior_peak(times, chi_norm)
    classes = [r["class_change"] for r in model_rows]
    midpoint = _half_of_max(times, classes) if classes and classes[0] is not None else None
    out = {
        "interior_peak": peak is not None,
        "peak_near_class_midpoint": None
        if peak is None or midpoint is None
        else abs(peak - midpoint) <= PEAK_TOLERANCE_T,
        "control_has_no_interior_peak": None
        if control_rows is None
        else interior_peak(times, [r["chi_norm"] for r in control_rows]) is None,
    }
    out["observed"] = all(v is True for v in out.values())
    out["failed"] = [k for k, v in out.items() if v is False and k != "observed"]
    return {**out, "peak_time": peak, "class_midpoint": midpoint}


def _half_of_max(times, values) -> float | None:
    """Where the class change first reaches half of its largest measured value."""
    top = max(values)
    if top <= 0:
        return None
    half = top / 2
    for i in range(1, len(times)):
        if values[i - 1] < half <= values[i]:
            a, b = values[i - 1], values[i]
            return float(times[i - 1] + (half - a) * (times[i] - times[i - 1]) / (b - a))
    return float(times[0])

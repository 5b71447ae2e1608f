"""Adversarial perturbations of the denoiser input (Wang et al., ICLR 2025, §4–5).

The paper shows that distributionally robust training over a KL ball around q(x_t)
is equivalent to adversarial training (AT) of the denoiser input:

    min_θ E max_{‖δ‖ ≤ r} ‖ε_θ(x_t + δ, t) - target(δ)‖²,

i.e. find the perturbation δ of x_t inside a norm ball that maximises the denoising loss
and train on x_t + δ. This module holds what every AT method shares: the ball, the
projection onto it, one ascent step, the regression target, and FGSM / PGD searches.
The ``free`` method (Shafahi et al. 2019) reuses the gradient of the training step
itself and lives in the training loops (``ddpm.py``, ``consistency.py``).

Units. ``alpha`` (α) is a per-coordinate scale, so one value means the same for 2-D
points and for 64-pixel images: the ℓ∞ ball has radius α, the ℓ2 ball radius α·√d
(d = numbers per sample, e.g. 64 for an 8×8 digit). Step sizes use the same units.

Choices, and where they come from. The public code of the paper (AT_Diff, built on
guided-diffusion, as mirrored in a public fork) trains with: ℓ2 norm, per-sample ball of
radius α·√d, ascent step g/‖g‖₂ from zero initialisation (no random start), the
gradient of the training step reused across 3 replays of each minibatch (its "fast"
mode, i.e. free AT), and the regression target ε + sg(δ)/σ_t (its ``delta_detach``).
Those are our defaults (norm ``l2``, method ``free``, 3 replays, target ``x0``). The
radius the paper used on CIFAR-10 images does not transfer to 2-D points or 8×8 digits;
the default α is chosen by the measured sweep reported in docs/diffusion-at.md.

Controls. ``replay`` is free AT's schedule (m optimiser updates per minibatch) with
δ ≡ 0; ``noise`` is the same schedule with a *random* δ of the norm free AT's δ has at
that replay: ρ_r = min(r·s, r_ball) after r ascent steps of length s — exact when the steps
align, an upper bound otherwise (in the default setting one step reaches the edge of the
ball, and a later step falls back inside only when the gradient turns by more than 120°).
The mean norm each arm actually used is recorded in training, so the match is measured,
not assumed. The direction is uniform on the ℓ2 sphere, or a random
vertex of the ℓ∞ ball (±ρ per coordinate, like FGSM's sign step). Together they separate
"adversarial" from "more updates per minibatch" and from "noise augmentation".

Targets. ``eps`` keeps the regression target ε (the network must ignore δ);
``x0`` uses ε + δ/σ_t, the noise that makes x_t + δ = √ᾱ_t x_0 + σ_t (ε + δ/σ_t): the
x_0 the network must recover is unchanged. δ enters the target detached (stop-gradient).

Symbols: ``delta`` → δ, ``alpha`` → α, ``radius`` → r, ``sigma`` → σ_t.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from iclr25.core.diffusion_at.names import AT_METHODS as METHODS
from iclr25.core.diffusion_at.names import AT_TARGETS as TARGETS
from iclr25.core.diffusion_at.names import NORMS


@dataclass(frozen=True)
class ATConfig:
    """Adversarial training of the denoiser input."""

    method: str = "none"  # none | fgsm | pgd | free | replay / noise (controls of free)
    norm: str = "l2"  # the paper's code uses ℓ2
    alpha: float = 0.0  # per-coordinate radius: ℓ∞ radius α, ℓ2 radius α·√d
    step: float | None = None  # ascent step (same units); None → see step_size()
    pgd_steps: int = 3
    free_replays: int = 3  # the paper's code replays each minibatch 3 times
    target: str = "x0"  # the paper's code: ε + sg(δ)/σ_t

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown AT method {self.method!r}; use one of {METHODS}")
        if self.norm not in NORMS:
            raise ValueError(f"unknown norm {self.norm!r}; use one of {NORMS}")
        if self.target not in TARGETS:
            raise ValueError(f"unknown AT target {self.target!r}; use one of {TARGETS}")
        if not (self.alpha >= 0 and math.isfinite(self.alpha)):
            raise ValueError(f"alpha must be a finite number >= 0, got {self.alpha}")
        if self.step is not None and not (self.step > 0 and math.isfinite(self.step)):
            raise ValueError(f"the AT step must be > 0, got {self.step}")
        if self.pgd_steps < 1 or self.free_replays < 1:
            raise ValueError("pgd_steps and free_replays must be >= 1")

    @property
    def active(self) -> bool:
        """Training differs from the baseline: a method with a non-zero radius (α = 0 →
        baseline), or a control of free AT (its minibatch replays: ``replay``, ``noise``)."""
        return self.method in ("replay", "noise") or (self.method != "none" and self.alpha > 0)

    @property
    def replays(self) -> bool:
        """The method trains on each minibatch m times (free AT and its two controls)."""
        return self.method in ("free", "replay", "noise")

    def step_size(self) -> float:
        """FGSM and free: one step of the full radius (Goodfellow et al. 2015; Shafahi et
        al. 2019); PGD-k: 2.5 α / k (Madry et al. 2018)."""
        if self.step is not None:
            return self.step
        return 2.5 * self.alpha / self.pgd_steps if self.method == "pgd" else self.alpha


def _per_sample(x: torch.Tensor) -> tuple[int, torch.Tensor]:
    """(d, x viewed as (B, d))."""
    flat = x.reshape(x.shape[0], -1)  # (B, d)
    return flat.shape[1], flat


def ball_radius(norm: str, alpha: float, d: int) -> float:
    """Radius of the ball in the norm itself: α for ℓ∞, α·√d for ℓ2."""
    return alpha if norm == "linf" else alpha * math.sqrt(d)


def project(delta: torch.Tensor, norm: str, alpha: float) -> torch.Tensor:
    """Π onto {‖δ_i‖ ≤ r} for each sample i (closest point of the ball)."""
    d, flat = _per_sample(delta)
    radius = ball_radius(norm, alpha, d)
    if norm == "linf":
        return delta.clamp(-radius, radius)
    norms = flat.norm(dim=1).clamp_min(1e-12)  # (B,)
    scale = torch.clamp(radius / norms, max=1.0)
    return (flat * scale[:, None]).view_as(delta)


def ascent_step(delta: torch.Tensor, grad: torch.Tensor, norm: str, step: float) -> torch.Tensor:
    """δ + step · (steepest ascent direction of the norm): sign(g) for ℓ∞, √d g/‖g‖₂ for ℓ2."""
    if norm == "linf":
        return delta + step * grad.sign()
    d, flat = _per_sample(grad)
    unit = flat / flat.norm(dim=1, keepdim=True).clamp_min(1e-12)  # (B, d)
    return delta + step * math.sqrt(d) * unit.view_as(delta)


def step_length(norm: str, step: float, d: int) -> float:
    """Length of one ascent step in the norm itself: ``step`` for ℓ∞, ``step``·√d for ℓ2."""
    return step if norm == "linf" else step * math.sqrt(d)


def noise_norm(config: ATConfig, replay: int, d: int) -> float:
    """ρ_r = min(r·s, r_ball): the norm free AT's δ has at replay r (0-based) when its r
    ascent steps align (an upper bound otherwise) — the norm of the ``noise`` control's δ."""
    s = step_length(config.norm, config.step_size(), d)
    return min(replay * s, ball_radius(config.norm, config.alpha, d))


def random_delta(like: torch.Tensor, norm: str, rho: float, gen: torch.Generator) -> torch.Tensor:
    """A random δ of norm ρ per sample: ρ·z/‖z‖₂ (z Gaussian) for ℓ2, ρ·(±1) for ℓ∞."""
    z = torch.randn(like.shape, generator=gen).to(like.device)
    if norm == "linf":
        return rho * z.sign()
    _, flat = _per_sample(z)
    unit = flat / flat.norm(dim=1, keepdim=True).clamp_min(1e-12)  # (B, d)
    return (rho * unit).view_as(like)


def delta_norms(delta: torch.Tensor, norm: str) -> torch.Tensor:
    """‖δ_i‖ in ``norm`` for each sample: (B,)."""
    _, flat = _per_sample(delta.detach())
    return flat.abs().amax(dim=1) if norm == "linf" else flat.norm(dim=1)


def regression_target(
    eps: torch.Tensor, delta: torch.Tensor, sigma: torch.Tensor, target: str
) -> torch.Tensor:
    """ε (``eps``) or ε + sg(δ)/σ_t (``x0``); ``sigma`` broadcasts against ``eps``."""
    if target == "eps":
        return eps
    return eps + delta.detach() / sigma


LossOfDelta = Callable[[torch.Tensor], torch.Tensor]  # δ (B, ...) -> scalar loss


def search_delta(loss_of_delta: LossOfDelta, like: torch.Tensor, config: ATConfig) -> torch.Tensor:
    """FGSM (one step) or PGD-k from δ = 0: returns δ* (detached) inside the ball.

    Only ∂loss/∂δ is computed (``torch.autograd.grad``), so parameter gradients are left
    untouched; with α = 0 the result is exactly zero."""
    delta = torch.zeros_like(like)
    steps = 1 if config.method == "fgsm" else config.pgd_steps
    for _ in range(steps):
        delta.requires_grad_(True)
        (grad,) = torch.autograd.grad(loss_of_delta(delta), delta)
        delta = ascent_step(delta.detach(), grad, config.norm, config.step_size())
        delta = project(delta, config.norm, config.alpha)
    return delta.detach()


def free_update(delta: torch.Tensor, grad: torch.Tensor | None, config: ATConfig) -> torch.Tensor:
    """The free-AT update after a replay: ascend with the gradient the training step
    already computed, then project (Shafahi et al. 2019, Alg. 1)."""
    if grad is None:
        return delta.detach()
    stepped = ascent_step(delta.detach(), grad, config.norm, config.step_size())
    return project(stepped, config.norm, config.alpha).detach()

"""Losses ℓ(θ; ξ) of a prediction f_θ(x), written through one scalar per sample.

- Margin losses (classification, y ∈ {−1, 1}): ℓ = L(z) with the margin z = y·f_θ(x);
  L is non-increasing, so the adversary lowers the margin.
- Residual losses (regression): ℓ = L(r) with the residual r = y − f_θ(x); L is even and
  non-decreasing in |r|, so the adversary increases |r|.

For a linear model f_θ(x) = wᵀx + b a feature move Δ changes the prediction by wᵀΔ, and
|wᵀΔ| ≤ ‖w‖_*·‖Δ‖_p with equality in the best direction, so the worst move of length t
shifts the scalar by s = ‖w‖_*·t: :meth:`Loss.worst_shift` is L(z − s) or L(|r| + s).

``lipschitz`` is sup |L'| and ``slope_attained`` says whether |L'| reaches it along the
adversarial direction (logistic, hinge, absolute, Huber): then, for q = 1 and unbounded
support, robust risk = empirical risk + ρ·Lip·‖w‖_* exactly (Shafieezadeh-Abadeh et al.
2015/2019; Le & Malick 2025, linear examples). For the ramp loss (bounded, non-convex) the
same expression is only an upper bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from iclr25.errors import UsageError

MARGIN_LOSSES = ("logistic", "hinge", "ramp")
RESIDUAL_LOSSES = ("squared", "absolute", "huber")


@dataclass(frozen=True)
class Loss:
    name: str
    kind: str  # "margin" or "residual"
    lipschitz: float  # sup |L'|; ∞ for the squared loss
    slope_attained: bool  # |L'| -> lipschitz in the adversarial direction (closed form exact)
    convex: bool
    delta: float = 1.0  # Huber threshold (ignored by the other losses)

    # -- numpy -------------------------------------------------------------------------
    def value(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)
        if self.name == "logistic":
            return np.logaddexp(0.0, -u)
        if self.name == "hinge":
            return np.maximum(0.0, 1.0 - u)
        if self.name == "ramp":
            return np.clip(1.0 - u, 0.0, 1.0)
        if self.name == "squared":
            return u * u
        if self.name == "absolute":
            return np.abs(u)
        a = np.abs(u)  # huber
        return np.where(a <= self.delta, 0.5 * u * u, self.delta * (a - 0.5 * self.delta))

    def derivative(self, u: np.ndarray) -> np.ndarray:
        """dL/du (a subgradient at kinks)."""
        u = np.asarray(u, dtype=np.float64)
        if self.name == "logistic":
            return expit(u) - 1.0
        if self.name == "hinge":
            return -(u < 1.0).astype(np.float64)
        if self.name == "ramp":
            return -((u > 0.0) & (u < 1.0)).astype(np.float64)
        if self.name == "squared":
            return 2.0 * u
        if self.name == "absolute":
            return np.sign(u)
        return np.clip(u, -self.delta, self.delta)

    def second(self, u: np.ndarray) -> np.ndarray:
        """d²L/du² (0 on the linear pieces of the hinge, ramp and absolute losses)."""
        u = np.asarray(u, dtype=np.float64)
        if self.name == "logistic":
            sig = expit(u)
            return sig * (1.0 - sig)
        if self.name == "squared":
            return np.full_like(u, 2.0)
        if self.name == "huber":
            return (np.abs(u) <= self.delta).astype(np.float64)
        return np.zeros_like(u)

    def shift_derivatives(self, u: np.ndarray, s: np.ndarray):
        """(∂ψ/∂s, ∂²ψ/∂s²) of ψ(u, s) = :meth:`worst_shift`."""
        if self.kind == "margin":
            return -self.derivative(u - s), self.second(u - s)
        v = np.abs(u) + s
        return self.derivative(v), self.second(v)

    def worst_shift(self, u: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The loss after the adversary shifts the prediction by s ≥ 0 against us."""
        u = np.asarray(u, dtype=np.float64)
        if self.kind == "margin":
            return self.value(u - s)
        return self.value(np.abs(u) + s)

    def smooth(self, u: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(L_τ, L_τ', L_τ'') of a smoothed convex loss (exact for logistic, squared, Huber);
        |L_τ − L| ≤ τ·log 2 for the hinge (softplus) and ≤ τ for the absolute value."""
        u = np.asarray(u, dtype=np.float64)
        if self.name == "logistic":
            sig = expit(u)
            return np.logaddexp(0.0, -u), sig - 1.0, sig * (1.0 - sig)
        if self.name == "hinge":
            v = (1.0 - u) / tau
            sig = expit(v)
            return tau * np.logaddexp(0.0, v), -sig, sig * (1.0 - sig) / tau
        if self.name == "squared":
            return u * u, 2.0 * u, np.full_like(u, 2.0)
        if self.name == "absolute":
            root = np.sqrt(u * u + tau * tau)
            return root - tau, u / root, tau * tau / root**3
        if self.name == "huber":
            inside = np.abs(u) <= self.delta
            d1 = np.where(inside, u, self.delta * np.sign(u))
            return self.value(u), d1, inside.astype(np.float64)
        raise UsageError(f"the {self.name} loss is not convex", "use the general solver")

    # -- torch -------------------------------------------------------------------------
    def torch_value(self, u):
        import torch
        import torch.nn.functional as F  # noqa: N812

        if self.name == "logistic":
            return F.softplus(-u)
        if self.name == "hinge":
            return torch.relu(1.0 - u)
        if self.name == "ramp":
            return torch.clamp(1.0 - u, 0.0, 1.0)
        if self.name == "squared":
            return u * u
        if self.name == "absolute":
            return u.abs()
        return F.huber_loss(u, torch.zeros_like(u), reduction="none", delta=self.delta)

    def as_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "lipschitz": self.lipschitz}
        if self.name == "huber":
            out["delta"] = self.delta
        return out


def get_loss(name: str, huber_delta: float = 1.0) -> Loss:
    """The loss called ``name`` (see MARGIN_LOSSES and RESIDUAL_LOSSES)."""
    if name == "logistic":
        return Loss("logistic", "margin", 1.0, True, True)
    if name == "hinge":
        return Loss("hinge", "margin", 1.0, True, True)
    if name == "ramp":
        return Loss("ramp", "margin", 1.0, False, False)
    if name == "squared":
        return Loss("squared", "residual", math.inf, False, True)
    if name == "absolute":
        return Loss("absolute", "residual", 1.0, True, True)
    if name == "huber":
        if not huber_delta > 0:
            raise UsageError(f"--huber-delta {huber_delta} is not positive", "pass a value > 0")
        return Loss("huber", "residual", float(huber_delta), True, True, float(huber_delta))
    known = ", ".join(MARGIN_LOSSES + RESIDUAL_LOSSES)
    raise UsageError(f"unknown loss {name!r}", f"use one of: {known}")


def signed_scalar(loss: Loss, prediction: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The scalar the loss is applied to: margin y·f (classification) or residual y − f."""
    prediction = np.asarray(prediction, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return y * prediction if loss.kind == "margin" else y - prediction

"""Transport costs c(ξ, ζ) = ‖x − x'‖_p^q + κ·1{y ≠ y'} on labelled data ξ = (x, y).

Paper symbols (Le & Malick 2025; Azizian et al. 2023):

- ``p``     -> the feature norm ‖·‖_p (1 ≤ p ≤ ∞); its dual norm ‖·‖_* has exponent p* with
               1/p + 1/p* = 1 and appears in every closed form (Hölder: |wᵀΔ| ≤ ‖w‖_*‖Δ‖_p),
- ``q``     -> the power of the feature cost (q = 1: type-1 Wasserstein, q = 2: type-2),
- ``kappa`` -> κ, the price of switching a label (κ = ∞: labels are never moved).

The intercept of a linear model is not part of the cost: only features move. For
regression targets the target is kept fixed (κ has no meaning and must stay ∞).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iclr25.errors import UsageError


def dual_exponent(p: float) -> float:
    """p* with 1/p + 1/p* = 1 (p = 1 -> ∞, p = ∞ -> 1)."""
    if p == 1.0:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def norm_p(v: np.ndarray, p: float, axis: int = -1) -> np.ndarray:
    """‖v‖_p along ``axis`` (p = ∞ allowed)."""
    v = np.abs(np.asarray(v, dtype=np.float64))
    if v.shape[axis] == 0:
        return np.zeros(np.delete(v.shape, axis % v.ndim))
    if math.isinf(p):
        return v.max(axis=axis)
    return np.linalg.norm(v, ord=p, axis=axis)


@dataclass(frozen=True)
class TransportCost:
    """c((x, y), (x', y')) = ‖x − x'‖_p^q + κ·1{y ≠ y'}."""

    p: float = 2.0  # Euclidean feature norm, the usual choice (and the Shafieezadeh-Abadeh case)
    q: float = 1.0  # type-1 Wasserstein: the case with exact closed forms for linear models
    kappa: float = math.inf  # labels fixed unless a finite switching price is given

    def __post_init__(self) -> None:
        if not (self.p >= 1.0):
            raise UsageError(f"--p {self.p} is below 1", "use a norm exponent p ≥ 1 (or inf)")
        if not (self.q >= 1.0) or math.isinf(self.q):
            raise UsageError(f"--q {self.q} is not a finite number ≥ 1", "use q = 1 or q = 2")
        if not (self.kappa > 0.0):
            raise UsageError(
                f"--kappa {self.kappa} is not positive",
                "use a positive label-switch cost, or inf to keep labels fixed",
            )

    @property
    def dual_p(self) -> float:
        return dual_exponent(self.p)

    @property
    def labels_fixed(self) -> bool:
        return math.isinf(self.kappa)

    def dual_norm(self, w: np.ndarray) -> float:
        """‖w‖_* = ‖w‖_{p*}, the slope of the best feature move per unit of ‖·‖_p."""
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        if w.size == 0:
            return 0.0
        return float(norm_p(w, self.dual_p))

    def feature_cost(self, x: np.ndarray, x_prime: np.ndarray) -> np.ndarray:
        """‖x − x'‖_p^q row-wise: (..., d), (..., d) -> (...)."""
        return np.power(norm_p(np.asarray(x_prime) - np.asarray(x), self.p), self.q)

    def __call__(self, x, y, x_prime, y_prime) -> np.ndarray:
        """The full cost, row-wise; a label switch costs κ (∞ when labels are fixed)."""
        switched = np.asarray(y) != np.asarray(y_prime)
        feature = self.feature_cost(x, x_prime)
        with np.errstate(invalid="ignore"):
            label = np.where(switched, self.kappa, 0.0)
        return feature + label

    def describe(self) -> str:
        p = "∞" if math.isinf(self.p) else f"{self.p:g}"
        power = "" if self.q == 1 else f"^{self.q:g}"
        label = "" if self.labels_fixed else f" + {self.kappa:g}·1{{y≠y'}}"
        return f"‖x−x'‖_{p}{power}{label}"

    def as_dict(self) -> dict:
        return {"p": self.p, "q": self.q, "kappa": self.kappa, "formula": self.describe()}

"""The ``theory`` radius: a radius every term of which comes from a stated theorem.

**Not Le & Malick's constants.** Le & Malick (ICLR 2025) give explicit constants for linear
and logistic models, but their text could not be read from the sources reachable when
this was built (abstracts and public reviews only), so none of their terms is computed
here and none is offered. What this module offers instead is a classical, fully
computable uniform bound for the one case where the robust risk is known exactly:

    linear model f_θ(x) = wᵀx + b, loss ℓ = L(u) with L Lip-Lipschitz and its slope bound
    attained (logistic, hinge, absolute, Huber), cost ‖x − x'‖₂ (p = 2, q = 1, κ = ∞).

Then R_ρ(θ; P_n) = E_n ℓ(θ) + ρ·Lip·‖w‖₂ exactly (:mod:`closed_forms`), so the certificate
E_P ℓ(θ) ≤ R_ρ(θ; P_n) holds for θ as soon as ρ·Lip·‖w‖₂ ≥ E_P ℓ(θ) − E_n ℓ(θ).

**Theorem used** (uniform Rademacher bound: Bartlett & Mendelson 2002, Theorem 8; Mohri,
Rostamizadeh & Talwalkar 2018, Theorem 3.3, scaled to a range of width M): for a class G
of functions with values in an interval of width M, with probability ≥ 1 − δ, for every
g ∈ G, E_P g ≤ E_n g + 2·ℜ_n(G) + M·√(log(1/δ)/(2n)). Applied to the cells

    G_jk = {ℓ(θ; ·) : ‖w‖₂ ≤ B_j = B₀·2^j, |b| ≤ C_k = C₀·2^k},   j, k ≥ 0,

with the contraction lemma (Ledoux & Talagrand 1991; Mohri et al. Lemma 5.7) and the
linear-class bound ℜ_n{x ↦ wᵀx + b} ≤ (B_j·X + C_k)/√n for data with ‖x‖₂ ≤ X:

    ℜ_n(G_jk) ≤ Lip·(B_j·X + C_k)/√n,
    M_jk = Lip·2(B_j·X + C_k)           (margin losses, y ∈ {−1, 1}),
    M_jk = Lip·(Y + B_j·X + C_k)        (residual losses, |y| ≤ Y),

and a union bound with δ_jk = δ·36/(π⁴ (j+1)² (k+1)²) (Σ δ_jk = δ). So with probability
≥ 1 − δ, simultaneously for every θ (in its smallest cell (j, k)),

    ρ_theory(θ) = [2(B_j X + C_k)/√n + (M_jk/Lip)·√(log(1/δ_jk)/(2n))] / ‖w‖₂

certifies θ. It grows like √(log(1/δ)/n) (its c is dimension-free given X, but X itself
grows with d for most data) and is +∞ at w = 0 (a flat model cannot be certified: its
robust and empirical risks coincide). Assumptions the user must state: the support radius
X (‖x‖₂ ≤ X for every possible x, not just the sample) and, for regression, the target
bound Y. B₀ = 1/X and C₀ = 1 are fixed before seeing data (any fixed choice is valid).

Symbols: ``support_radius`` -> X, ``target_bound`` -> Y, ``w_scale`` -> B₀, ``b_scale``
-> C₀, ``lipschitz`` -> Lip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.losses import Loss
from iclr25.errors import InputError, UsageError

THEOREM = (
    "uniform Rademacher bound (Bartlett & Mendelson 2002, Thm 8; Mohri et al. 2018, "
    "Thm 3.3) with the contraction lemma and a union bound over dyadic cells of ‖w‖₂ and "
    "|b|, applied to the exact robust risk E_n ℓ + ρ·Lip·‖w‖₂ (q = 1, κ = ∞, p = 2); not "
    "Le & Malick's constants, which could not be read here"
)


@dataclass(frozen=True)
class TheoryConfig:
    support_radius: float  # X: ‖x‖₂ ≤ X on the whole support of P (an assumption)
    target_bound: float | None = None  # Y: |y| ≤ Y on the support (regression only)
    b_scale: float = 1.0  # C₀, the first intercept cell

    def __post_init__(self) -> None:
        if not (self.support_radius > 0) or not math.isfinite(self.support_radius):
            raise UsageError(
                f"--support-radius {self.support_radius} is not a positive number",
                "pass X with ‖x‖₂ ≤ X for every possible feature vector",
            )
        if self.target_bound is not None and not (0 <= self.target_bound < math.inf):
            raise UsageError(
                f"--target-bound {self.target_bound} is not a finite number ≥ 0",
                "pass Y with |y| ≤ Y for every possible target",
            )

    @property
    def w_scale(self) -> float:
        """B₀ = 1/X: the first cell holds the slopes with B₀·X = 1."""
        return 1.0 / self.support_radius


@dataclass(frozen=True)
class TheoryRadius:
    rho: float  # ρ_theory(θ) (∞ when w = 0)
    epsilon: float  # the uniform deviation bound ε_jk for θ's cell
    cell: tuple[int, int]  # (j, k)
    rademacher_term: float  # 2(B_j X + C_k)/√n (per unit Lip)
    concentration_term: float  # (M_jk/Lip)·√(log(1/δ_jk)/(2n))
    dual_norm: float  # ‖w‖₂

    def as_dict(self) -> dict:
        return {
            "rho": self.rho if math.isfinite(self.rho) else None,
            "uniform_deviation": self.epsilon,
            "cell": list(self.cell),
            "rademacher_term": self.rademacher_term,
            "concentration_term": self.concentration_term,
            "dual_norm": self.dual_norm,
        }


def unavailable_reason(kind: str, loss: Loss, cost: TransportCost, entropic: bool) -> str | None:
    """Why the theory radius is not offered for this problem (None: it is)."""
    if kind not in ("logistic", "linear"):
        return "the theory radius covers linear and logistic models only (no MLP)"
    if entropic:
        return "the theory radius covers the unregularised robust risk only (drop --epsilon)"
    if not (loss.convex and loss.slope_attained):
        return (
            f"the theory radius needs a Lipschitz loss whose robust risk is exact at q = 1 "
            f"(logistic, hinge, absolute, huber), not {loss.name}"
        )
    if cost.q != 1.0 or cost.p != 2.0 or not cost.labels_fixed:
        return "the theory radius needs the cost ‖x − x'‖₂ (--p 2 --q 1, no --kappa)"
    return None


def check_support(X: np.ndarray, y: np.ndarray, loss: Loss, config: TheoryConfig) -> None:
    """The sample must lie in the stated support (a necessary check, not a proof)."""
    norms = np.linalg.norm(np.asarray(X, np.float64), axis=1) if len(X) else np.zeros(0)
    if norms.size and norms.max() > config.support_radius:
        i = int(np.argmax(norms))
        raise InputError(
            f"data row {i + 1} has ‖x‖₂ = {norms[i]:.4g} > --support-radius "
            f"{config.support_radius:g}: the stated support does not hold",
            "pass a --support-radius that bounds every possible feature vector",
        )
    if loss.kind == "residual":
        if config.target_bound is None:
            raise UsageError(
                "the theory radius for regression needs a bound on |y|",
                "pass --target-bound Y (|y| ≤ Y for every possible target)",
            )
        worst = float(np.max(np.abs(y))) if len(y) else 0.0
        if worst > config.target_bound:
            raise InputError(
                f"a target has |y| = {worst:.4g} > --target-bound {config.target_bound:g}",
                "pass a --target-bound that bounds every possible target",
            )


def _cell_index(value: float, base: float) -> int:
    """Smallest j ≥ 0 with value ≤ base·2^j."""
    if value <= base:
        return 0
    return int(math.ceil(math.log2(value / base) - 1e-12))


def theory_radius(
    coef: np.ndarray, intercept: float, n: int, delta: float, loss: Loss, config: TheoryConfig
) -> TheoryRadius:
    """ρ_theory(θ) for θ = (coef, intercept) on n samples (see the module docstring)."""
    a = float(np.linalg.norm(np.asarray(coef, np.float64)))
    j = _cell_index(a, config.w_scale)
    k = _cell_index(abs(float(intercept)), config.b_scale)
    b_j, c_k = config.w_scale * 2.0**j, config.b_scale * 2.0**k
    reach = b_j * config.support_radius + c_k  # sup |wᵀx + b| over the cell and support
    width = 2.0 * reach if loss.kind == "margin" else float(config.target_bound or 0.0) + reach
    delta_jk = delta * 36.0 / (math.pi**4 * (j + 1) ** 2 * (k + 1) ** 2)
    rademacher = 2.0 * reach / math.sqrt(n)
    concentration = width * math.sqrt(math.log(1.0 / delta_jk) / (2.0 * n))
    per_lip = rademacher + concentration  # ε_jk / Lip
    rho = per_lip / a if a > 0 else math.inf
    return TheoryRadius(rho, loss.lipschitz * per_lip, (j, k), rademacher, concentration, a)

"""How a set of constraints is scored: exact feasibility, distinctness, spread of costs.

- ``iou(a, b, region)`` = |a ∩ b ∩ R| / |(a ∪ b) ∩ R| over the relevant region R
  (:func:`.verifier.relevant_region`); two masks empty on R have IoU 1.
- ``n_distinct_feasible``: greedy over the exactly feasible masks in index order; a mask
  opens a new group when its IoU with every group's first member is < 0.5.
- ``mean_pairwise_iou``: mean IoU over pairs of exactly feasible masks (None with < 2).
- ``cost_variance`` (the paper's Fig. 4 measure, our instance): reference trajectories
  (one unconstrained shortest path per demonstration, plus the demonstrations), each
  given the cost c_k(τ) = −Σ_t log(φ_k(s_t) + 10⁻⁵) by every constraint k; the variance
  over k, averaged over trajectories. Diverse constraints disagree on the same trajectory.
- ``verifier_agreement``: share of constraints whose GDV verdict equals the exact one.
"""

from __future__ import annotations

import numpy as np

DISTINCT_IOU = 0.5


def iou(a: np.ndarray, b: np.ndarray, region: np.ndarray) -> float:
    inter = (a & b & region).sum()
    union = ((a | b) & region).sum()
    return 1.0 if union == 0 else float(inter / union)


def distinct_groups(masks: list[np.ndarray], region: np.ndarray) -> list[int]:
    """Index (into ``masks``) of each group's first member, greedy in index order."""
    firsts: list[int] = []
    for k, m in enumerate(masks):
        if all(iou(m, masks[f], region) < DISTINCT_IOU for f in firsts):
            firsts.append(k)
    return firsts


def mean_pairwise_iou(masks: list[np.ndarray], region: np.ndarray) -> float | None:
    vals = [iou(masks[i], masks[j], region) for i in range(len(masks)) for j in range(i)]
    return float(np.mean(vals)) if vals else None


def trajectory_costs(phi: np.ndarray, trajectories: list[np.ndarray]) -> np.ndarray:
    """(K, R) costs c_k(τ_r) of cell trajectories under φ grids (K, H, W)."""
    out = np.zeros((len(phi), len(trajectories)))
    for r, t in enumerate(trajectories):
        out[:, r] = -np.log(phi[:, t[:, 1], t[:, 0]] + 1e-5).sum(axis=1)
    return out


def cost_variance(phi: np.ndarray, trajectories: list[np.ndarray]) -> float:
    if len(phi) < 2 or not trajectories:
        return 0.0
    return float(trajectory_costs(phi, trajectories).var(axis=0, ddof=1).mean())


def score(masks: np.ndarray, phi: np.ndarray, exact_feasible: np.ndarray,
          gdv_feasible: np.ndarray, region: np.ndarray, references) -> dict:  # fmt: skip
    """The set-level keys of ``recover``'s results."""
    feasible = [m for m, ok in zip(masks, exact_feasible, strict=True) if ok]
    return {
        "n_exact_feasible": int(np.sum(exact_feasible)),
        "exact_feasible_share": float(np.mean(exact_feasible)),
        "n_distinct_feasible": len(distinct_groups(feasible, region)),
        "mean_pairwise_iou": mean_pairwise_iou(feasible, region),
        "cost_variance": cost_variance(phi, references),
        "verifier_agreement": float(np.mean(np.asarray(exact_feasible) == gdv_feasible)),
    }

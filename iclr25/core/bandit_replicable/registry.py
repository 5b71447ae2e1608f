"""The algorithms by their stable names, with their guarantees as the paper states them.

Names (stable, for scripts): ``etc``, ``list-2k``, ``list-k-delta``, ``list-batched``,
``linear-batched``, ``ucb1``, ``successive-elimination``, ``thompson``,
``replicable-elimination``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from iclr25.core.bandit_replicable import (
    linear_batched,
    list_2k,
    list_batched,
    list_k_delta,
)
from iclr25.core.bandit_replicable.etc import ExploreThenCommit
from iclr25.core.bandit_replicable.replicable_elimination import ReplicableElimination
from iclr25.core.bandit_replicable.successive_elimination import SuccessiveElimination
from iclr25.core.bandit_replicable.thompson import Thompson
from iclr25.core.bandit_replicable.ucb1 import Ucb1
from iclr25.errors import UsageError


@dataclass(frozen=True)
class Problem:
    """What a list bound depends on: arms k, dimension d, δ and batches B."""

    k: int
    dim: int
    delta: float
    batches: int


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    title: str
    kind: str  # "phased" (schedule engine), "sequential" (per round) or "linear"
    guarantee: str  # the list-replicability claim, as a formula
    claimed_regret: str
    list_bound: Callable[[Problem], int] | None  # ℓ; None for the non-replicable baselines
    list_delta: Callable[[Problem], float] | None  # the δ of the (ℓ, δ) claim
    claimed_exponent: Callable[[int], float]  # regret ∝ T^e in the worst case, e(B)
    design_exponent: Callable[[int], float] | None = None  # what our construction reaches
    rho_bound: Callable[[Problem], float] | None = None  # ρ of a ρ-replicability claim


def _batched_design(batches: int) -> float:
    return list_batched.design_exponent(batches)


ALGORITHMS: dict[str, AlgorithmInfo] = {
    "etc": AlgorithmInfo(
        "etc",
        "explore-then-commit",
        "phased",
        "(k, 0)",
        "O(T^{2/3})",
        lambda p: p.k,
        lambda p: 0.0,
        lambda b: 2.0 / 3.0,
    ),
    "list-2k": AlgorithmInfo(
        "list-2k",
        "Alg. 1 (phased elimination)",
        "phased",
        "(2^k, δ)",
        "Õ(√(kT))",
        lambda p: list_2k.list_bound(p.k),
        lambda p: p.delta,
        lambda b: 0.5,
    ),
    "list-k-delta": AlgorithmInfo(
        "list-k-delta",
        "Alg. 2 (randomised thresholds)",
        "phased",
        "(⌈12k/δ⌉, δ)",
        "Õ((k/δ)√(kT))",
        lambda p: list_k_delta.list_bound(p.k, p.delta),
        lambda p: p.delta,
        lambda b: 0.5,
    ),
    "list-batched": AlgorithmInfo(
        "list-batched",
        "Alg. 3 (B batches)",
        "phased",
        "((k+1)^(B-1), δ)",
        "Õ(k^{3/2} T^{1/2+2^-(B+1)})",
        lambda p: list_batched.list_bound(p.k, p.batches),
        lambda p: p.delta,
        list_batched.claimed_exponent,
        _batched_design,
    ),
    "linear-batched": AlgorithmInfo(
        "linear-batched",
        "Alg. 4 (linear, B batches)",
        "linear",
        "((2d+1)^(B-1), δ)",
        "Õ(d² T^{1/2+2^-(B+1)})",
        lambda p: linear_batched.list_bound(p.dim, p.batches),
        lambda p: p.delta,
        list_batched.claimed_exponent,
        _batched_design,
    ),
    "ucb1": AlgorithmInfo(
        "ucb1", "UCB1 (baseline)", "sequential", "none", "Õ(√(kT))", None, None, lambda b: 0.5
    ),
    "successive-elimination": AlgorithmInfo(
        "successive-elimination",
        "successive elimination (baseline)",
        "phased",
        "none",
        "Õ(√(kT))",
        None,
        None,
        lambda b: 0.5,
    ),
    "thompson": AlgorithmInfo(
        "thompson",
        "Thompson sampling (baseline)",
        "sequential",
        "none",
        "Õ(√(kT log k))",
        None,
        None,
        lambda b: 0.5,
    ),
    "replicable-elimination": AlgorithmInfo(
        "replicable-elimination",
        "ρ-replicable elimination (Esfandiari et al. 2023)",
        "phased",
        "ρ = δ (shared bits)",
        "Õ((k²/ρ²) Σ 1/Δ_i)",
        None,
        None,
        lambda b: 0.5,
        rho_bound=lambda p: p.delta,
    ),
}
NAMES = tuple(ALGORITHMS)


def get(name: str) -> AlgorithmInfo:
    if name not in ALGORITHMS:
        raise UsageError(f"unknown algorithm {name!r}", f"use one of: {', '.join(NAMES)}")
    return ALGORITHMS[name]


def build(name: str, delta: float, batches: int, paired: bool = False):
    """The algorithm object the simulators run (phased and linear kinds); ``paired``: the
    executions 2i and 2i+1 share their internal random bits (only randomised ones have any)."""
    if name == "etc":
        return ExploreThenCommit()
    if name == "list-2k":
        return list_2k.List2k(delta)
    if name == "list-k-delta":
        return list_k_delta.ListKDelta(delta, paired)
    if name == "replicable-elimination":
        return ReplicableElimination(delta, paired)
    if name == "list-batched":
        return list_batched.ListBatched(delta, batches)
    if name == "linear-batched":
        return linear_batched.LinearBatchedFinite(delta, batches)
    if name == "successive-elimination":
        return SuccessiveElimination(delta)
    raise KeyError(name)


def sequential_rule(name: str, prior_scale: float = 1.0):
    if name == "ucb1":
        return Ucb1()
    if name == "thompson":
        return Thompson(prior_scale)
    raise KeyError(name)

"""The class-reconstruction threshold of the RHM: density evolution of the BP recursion.

As L → ∞, BP on noisy leaves either keeps information about the root (the expected
posterior probability of the true root stays above 1/v) or loses it; the threshold noise
level (ε* or q*) separates the two (tree reconstruction; Mézard & Montanari 2006). The
paper locates its χ̃ peak relative to this class transition; these notes compute it
exactly in the ensemble instead of by its mean-field approximation (the paper's Eq. 5
recursion is not public in full).

Population dynamics ("fresh rules per level", annealed over levels): a population of
``population`` pairs (true symbol x, normalised message ν) starts at the leaves with x
uniform and ν the noise model's leaf message. One level up: draw fresh RHM rules for
that level (distinct tuples, as in :func:`rhm.sample_rules`); each new member draws its
true parent symbol a and rule k uniformly, takes, for child i, a random member of the old
population whose true symbol is R[a, k, i], and computes
    ν(a') ∝ Σ_k' Π_i ν_{c_i}(R[a', k', i]).
``overlap`` after ℓ levels = (E ν(x) − 1/v) / (1 − 1/v): 1 = perfect, 0 = no information.
The threshold is where the overlap after ``levels`` levels drops below ``tolerance``
(bisection on the noise level to ``precision``), repeated over DE seeds for the spread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.diffusion_probe.noise import leaf_messages
from iclr25.core.diffusion_probe.rhm import RHMSpec, sample_rules


@dataclass(frozen=True)
class DEConfig:
    population: int = 20_000  # members per level (≥ 2·10⁴ for the documented figures)
    levels: int = 60  # iterations: the L → ∞ proxy
    precision: float = 0.005  # bisection stops when the bracket is this narrow
    tolerance: float = 0.02  # overlap below this after `levels` levels = lost
    seeds: int = 3  # DE seeds: the threshold's spread


def _leaf_population(spec: RHMSpec, noise: str, level: float, size: int, rng):
    x = rng.integers(0, spec.v, size=size)
    msgs, _ = leaf_messages(noise, x[:, None], spec.v, level, rng)
    return x, msgs[:, 0, :]  # (P,), (P, v)


def _step(spec: RHMSpec, x: np.ndarray, nu: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """One level up with fresh rules: the new population (x', ν')."""
    size = x.size
    grammar = sample_rules(RHMSpec(spec.v, spec.m, spec.s, 1, spec.v), rng)
    rules = grammar.rules[0]  # (v, m, s)
    order = np.argsort(x, kind="stable")
    counts = np.bincount(x, minlength=spec.v)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    parent = rng.integers(0, spec.v, size=size)
    rule = rng.integers(0, spec.m, size=size)
    product = np.ones((size, spec.v, spec.m))
    for i in range(spec.s):
        child_symbol = rules[parent, rule, i]  # (P,)
        available = counts[child_symbol]
        if np.any(available == 0):  # a symbol absent from the population: resample
            available = np.maximum(available, 1)
        pick = order[starts[child_symbol] + (rng.random(size) * available).astype(np.int64)]
        child_msg = nu[pick]  # (P, v)
        product *= child_msg[:, rules[:, :, i]]  # (P, v, m)
    new = product.sum(axis=2)
    total = new.sum(axis=1, keepdims=True)
    new = np.divide(new, total, out=np.full_like(new, 1.0 / spec.v), where=total > 0)
    return parent, new


def overlap_by_depth(
    spec: RHMSpec, noise: str, level: float, depth: int, population: int, seed: int
) -> list[float]:
    """Overlap after 1..depth levels (density evolution from the leaves up)."""
    rng = np.random.default_rng(seed)
    x, nu = _leaf_population(spec, noise, level, population, rng)
    out = []
    for _ in range(depth):
        x, nu = _step(spec, x, nu, rng)
        agreement = float(nu[np.arange(x.size), x].mean())
        out.append((agreement - 1.0 / spec.v) / (1.0 - 1.0 / spec.v))
    return out


def root_agreement(spec: RHMSpec, noise: str, level: float, depth: int, population: int, seed: int):
    """E ν_root(true root) after ``depth`` levels (the forward-backward check's quantity)."""
    overlap = overlap_by_depth(spec, noise, level, depth, population, seed)[-1]
    return 1.0 / spec.v + overlap * (1.0 - 1.0 / spec.v)


def threshold(
    spec: RHMSpec,
    noise: str,
    config: DEConfig | None = None,
    seed: int = 0,
    on_step: Callable[[], None] | None = None,
) -> dict:
    """Bisection per DE seed: ``threshold`` (mean, or None when the overlap is lost
    everywhere or nowhere in (0, 1)), ``threshold_spread`` (sd over seeds), ``per_seed``."""
    config = config or DEConfig()
    per_seed = []
    for j in range(config.seeds):
        per_seed.append(_bisect(spec, noise, config, seed * 1000 + j, on_step))
    found = [t for t in per_seed if t is not None]
    if len(found) < len(per_seed):
        return {"threshold": None, "threshold_spread": None, "per_seed": per_seed}
    return {
        "threshold": float(np.mean(found)),
        "threshold_spread": float(np.std(found, ddof=1)) if len(found) > 1 else 0.0,
        "per_seed": per_seed,
    }


def _bisect(spec, noise, config: DEConfig, seed: int, on_step) -> float | None:
    def keeps(level: float) -> bool:
        last = overlap_by_depth(spec, noise, level, config.levels, config.population, seed)
        if on_step is not None:
            on_step()
        return last[-1] > config.tolerance

    lo, hi = 0.0, 1.0
    if not keeps(lo + 1e-9) or keeps(hi - 1e-9):
        return None
    while hi - lo > config.precision:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if keeps(mid) else (lo, mid)
    return 0.5 * (lo + hi)

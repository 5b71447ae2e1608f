"""A search for instances on which an algorithm plays the most traces.

The list bounds (2^k, ⌈12k/δ⌉, (k+1)^(B-1), ...) are worst cases; on a random instance an
algorithm plays one or two traces and the bound is never approached. The search looks
where the designs are ambiguous:

1. the named families of :func:`.environments.family_means` — ``stress`` (gaps at the
   centres of Alg. 1's zones, 2^-p), ``near-tied`` (all means within g of each other),
   ``spread`` (gaps over one octave) and ``ladder`` (gaps two octaves apart, for the
   batched algorithms' decisions at different sample sizes) — at the scales g T resolves
   (2^-p ≥ ½√(k/T) for the zone families, a log grid for near-tied);
2. random instances: every mean in 0.5 ± g/2 at the near-tied scales, or gaps drawn
   log-uniformly between ½√(k/T) and ``max_scale`` (several scales at once);
3. for Alg. 3 (``list-batched``), its own ambiguous instances: each arm's gap at a
   decision's first candidate threshold plus u·η (``thresholds``, scale = u);
4. a hill-climb: random perturbations of the best so far (each mean moved by N(0, (s/8)²),
   then N(0, (s/16)²), s the spread of its means).

Each candidate is simulated with ``pilot_runs`` executions and scored by the one-sided 95%
lower bound on its list size (:func:`.guarantee.list_size_bounds`), then the traces
covering 1-δ, then the distinct traces; the winner is returned with its family and scale,
so it can be re-run (``--instance FAMILY --gap g``) and confirmed on *fresh* executions —
the pilot's own count is biased upwards by the selection. ``max_scale`` bounds the scales
and ``max_spread`` (when set) drops every candidate whose means spread wider, keeping the
search near the all-equal instance (the lower-bound argument's neighbourhood).

Fully sequential algorithms (UCB1, Thompson) and successive elimination play a different
trace in nearly every execution on any instance; they are not searched (``stress`` is
used) — their per-round simulation would make the search cost minutes for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable import list_batched, registry
from iclr25.core.bandit_replicable.environments import (
    BERNOULLI_SUBGAUSSIAN,
    STRESS_FAMILIES,
    ArmsEnvironment,
    family_means,
)
from iclr25.core.bandit_replicable.guarantee import list_size_bounds
from iclr25.core.bandit_replicable.simulate import SimulationConfig, simulate
from iclr25.core.bandit_replicable.traces import list_statistics
from iclr25.parallel import derive_seed

NOT_SEARCHED = ("ucb1", "thompson", "successive-elimination")


@dataclass(frozen=True)
class SearchConfig:
    algo: str
    k: int
    horizon: int
    pilot_runs: int = 200  # executions per candidate
    delta: float = 0.05
    batches: int = 3
    noise: str = "bernoulli"
    sigma: float = 1.0
    random_draws: int = 16  # random instances (module docstring, step 2)
    perturbations: int = 6  # random perturbations of the best candidate
    max_scale: float = 0.5  # g ≤ this: 0.5 spans the Bernoulli range, small = near-tied
    max_spread: float | None = None  # every mean within this of the others (lower bound)


def candidate_scales(family: str, k: int, horizon: int, max_scale: float) -> list[float]:
    """Scales g the horizon can resolve: 2^-p ≥ ½√(k/T) (zone centres), or a log grid."""
    floor = min(0.5 * np.sqrt(k / horizon), max_scale)
    if family == "near-tied":
        return [float(g) for g in np.geomspace(floor, max_scale, 6)]
    scales = [2.0**-p for p in range(1, 64) if floor <= 2.0**-p <= max_scale]
    return scales or [float(max_scale)]


def _score(env: ArmsEnvironment, config: SearchConfig, seed: int) -> tuple:
    """(ℓ̲, share outside the best ℓ̲ - 1 traces, covering, distinct) of a pilot: the 95%
    lower bound on the list size first, then its margin, so a robust spread of traces
    beats a lucky one."""
    sim_config = SimulationConfig(
        config.algo,
        config.horizon,
        config.pilot_runs,
        config.delta,
        config.batches,
        curve_points=0,
    )
    keys = simulate(env, sim_config, seed).keys
    stats = list_statistics(keys, config.delta)
    bounds = list_size_bounds(keys, config.delta)
    margin = bounds.outside_all[max(bounds.lower - 1, 0)] / max(bounds.runs, 1)
    return bounds.lower, float(margin), stats.traces_covering, stats.distinct_traces


def _environment(config: SearchConfig, means: np.ndarray, label: str) -> ArmsEnvironment:
    return ArmsEnvironment(np.asarray(means, np.float64), config.noise, config.sigma, label=label)


def search_instance(config: SearchConfig, seed: int) -> dict:
    """The candidate with the most traces covering 1-δ (module docstring)."""
    registry.get(config.algo)
    if config.algo in NOT_SEARCHED:
        scale = min(0.5, config.max_scale)
        means = family_means("stress", config.k, scale)
        return _found("stress", scale, means, None, 0, searched=False)
    candidates = [
        (family, scale, family_means(family, config.k, scale))
        for family in STRESS_FAMILIES
        for scale in candidate_scales(family, config.k, config.horizon, config.max_scale)
    ]
    if config.algo == "list-batched":
        candidates += _threshold_candidates(config)
    rng = np.random.default_rng(derive_seed(seed, "random"))
    near = candidate_scales("near-tied", config.k, config.horizon, config.max_scale)
    for i in range(config.random_draws):
        scale = near[i % len(near)]
        if i % 2:  # every mean uniform within g
            means = 0.5 + scale * (rng.random(config.k) - 0.5)
        else:  # gaps log-uniform in [floor, max_scale]: several scales at once
            gaps = np.exp(rng.uniform(np.log(near[0]), np.log(config.max_scale), config.k - 1))
            means = np.concatenate(
                [[0.5 + config.max_scale / 2], 0.5 + config.max_scale / 2 - gaps]
            )
            scale = config.max_scale
        candidates.append(("random", scale, means))
    best, evaluated = None, 0
    for family, scale, means in candidates:
        if not _within(config, means):
            continue
        env = _environment(config, means, family)
        score = _score(env, config, derive_seed(seed, evaluated))
        evaluated += 1
        if best is None or score > best[0]:
            best = (score, family, scale, means, False)
    for step in (8.0, 16.0):  # hill-climb: perturb the best so far, finer the second time
        _, family, scale, centre, _ = best
        spread = max(float(centre.max() - centre.min()), 1e-6)
        for _ in range(config.perturbations):
            means = np.clip(centre + rng.normal(0.0, spread / step, config.k), 0.0, 1.0)
            if not _within(config, means):
                continue
            env = _environment(config, means, family)
            score = _score(env, config, derive_seed(seed, evaluated))
            evaluated += 1
            if score > best[0]:
                best = (score, family, scale, means, True)
    (_, _, covering, distinct), family, scale, means, perturbed = best
    return _found(family, scale, means, (covering, distinct), evaluated, perturbed=perturbed)


def _within(config: SearchConfig, means: np.ndarray) -> bool:
    spread = float(means.max() - means.min())
    return config.max_spread is None or spread <= config.max_spread + 1e-12


def _threshold_candidates(config: SearchConfig) -> list:
    """Alg. 3's own ambiguous instances (:func:`.list_batched.threshold_gaps`), u ∈ [0, 3],
    kept when every mean lies in [0, 1] and within ``max_scale`` of the others."""
    sigma = BERNOULLI_SUBGAUSSIAN if config.noise == "bernoulli" else config.sigma
    out = []
    for u in (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0):
        gaps = list_batched.threshold_gaps(
            config.horizon, config.batches, config.k, config.delta, sigma, u
        )
        spread = float(gaps.max())
        if spread <= config.max_scale:
            means = np.concatenate([[0.5 + spread / 2], 0.5 + spread / 2 - gaps])
            out.append(("thresholds", u, means))
    return out


def _found(family, scale, means, score, evaluated, searched=True, perturbed=False) -> dict:
    return {
        "family": family,
        "scale": float(scale),
        "perturbed": perturbed,
        "means": [round(float(m), 9) for m in means],
        "searched": searched,
        "candidates": evaluated,
        "pilot_covering": score[0] if score else None,
        "pilot_distinct": score[1] if score else None,
    }

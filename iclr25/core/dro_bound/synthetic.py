"""Synthetic data from known distributions (the ``--synthetic`` inputs and the coverage
experiment), each with a large independent sample for its true risk.

- ``gaussian-classes``: y = ±1 with probability 1/2, x | y ~ N(y·μ, I_d), μ = 1/√d·(1, …, 1)
  (‖μ‖ = 1 in every dimension, so the Bayes error Φ(−1) ≈ 15.9 % does not change with d);
- ``linear-gaussian``: x ~ N(0, I_d), y = βᵀx + 0.5·ε, β = 1/√d·(1, …, 1), ε ~ N(0, 1);
- ``linear-heavy``: the same with ε ~ Student-t(3)/√3 (unit variance, heavy tails);
- ``ball-classes``: as ``gaussian-classes`` but x | y = y·μ + U with U uniform in the ball
  of radius √(d + 2) (E‖U‖² = d, like N(0, I_d)): a bounded support, ‖x‖₂ ≤ 1 + √(d + 2),
  on which the ``theory`` radius (:mod:`theory`) applies;
- ``ball-linear``: x uniform in that ball, y = βᵀx + 0.5·ε with ε uniform on [−√3, √3]
  (unit variance): ‖x‖₂ ≤ √(d + 2) and |y| ≤ √(d + 2) + 0.5·√3.
"""

from __future__ import annotations

import math

import numpy as np

from iclr25.core.dro_bound.data import Dataset
from iclr25.errors import UsageError

SYNTHETIC = ("gaussian-classes", "linear-gaussian", "linear-heavy", "ball-classes", "ball-linear")
NOISE_SD = 0.5


def is_classification(name: str) -> bool:
    return name in ("gaussian-classes", "ball-classes")


def support_bounds(name: str, d: int) -> tuple[float, float | None] | None:
    """(X, Y): ‖x‖₂ ≤ X and |y| ≤ Y on the whole support (Y None for classes), or None
    for the unbounded distributions."""
    radius = math.sqrt(d + 2.0)
    if name == "ball-classes":
        return 1.0 + radius, None
    if name == "ball-linear":
        return radius, radius + NOISE_SD * math.sqrt(3.0)
    return None


def _uniform_ball(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """(n, d) uniform in the ball of radius √(d + 2)."""
    g = rng.standard_normal((n, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return g * (math.sqrt(d + 2.0) * rng.random(n) ** (1.0 / d))[:, None]


def sample_synthetic(name: str, n: int, d: int, rng: np.random.Generator):
    """(X (n, d), y (n,)) from the named distribution."""
    if name not in SYNTHETIC:
        raise UsageError(
            f"unknown synthetic data set {name!r}", f"use one of: {', '.join(SYNTHETIC)}"
        )
    if n < 1 or d < 1:
        raise UsageError(f"synthetic sizes n={n}, d={d} must be ≥ 1", "pass --n and --d ≥ 1")
    direction = np.full(d, 1.0 / np.sqrt(d))
    if is_classification(name):
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        noise_x = rng.standard_normal((n, d)) if name == "gaussian-classes" else None
        if noise_x is None:
            noise_x = _uniform_ball(rng, n, d)
        return y[:, None] * direction[None, :] + noise_x, y
    if name == "ball-linear":
        X = _uniform_ball(rng, n, d)
        return X, X @ direction + NOISE_SD * rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), n)
    X = rng.standard_normal((n, d))
    if name == "linear-gaussian":
        noise = rng.standard_normal(n)
    else:
        noise = rng.standard_t(3, size=n) / np.sqrt(3.0)
    return X, X @ direction + NOISE_SD * noise


def synthetic_dataset(name: str, n: int, d: int, seed: int) -> Dataset:
    X, y = sample_synthetic(name, n, d, np.random.default_rng(seed))
    labels = [-1, 1] if is_classification(name) else None
    return Dataset(X, y, [f"x{j}" for j in range(d)], "y", f"synthetic:{name}", labels, None)

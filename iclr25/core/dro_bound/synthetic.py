"""Synthetic data from known distributions (the ``--synthetic`` inputs and the coverage
experiment), each with a large independent sample for its true risk.

- ``gaussian-classes``: y = ±1 with probability 1/2, x | y ~ N(y·μ, I_d), μ = 1/√d·(1, …, 1)
  (‖μ‖ = 1 in every dimension, so the Bayes error Φ(−1) ≈ 15.9 % does not change with d);
- ``linear-gaussian``: x ~ N(0, I_d), y = βᵀx + 0.5·ε, β = 1/√d·(1, …, 1), ε ~ N(0, 1);
- ``linear-heavy``: the same with ε ~ Student-t(3)/√3 (unit variance, heavy tails).
"""

from __future__ import annotations

import numpy as np

from iclr25.core.dro_bound.data import Dataset
from iclr25.errors import UsageError

SYNTHETIC = ("gaussian-classes", "linear-gaussian", "linear-heavy")
NOISE_SD = 0.5


def is_classification(name: str) -> bool:
    return name == "gaussian-classes"


def sample_synthetic(name: str, n: int, d: int, rng: np.random.Generator):
    """(X (n, d), y (n,)) from the named distribution."""
    if name not in SYNTHETIC:
        raise UsageError(
            f"unknown synthetic data set {name!r}", f"use one of: {', '.join(SYNTHETIC)}"
        )
    if n < 1 or d < 1:
        raise UsageError(f"synthetic sizes n={n}, d={d} must be ≥ 1", "pass --n and --d ≥ 1")
    direction = np.full(d, 1.0 / np.sqrt(d))
    if name == "gaussian-classes":
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        X = y[:, None] * direction[None, :] + rng.standard_normal((n, d))
        return X, y
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

"""Shared fixtures for the dro-bound core tests: small seeded data, single-threaded torch."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def single_torch_thread():
    """Tiny tensors: intra-op threads only add contention (restored after each test)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def classification_data(n: int = 80, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = np.linspace(1.0, -0.5, d)
    y = np.where(X @ w + 0.3 + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def regression_data(n: int = 80, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ np.linspace(1.0, -0.5, d) + 0.2 + 0.5 * rng.normal(size=n)
    return X, y


@pytest.fixture
def make_clf():
    """classification_data(n, d, seed) -> (X, y ±1)."""
    return classification_data


@pytest.fixture
def make_reg():
    """regression_data(n, d, seed) -> (X, y real)."""
    return regression_data

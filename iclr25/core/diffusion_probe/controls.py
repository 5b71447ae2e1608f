"""Structure-free controls for the forward-backward probe, each with its exact denoiser.

Same samples, levels and seeds as the hierarchy; only the data model differs.

- ``markov``: a first-order chain with position-dependent transition matrices,
  p(x_1) Π_i P_i(x_i → x_{i+1}), fitted by counting on ``fit_samples`` (20,000) data of the
  same grammar instance (add-``alpha`` smoothing, alpha = 1e-3 so unseen pairs stay
  possible but rare). It has the data's one-step correlations and no hierarchy. Its exact
  denoiser is forward filtering, backward sampling (FFBS): α_1 = p(x_1)·λ_1,
  α_{i+1}(b) ∝ λ_{i+1}(b) Σ_a α_i(a) P_i(a, b); draw x_d ~ α_d, then
  x_i ~ α_i(a)·P_i(a, x_{i+1}).
- ``iid``: independent tokens with the data's per-position marginals; the exact denoiser
  draws each token from marginal_i(a)·λ_i(a). Its χ̃ is 1 in expectation (a check of the
  estimator on real sampling noise).

Neither control has a class, so class-change figures are None for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CONTROLS = ("markov", "iid")


@dataclass
class MarkovChain:
    initial: np.ndarray  # (v,)
    transitions: np.ndarray  # (d − 1, v, v): P_i[a, b] = p(x_{i+1} = b | x_i = a)

    @classmethod
    def fit(cls, data: np.ndarray, v: int, alpha: float = 1e-3) -> MarkovChain:
        n, d = data.shape
        initial = np.bincount(data[:, 0], minlength=v) + alpha
        counts = np.full((d - 1, v, v), alpha)
        pos = np.broadcast_to(np.arange(d - 1), (n, d - 1))
        np.add.at(counts, (pos, data[:, :-1], data[:, 1:]), 1.0)
        return cls(initial / initial.sum(), counts / counts.sum(axis=2, keepdims=True))

    def generate(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self.transitions.shape[0] + 1
        x = np.empty((n, d), np.int64)
        x[:, 0] = _draw_rows(np.broadcast_to(self.initial, (n, self.initial.size)), rng.random(n))
        for i in range(d - 1):
            x[:, i + 1] = _draw_rows(self.transitions[i][x[:, i]], rng.random(n))
        return x

    def denoise(self, leaf_msgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A posterior sample per datum given leaf evidence (n, d, v): FFBS."""
        n, d, v = leaf_msgs.shape
        alpha = np.empty((n, d, v))
        a = self.initial * leaf_msgs[:, 0]
        alpha[:, 0] = a / a.sum(axis=1, keepdims=True)
        for i in range(d - 1):
            a = (alpha[:, i] @ self.transitions[i]) * leaf_msgs[:, i + 1]  # (n, v)
            alpha[:, i + 1] = a / a.sum(axis=1, keepdims=True)
        x = np.empty((n, d), np.int64)
        x[:, d - 1] = _draw_rows(alpha[:, d - 1], rng.random(n))
        for i in range(d - 2, -1, -1):
            weights = alpha[:, i] * self.transitions[i][:, x[:, i + 1]].T  # (n, v)
            x[:, i] = _draw_rows(weights, rng.random(n))
        return x


@dataclass
class IndependentTokens:
    marginals: np.ndarray  # (d, v)

    @classmethod
    def fit(cls, data: np.ndarray, v: int, alpha: float = 1e-3) -> IndependentTokens:
        d = data.shape[1]
        counts = np.full((d, v), alpha)
        np.add.at(counts, (np.broadcast_to(np.arange(d), data.shape), data), 1.0)
        return cls(counts / counts.sum(axis=1, keepdims=True))

    def generate(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d, v = self.marginals.shape
        u = rng.random((n, d))
        return _draw_rows(np.broadcast_to(self.marginals, (n, d, v)), u)

    def denoise(self, leaf_msgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n, d, _ = leaf_msgs.shape
        return _draw_rows(self.marginals * leaf_msgs, rng.random((n, d)))


def _draw_rows(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws along the last axis (weights need not be normalised)."""
    cum = np.cumsum(weights, axis=-1)
    idx = (cum <= u[..., None] * cum[..., -1:]).sum(axis=-1)
    return np.minimum(idx, weights.shape[-1] - 1).astype(np.int64)


def fit_control(name: str, data: np.ndarray, v: int):
    if name == "markov":
        return MarkovChain.fit(data, v)
    if name == "iid":
        return IndependentTokens.fit(data, v)
    raise ValueError(f"unknown control {name!r}; choose from {', '.join(CONTROLS)}")

"""The embedding space in which works are compared and classified.

``EmbeddingSpace.fit(X, groups)`` learns, on reference works only, the per-dimension
mean and standard deviation; ``transform`` standardises, clips at +-``Z_MAX`` standard
deviations, then (when feature groups are given, as for the style-statistics encoder)
divides every feature of a group by sqrt(group size) so that each group — colour,
contrast, edges, Gram, composition — has the same total weight whatever its number of
features. ``unit`` adds L2 normalisation, the space of the cosine searches (k-NN,
nearest works, typicality).

Choices (the paper does not say):
- standardisation is fitted inside each training fold of the cross-validation, so
  held-out works never leak into it;
- a dimension (nearly) constant over the corpus — the colour features of a corpus of
  black-and-white prints — gets its standard deviation floored at ``STD_FLOOR_SHARE``
  times the median standard deviation of all dimensions, and standardised values are
  clipped at +-``Z_MAX``: a slightly tinted query then differs from its grey twin by a
  few units in those dimensions instead of by 10^5, which would leave its cosine to
  every work near 0 (and its typicality p-value at its minimum).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STD_FLOOR_SHARE = 0.05  # floor of a dimension's std, as a share of the median std
Z_MAX = 5.0  # standardised values are clipped to [-Z_MAX, Z_MAX]


@dataclass
class EmbeddingSpace:
    mean: np.ndarray  # (d,)
    std: np.ndarray  # (d,) floored
    weight: np.ndarray  # (d,) 1 / sqrt(size of the dimension's group), or ones

    @classmethod
    def fit(cls, X: np.ndarray, groups: list[str] | None = None) -> EmbeddingSpace:
        X = np.asarray(X, dtype=np.float64)  # (n, d)
        std = X.std(axis=0)
        floor = max(STD_FLOOR_SHARE * float(np.median(std)), 1e-12)
        weight = np.ones(X.shape[1])
        if groups:
            _, inverse, counts = np.unique(
                np.asarray(groups), return_inverse=True, return_counts=True
            )
            weight = 1.0 / np.sqrt(counts[inverse])
        return cls(mean=X.mean(axis=0), std=np.maximum(std, floor), weight=weight)

    def transform(self, X: np.ndarray) -> np.ndarray:
        z = (np.asarray(X, dtype=np.float64) - self.mean) / self.std  # (n, d)
        return (np.clip(z, -Z_MAX, Z_MAX) * self.weight).astype(np.float32)

    def unit(self, X: np.ndarray) -> np.ndarray:
        Z = self.transform(X)  # (n, d)
        return Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)

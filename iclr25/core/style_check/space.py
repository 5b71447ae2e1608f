"""The embedding space in which works are compared and classified.

``EmbeddingSpace.fit(X, groups)`` learns, on reference works only, the per-dimension
mean and standard deviation; ``transform`` standardises, then (when feature groups are
given, as for the style-statistics encoder) divides every feature of a group by
sqrt(group size) so that each group — colour, contrast, edges, Gram, composition — has
the same total weight whatever its number of features. ``unit`` adds L2 normalisation,
the space of the cosine searches (k-NN, nearest works, typicality).

Choice (the paper does not say): standardisation is fitted inside each training fold
of the cross-validation, so held-out works never leak into it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STD_FLOOR = 1e-6


@dataclass
class EmbeddingSpace:
    mean: np.ndarray  # (d,)
    scale: np.ndarray  # (d,) = std * sqrt(group size)

    @classmethod
    def fit(cls, X: np.ndarray, groups: list[str] | None = None) -> EmbeddingSpace:
        X = np.asarray(X, dtype=np.float64)  # (n, d)
        mean = X.mean(axis=0)
        std = np.maximum(X.std(axis=0), STD_FLOOR)
        if groups:
            names, inverse, counts = np.unique(
                np.asarray(groups), return_inverse=True, return_counts=True
            )
            del names
            std = std * np.sqrt(counts[inverse])
        return cls(mean=mean, scale=std)

    def transform(self, X: np.ndarray) -> np.ndarray:
        return ((np.asarray(X, dtype=np.float64) - self.mean) / self.scale).astype(np.float32)

    def unit(self, X: np.ndarray) -> np.ndarray:
        Z = self.transform(X)  # (n, d)
        return Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)

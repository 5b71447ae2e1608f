"""Reference implementations of pairwise squared Euclidean distances.

``pairwise_sqdist_reference`` is the plain definition (float64 broadcast, small inputs);
``pairwise_sqdist_cpu`` is the CPU fast path (blocked expansion in float64, clipped at 0).
"""

from __future__ import annotations

import numpy as np


def _check(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.atleast_2d(np.asarray(x))
    y = np.atleast_2d(np.asarray(y))
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"feature dimensions differ: {x.shape[1]} vs {y.shape[1]}")
    return x, y


def pairwise_sqdist_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """D[i, j] = sum_k (x[i, k] - y[j, k])^2 by definition; O(n m d) memory."""
    x, y = _check(x, y)
    diff = x[:, None, :].astype(np.float64) - y[None, :, :].astype(np.float64)  # (n, m, d)
    return np.einsum("nmd,nmd->nm", diff, diff)


def pairwise_sqdist_cpu(x: np.ndarray, y: np.ndarray, block_rows: int = 2048) -> np.ndarray:
    """Fast CPU path: |x|^2 + |y|^2 - 2 x.y in float64, by row blocks, clipped at 0."""
    x, y = _check(x, y)
    x = x.astype(np.float64, copy=False)
    y = y.astype(np.float64, copy=False)
    out = np.empty((x.shape[0], y.shape[0]), dtype=np.float64)
    y_sq = np.einsum("md,md->m", y, y)  # (m,)
    for start in range(0, x.shape[0], block_rows):
        xb = x[start : start + block_rows]  # (b, d)
        block = np.einsum("bd,bd->b", xb, xb)[:, None] + y_sq[None, :] - 2.0 * (xb @ y.T)
        np.maximum(block, 0.0, out=block)
        out[start : start + block_rows] = block
    return out

"""Reference and CPU paths of the entropic log-sum-exp rows (see ``kernel.cu``).

For each row i of (n, m) arrays L (losses at Monte Carlo samples) and C (transport costs):
``lse_i = log((1/m) Σ_j exp((L_ij − λ C_ij)/ε))`` and ``wc_i = Σ_j softmax_j(·) C_ij``.

- :func:`lse_rows_reference`: the plain definition, one row at a time in float64 numpy
  (max-shifted, the textbook stable form) — slow, obviously right;
- :func:`lse_rows_torch`: the vectorised torch path (CPU, or a CUDA device without CuPy).
"""

from __future__ import annotations

import math

import numpy as np


def lse_rows_reference(L, C, lam: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    L = np.asarray(L, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    n, m = L.shape
    lse = np.full(n, -math.inf)
    wc = np.zeros(n)
    for i in range(n):
        if m == 0:
            continue
        with np.errstate(invalid="ignore"):
            a = (L[i] - lam * C[i]) / eps
        top = a.max()
        if not np.isfinite(top):
            continue
        e = np.exp(a - top)
        lse[i] = top + math.log(e.sum()) - math.log(m)
        wc[i] = float(np.sum(np.where(e > 0, e * C[i], 0.0)) / e.sum())
    return lse, wc


def lse_rows_torch(L, C, lam: float, eps: float):
    """Vectorised torch version: (n, m) tensors -> (lse (n,), wc (n,)) tensors."""
    import torch

    n, m = L.shape
    if m == 0:
        return torch.full((n,), -math.inf, dtype=L.dtype, device=L.device), L.new_zeros(n)
    a = (L - lam * C) / eps  # (n, m)
    lse = torch.logsumexp(a, dim=1) - math.log(m)
    p = torch.softmax(a, dim=1)
    wc = torch.where(p > 0, p * C, torch.zeros_like(C)).sum(dim=1)
    return lse, wc

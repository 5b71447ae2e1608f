"""Y = tanh(C + A X) for a CSR matrix A: the plain definition and the torch.sparse path.

``csr_spmm_tanh_reference``: float64 loops over each row's nonzeros (numpy) — small inputs
only. ``csr_spmm_tanh_torch``: ``torch.tanh(C + torch.sparse.mm(A, X))``, the path the
ph-dgn command ships on every device (CPU and CUDA).

Arguments: ``crow`` (n + 1,) row pointers, ``col`` (nnz,) column indices, ``val`` (nnz,)
values, ``x`` and ``c`` (n, d).
"""

from __future__ import annotations

import numpy as np


def csr_spmm_tanh_reference(crow, col, val, x, c) -> np.ndarray:
    """tanh(c + A x) row by row, float64."""
    crow, col = np.asarray(crow, dtype=np.int64), np.asarray(col, dtype=np.int64)
    val = np.asarray(val, dtype=np.float64)
    x, c = np.asarray(x, dtype=np.float64), np.asarray(c, dtype=np.float64)
    n = crow.shape[0] - 1
    if x.ndim != 2 or c.shape != (n, x.shape[1]) or x.shape[0] != n:
        raise ValueError(f"x and c must be (n, d) with n = {n}, got {x.shape} and {c.shape}")
    out = c.copy()  # (n, d)
    for u in range(n):
        for k in range(crow[u], crow[u + 1]):
            out[u] += val[k] * x[col[k]]
    return np.tanh(out)


def csr_spmm_tanh_torch(crow, col, val, x, c):
    """The shipped path: torch.sparse CSR SpMM, then + c and tanh (x's device and dtype)."""
    import warnings

    import torch

    x = torch.as_tensor(x)
    c = torch.as_tensor(c, dtype=x.dtype, device=x.device)
    n = c.shape[0]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        a = torch.sparse_csr_tensor(
            torch.as_tensor(crow, dtype=torch.int64, device=x.device),
            torch.as_tensor(col, dtype=torch.int64, device=x.device),
            torch.as_tensor(val, dtype=x.dtype, device=x.device),
            (n, n),
            check_invariants=True,
        )
    return torch.tanh(c + a @ x) if n else c.clone()

"""Gaussian-kernel sums for MMD: the plain definition and the tiled torch path.

For bandwidth parameters γ_b (k_b(x, y) = exp(-γ_b ‖x - y‖²), γ_b = 1/(2 h_b²)) both
return S_b = Σ_i Σ_j exp(-γ_b ‖x_i - y_j‖²), one float64 per bandwidth.

``rbf_kernel_sums_reference``: by definition, float64 differences, O(n m d) memory —
small inputs only. ``rbf_kernel_sums_tiled``: the CPU fast path (and a torch-on-CUDA
fallback): blocks of rows × columns, |x|² + |y|² - 2 x·y clipped at 0, exp, summed in
float64, so memory stays O(block²) for 10^4–10^5 samples.
"""

from __future__ import annotations

import numpy as np


def _check(x, y, gammas) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    gammas = np.atleast_1d(np.asarray(gammas, dtype=np.float64))
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must be (n, d) and (m, d), got {x.shape} and {y.shape}")
    return x, y, gammas


def rbf_kernel_sums_reference(x, y, gammas) -> np.ndarray:
    """S_b = Σ_ij exp(-γ_b ‖x_i - y_j‖²) by definition (float64)."""
    x, y, gammas = _check(x, y, gammas)
    diff = x[:, None, :] - y[None, :, :]  # (n, m, d)
    sq = np.einsum("nmd,nmd->nm", diff, diff)  # (n, m)
    return np.array([np.exp(-g * sq).sum() for g in gammas], dtype=np.float64)


def rbf_kernel_sums_tiled(x, y, gammas, block: int = 2048, dtype=None, device: str = "cpu"):
    """The same sums with torch, in (block × block) tiles, accumulated in float64."""
    import torch

    dtype = dtype or torch.float64
    x = torch.as_tensor(np.asarray(x) if not torch.is_tensor(x) else x).to(device, dtype)
    y = torch.as_tensor(np.asarray(y) if not torch.is_tensor(y) else y).to(device, dtype)
    if x.dim() != 2 or y.dim() != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(
            f"x and y must be (n, d) and (m, d), got {tuple(x.shape)}, {tuple(y.shape)}"
        )
    g = torch.as_tensor(np.atleast_1d(np.asarray(gammas, dtype=np.float64))).to(device, dtype)
    totals = torch.zeros(g.shape[0], dtype=torch.float64, device=device)
    y_sq = (y * y).sum(dim=1)  # (m,)
    for i in range(0, x.shape[0], block):
        xb = x[i : i + block]  # (bx, d)
        xb_sq = (xb * xb).sum(dim=1)[:, None]  # (bx, 1)
        for j in range(0, y.shape[0], block):
            sq = (xb_sq + y_sq[None, j : j + block] - 2.0 * xb @ y[j : j + block].T).clamp_min(0)
            kernel = torch.exp(-g[:, None, None] * sq[None])  # (nb, bx, by)
            totals += kernel.sum(dim=(1, 2)).to(torch.float64)
    return totals.cpu().numpy()

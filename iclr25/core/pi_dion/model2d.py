"""The 2-D PI-DION network: CNN branches on the 16×16 sensor grid, a shared tanh trunk on
(x, y), and the residual on the trunk by forward Taylor propagation along x and y.

Paper → code as in :mod:`.model` (Cho & Son 2025; a reviewer reports CNN branches for
gridded 2-D measurements): u_θ(x, y) = b(x, y) Σ_k b^R_k τ_k, b = s_b·x(1−x) y(1−y)
(u = 0 on ∂Ω; s_b = ``u_scale``, 16 in trained models so that max b = 1), f_θ =
Σ_k b^I_k τ_k. For 𝓛 = −Δ + c: 𝓛φ_k = −(b Δτ_k + 2 ∇b·∇τ_k + τ_k Δb) + c b τ_k, and
(τ, ∂_xτ, ∂_yτ, ∂_xxτ, ∂_yyτ) come from one forward Taylor pass per direction through
the trunk (:func:`taylor_trunk_2d`), so the residual of every instance is one GEMM.
Scaling as in 1-D: branches see d / RMS(d), outputs × RMS(d) (exactly homogeneous).

Trained by :mod:`.train2d` (``train --dim 2``); tested against autograd.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from iclr25.core.pi_dion.model import EPS_SCALE, mlp, residual_and_sensor_fit, tanh_taylor


@dataclass(frozen=True)
class NetConfig2D:
    side: int = 16  # sensors per axis (the branch input is side × side)
    channels: int = 16  # CNN channels
    width: int = 64  # trunk width
    depth: int = 3  # trunk hidden layers
    basis: int = 16  # p
    f_scale: float = 1.0  # typical |f| / RMS(d)
    u_scale: float = 1.0  # the boundary factor is u_scale·x(1−x)y(1−y) (16: maximum 1)


def cnn(side: int, channels: int, width: int, n_out: int) -> nn.Sequential:
    """(N, 1, side, side) → (N, n_out): two stride-2 tanh convolutions, then an MLP head."""
    reduced = (side + 3) // 4  # two stride-2 convolutions with padding 1
    return nn.Sequential(
        nn.Conv2d(1, channels, 3, stride=2, padding=1), nn.Tanh(),
        nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.Tanh(),
        nn.Flatten(), nn.Linear(channels * reduced * reduced, width), nn.Tanh(),
        nn.Linear(width, n_out),
    )  # fmt: skip


def taylor_trunk_2d(trunk: nn.Sequential, pts: torch.Tensor):
    """(τ (M, p), ∇τ (2, M, p), (∂_xxτ, ∂_yyτ) (2, M, p)) at points ``pts`` (M, 2): the 1-D
    Taylor step of :func:`.model.taylor_trunk` along each axis, both axes batched."""
    a = pts  # (M, 2)
    a1 = torch.eye(2, dtype=pts.dtype, device=pts.device)[:, None, :].expand(2, len(pts), 2)
    a2 = torch.zeros_like(a1)  # (2, M, 2): direction, point, feature
    for layer in trunk:
        if isinstance(layer, nn.Linear):
            a = layer(a)
            a1 = a1 @ layer.weight.T
            a2 = a2 @ layer.weight.T
        else:
            a, a1, a2 = tanh_taylor(a, a1, a2)
    return a, a1, a2


def boundary_basis_2d(pts: torch.Tensor, tau, grad, second, c: float, scale: float = 1.0):
    """φ_k = b τ_k and 𝓛φ_k = −Δφ_k + c φ_k at ``pts`` (M, 2) → two (M, p), with
    b = ``scale``·x(1−x)y(1−y)."""
    x, y = pts[:, 0:1], pts[:, 1:2]  # (M, 1)
    bx, by = x * (1 - x), y * (1 - y)
    b = scale * bx * by
    grad_b = (scale * (1 - 2 * x) * by, scale * bx * (1 - 2 * y))
    lap_b = -2 * scale * (by + bx)
    phi = b * tau
    lap_phi = b * (second[0] + second[1]) + 2 * (grad_b[0] * grad[0] + grad_b[1] * grad[1])
    lap_phi = lap_phi + lap_b * tau
    return phi, -lap_phi + c * phi


class PIDION2D(nn.Module):
    def __init__(self, config: NetConfig2D) -> None:
        super().__init__()
        self.config = config
        self.trunk = mlp(2, config.width, config.depth, config.basis)
        self.branch_u = cnn(config.side, config.channels, config.width, config.basis)
        self.branch_f = cnn(config.side, config.channels, config.width, config.basis)

    def coefficients(self, d: torch.Tensor):
        """(b^R, b^I) for data ``d`` (N, side²) in row-major sensor order → two (N, p)."""
        s = d.pow(2).mean(1, keepdim=True).sqrt().clamp_min(EPS_SCALE)  # (N, 1)
        grid = (d / s).view(-1, 1, self.config.side, self.config.side)  # (N, 1, side, side)
        return self.branch_u(grid) * s, self.branch_f(grid) * (s * self.config.f_scale)

    def fields(self, d: torch.Tensor, pts: torch.Tensor):
        """(u_θ, f_θ) at points ``pts`` (M, 2) → two (N, M)."""
        coef_u, coef_f = self.coefficients(d)
        tau = self.trunk(pts)  # (M, p)
        b = self.config.u_scale * (pts[:, 0] * (1 - pts[:, 0]) * pts[:, 1] * (1 - pts[:, 1]))
        b = b[:, None]
        return coef_u @ (b * tau).T, coef_f @ tau.T

    def residual(self, d: torch.Tensor, pts: torch.Tensor, c: float):
        """𝓛u_θ − f_θ at collocation points ``pts`` (M, 2) for every instance → (N, M)."""
        coef_u, coef_f = self.coefficients(d)
        tau, grad, second = taylor_trunk_2d(self.trunk, pts)
        _, l_phi = boundary_basis_2d(pts, tau, grad, second, c, self.config.u_scale)
        return coef_u @ l_phi.T - coef_f @ tau.T

    def residual_and_fit(self, d: torch.Tensor, x: torch.Tensor, z: torch.Tensor, c: float):
        """(𝓛u_θ − f_θ at ``x`` (M, 2) → (N, M), u_θ at sensors ``z`` (m, 2) → (N, m)): one
        branch pass and one Taylor pass through the trunk on the M + m points."""
        coef_u, coef_f = self.coefficients(d)
        pts = torch.cat([x, z])  # (M + m, 2)
        tau, grad, second = taylor_trunk_2d(self.trunk, pts)
        phi, l_phi = boundary_basis_2d(pts, tau, grad, second, c, self.config.u_scale)
        return residual_and_sensor_fit(coef_u, coef_f, tau, phi, l_phi, len(x))

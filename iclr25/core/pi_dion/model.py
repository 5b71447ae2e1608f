"""The PI-DION network: two branches on the sensor values, one shared tanh trunk.

Paper → code (Cho & Son 2025; DeepONet form, notation partly ours):
  b^R (reconstruction branch) → ``branch_u``, b^I (inverse branch) → ``branch_f``,
  τ (shared trunk) → ``trunk``, p → ``basis``,
  u_θ(x) = x(1−x) Σ_k b^R_k τ_k(x)   (the factor x(1−x) puts u = 0 on ∂Ω exactly),
  f_θ(x) = Σ_k b^I_k τ_k(x).

Residual on the trunk only: for linear 𝓛 = −d²/dx² + c,
𝓛u_θ(x) = Σ_k b^R_k 𝓛φ_k(x) with φ_k = x(1−x) τ_k, so (τ, τ', τ'') at the collocation
points are computed once per collocation set by forward Taylor propagation through the
trunk (:func:`taylor_trunk`) and the residual of every instance is one GEMM.

Scaling (ours): the branches see d / s with s = RMS(d) per instance and their outputs are
multiplied by s, so the map d ↦ (u_θ, f_θ) is exactly positively homogeneous (10× the
data gives 10× f). Outputs carry fixed scales ``u_scale`` / ``f_scale`` (the typical
ratio of f to u for the operator) so both branches start at O(1).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

EPS_SCALE = 1e-30


@dataclass(frozen=True)
class NetConfig:
    sensors: int = 64
    width: int = 64  # trunk and branch hidden width
    depth: int = 3  # hidden layers of trunk and branches
    basis: int = 16  # p, the number of trunk functions
    f_scale: float = 1.0  # typical |f| / RMS(d); set from the operator (see ``output_scales``)


def mlp(n_in: int, width: int, depth: int, n_out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(depth):
        layers += [nn.Linear(n_in if i == 0 else width, width), nn.Tanh()]
    layers.append(nn.Linear(width, n_out))
    return nn.Sequential(*layers)


def taylor_trunk(trunk: nn.Sequential, x: torch.Tensor):
    """(τ, τ', τ'') at points ``x`` (M,) by forward Taylor propagation → three (M, p).

    Per tanh layer: z = W a + b, z' = W a', z'' = W a''; a = tanh z,
    a' = (1 − a²) z', a'' = (1 − a²) z'' − 2 a (1 − a²) z'². On a CUDA device the tanh
    step is the fused kernel :mod:`iclr25.gpu.kernels.taylor_tanh` (same formulas).
    """
    a = x[:, None]  # (M, 1)
    a1 = torch.ones_like(a)
    a2 = torch.zeros_like(a)
    for layer in trunk:
        if isinstance(layer, nn.Linear):
            a = layer(a)
            a1 = a1 @ layer.weight.T
            a2 = a2 @ layer.weight.T
        elif a.is_cuda:
            from iclr25.gpu.kernels.taylor_tanh import taylor_tanh

            a, a1, a2 = taylor_tanh(a, a1, a2)
        else:
            a, a1, a2 = tanh_taylor(a, a1, a2)
    return a, a1, a2


def tanh_taylor(z, z1, z2):
    """The tanh step of forward Taylor propagation (torch): a = tanh z, a' = (1 − a²) z',
    a'' = (1 − a²) z'' − 2 a (1 − a²) z'²; ``z1``, ``z2`` may carry leading direction axes
    (broadcast against ``z``), as in the 2-D trunk."""
    t = torch.tanh(z)
    g = 1 - t * t
    return t, g * z1, g * z2 - 2 * t * g * z1 * z1


def boundary_basis(x: torch.Tensor, tau, tau1, tau2, c: float):
    """φ_k = x(1−x) τ_k and 𝓛φ_k = −φ_k'' + c φ_k at ``x`` (M,) → two (M, p)."""
    b, b1 = (x * (1 - x))[:, None], (1 - 2 * x)[:, None]
    phi = b * tau
    phi2 = -2 * tau + 2 * b1 * tau1 + b * tau2
    return phi, -phi2 + c * phi


def residual_and_sensor_fit(coef_u, coef_f, tau, phi, l_phi, n_col: int):
    """Split one Taylor pass over ``n_col`` collocation points followed by the sensors into
    (𝓛u_θ − f_θ at the collocation points (N, M), u_θ at the sensors (N, m)); shared by
    the 1-D and 2-D models (``tau``, ``phi``, ``l_phi``: trunk, boundary basis, 𝓛 of it)."""
    res = coef_u @ l_phi[:n_col].T - coef_f @ tau[:n_col].T
    return res, coef_u @ phi[n_col:].T


class PIDION(nn.Module):
    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        self.config = config
        w, depth, p = config.width, config.depth, config.basis
        self.trunk = mlp(1, w, depth, p)
        self.branch_u = mlp(config.sensors, w, depth, p)
        self.branch_f = mlp(config.sensors, w, depth, p)

    def coefficients(self, d: torch.Tensor):
        """(b^R, b^I) for data ``d`` (N, m) → two (N, p), positively homogeneous in d."""
        s = d.pow(2).mean(1, keepdim=True).sqrt().clamp_min(EPS_SCALE)  # (N, 1)
        z = d / s
        return self.branch_u(z) * s, self.branch_f(z) * (s * self.config.f_scale)

    def fields(self, d: torch.Tensor, x: torch.Tensor):
        """(u_θ, f_θ) at points ``x`` (M,) for data ``d`` (N, m) → two (N, M)."""
        coef_u, coef_f = self.coefficients(d)
        tau = self.trunk(x[:, None])  # (M, p)
        return coef_u @ (x * (1 - x))[:, None].mul(tau).T, coef_f @ tau.T

    def residual(self, d: torch.Tensor, x: torch.Tensor, c: float):
        """𝓛u_θ − f_θ at collocation points ``x`` (M,) for every instance → (N, M)."""
        coef_u, coef_f = self.coefficients(d)
        tau, tau1, tau2 = taylor_trunk(self.trunk, x)
        _, l_phi = boundary_basis(x, tau, tau1, tau2, c)
        return coef_u @ l_phi.T - coef_f @ tau.T

    def residual_and_fit(self, d: torch.Tensor, x: torch.Tensor, z: torch.Tensor, c: float):
        """(𝓛u_θ − f_θ at ``x`` (N, M), u_θ at sensors ``z`` (N, m)): one branch pass and
        one Taylor pass through the trunk on the M + m points."""
        coef_u, coef_f = self.coefficients(d)
        pts = torch.cat([x, z])  # (M + m,)
        tau, tau1, tau2 = taylor_trunk(self.trunk, pts)
        phi, l_phi = boundary_basis(pts, tau, tau1, tau2, c)
        return residual_and_sensor_fit(coef_u, coef_f, tau, phi, l_phi, len(x))

"""The baselines of the graph-transfer comparison and the node-wise control.

All share the shape encoder (in → d) → L layers/steps → linear readout (d → out), width d,
activation tanh (as the official SWAN baselines):
  GCN       h ← tanh(Â h W_ℓ + b_ℓ), Â = D^{-1/2}(A + I)D^{-1/2}; L untied layers (Kipf & Welling)
  GIN       h ← tanh(MLP_ℓ((1 + ϵ_ℓ) h + A h)), MLP = Linear-tanh-Linear; L untied layers
  A-DGN     h ← h + ε tanh((W − Wᵀ − γI) h + A h V + b); one layer shared over L steps
            (Gravina et al., ICLR 2023; γ = 0.1, sum aggregation)
  GraphCON  y ← y + ε(tanh(Â x W + b) − γ x − α y), x ← x + ε y; one GCN layer shared
            over L steps, γ = α = 1 (Rusch et al., ICML 2022); readout on x
  MLP       h ← tanh(h W_ℓ + b_ℓ): L untied node-wise layers, no edges (the control)
"""

from __future__ import annotations

import torch
from torch import nn

from iclr25.core.ph_dgn.graphs import Aggregation


class Encoded(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, width: int):
        super().__init__()
        self.encoder = nn.Linear(in_dim, width)
        self.readout = nn.Linear(width, out_dim)

    def hidden(self, x: torch.Tensor, aggs: dict[str, Aggregation]) -> torch.Tensor:
        return self.body(self.encoder(x), aggs)  # (n, d): the state the readout sees

    def forward(self, x: torch.Tensor, aggs: dict[str, Aggregation]) -> torch.Tensor:
        return self.readout(self.hidden(x, aggs))  # (n, out_dim)


class GCN(Encoded):
    aggregations_per_step = 1

    def __init__(self, in_dim, out_dim, width, steps):
        super().__init__(in_dim, out_dim, width)
        self.layers = nn.ModuleList(nn.Linear(width, width, bias=False) for _ in range(steps))
        self.bias = nn.Parameter(torch.zeros(steps, width))  # b_ℓ, added after Â

    def body(self, h, aggs):
        for ell, layer in enumerate(self.layers):
            h = torch.tanh(aggs["gcn"](layer(h)) + self.bias[ell])
        return h


class GIN(Encoded):
    aggregations_per_step = 1

    def __init__(self, in_dim, out_dim, width, steps):
        super().__init__(in_dim, out_dim, width)
        self.mlps = nn.ModuleList(
            nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width))
            for _ in range(steps)
        )
        self.eps = nn.Parameter(torch.zeros(steps))  # learned ϵ_ℓ

    def body(self, h, aggs):
        for ell, mlp in enumerate(self.mlps):
            h = torch.tanh(mlp((1 + self.eps[ell]) * h + aggs["sum"](h)))
        return h


class ADGN(Encoded):
    aggregations_per_step = 1

    def __init__(self, in_dim, out_dim, width, steps, eps=0.2, gamma=0.1):
        super().__init__(in_dim, out_dim, width)
        self.w = nn.Parameter(torch.empty(width, width))
        nn.init.kaiming_uniform_(self.w, a=5**0.5)
        self.v = nn.Linear(width, width)
        self.steps, self.eps, self.gamma = steps, eps, gamma

    def body(self, h, aggs):
        antisym = self.w - self.w.T - self.gamma * torch.eye(self.w.shape[0])  # (d, d)
        for _ in range(self.steps):
            h = h + self.eps * torch.tanh(h @ antisym.T + aggs["sum"](self.v(h)))
        return h


class GraphCON(Encoded):
    aggregations_per_step = 1

    def __init__(self, in_dim, out_dim, width, steps, eps=0.2, gamma=1.0, alpha=1.0):
        super().__init__(in_dim, out_dim, width)
        self.conv = nn.Linear(width, width, bias=False)
        self.bias = nn.Parameter(torch.zeros(width))
        self.steps, self.eps, self.gamma, self.alpha = steps, eps, gamma, alpha

    def body(self, x, aggs):
        y = torch.zeros_like(x)
        for _ in range(self.steps):
            force = torch.tanh(aggs["gcn"](self.conv(x)) + self.bias)
            y = y + self.eps * (force - self.gamma * x - self.alpha * y)
            x = x + self.eps * y
        return x


class NodeMLP(Encoded):
    aggregations_per_step = 0

    def __init__(self, in_dim, out_dim, width, steps):
        super().__init__(in_dim, out_dim, width)
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(steps))

    def body(self, h, aggs):
        for layer in self.layers:
            h = torch.tanh(layer(h))
        return h

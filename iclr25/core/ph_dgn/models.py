"""The model registry: a name → a module built at equal width and depth.

Every model maps node features (n, in_dim) to node outputs (n, out_dim) given the graph's
aggregations ``{"sum": A, "gcn": Â}``. Depth L means L layers for the untied baselines
(GCN, GIN, MLP) and L shared steps for the ODE-based ones (PH-DGN_C, PH-DGN, A-DGN,
GraphCON), as in the official grids (L = distance).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from iclr25.core.ph_dgn.baselines import ADGN, GCN, GIN, GraphCON, NodeMLP
from iclr25.core.ph_dgn.graphs import aggregation
from iclr25.core.ph_dgn.phdgn import PHDGN, PHDGNConfig
from iclr25.errors import UsageError

MODELS = ("phdgn-c", "phdgn", "gcn", "gin", "adgn", "graphcon", "mlp")
PHDGN_MODELS = ("phdgn-c", "phdgn")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    in_dim: int
    out_dim: int
    width: int = 16
    steps: int = 10  # L
    eps: float = 0.2  # ε of the ODE-based models
    alpha: float = 1.0  # PH-DGN only: dampening scale α (D = param)
    beta: float = 1.0  # PH-DGN only: forcing scale β
    dampening: str = "param"  # PH-DGN only: param, param+, mlp, dgn
    forcing: str = "dgn-tanh"  # PH-DGN only: dgn-tanh, mlp-sin


def check_models(names: list[str]) -> list[str]:
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        raise UsageError(f"unknown model(s) {', '.join(unknown)}", f"use: {', '.join(MODELS)}")
    if not names:
        raise UsageError("no model given", f"use some of: {', '.join(MODELS)}")
    return names


def build(spec: ModelSpec) -> nn.Module:
    """The module for ``spec.name`` (seed torch before calling for reproducible weights)."""
    check_models([spec.name])
    if spec.name in PHDGN_MODELS:
        port = spec.name == "phdgn"
        cfg = PHDGNConfig(
            spec.in_dim,
            spec.out_dim,
            spec.width,
            spec.steps,
            spec.eps,
            alpha=spec.alpha if port else 0.0,
            beta=spec.beta if port else 0.0,
            dampening=spec.dampening if port else "none",
            forcing=spec.forcing if port else "none",
        )
        return PHDGN(cfg)
    args = (spec.in_dim, spec.out_dim, spec.width, spec.steps)
    if spec.name == "adgn":
        return ADGN(*args, eps=spec.eps)
    if spec.name == "graphcon":
        return GraphCON(*args, eps=spec.eps)
    return {"gcn": GCN, "gin": GIN, "mlp": NodeMLP}[spec.name](*args)


def aggregations_per_forward(model: nn.Module, steps: int) -> int:
    return model.aggregations_per_step * steps


def graph_aggregations(edge_index: torch.Tensor, n: int, dtype=None, weight=None) -> dict:
    return {mode: aggregation(edge_index, n, mode, dtype, weight) for mode in ("sum", "gcn")}


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

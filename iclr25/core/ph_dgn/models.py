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
from iclr25.core.ph_dgn.graphs import AGGREGATIONS, aggregation
from iclr25.core.ph_dgn.phdgn import PHDGN, READOUTS, PHDGNConfig
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
    aggregation: str = "sum"  # PH-DGN only: Φ per half, see parse_aggregation
    readout: str = "pq"  # PH-DGN only: p, q or pq


#: PH-DGN options a task's config carries only when they differ from these defaults, so
#: the cache keys of runs made before the options existed still hold
PHDGN_DEFAULTS = {"aggregation": "sum", "readout": "pq"}


def parse_aggregation(text: str) -> tuple[str, str]:
    """``--aggregation`` → (Φ of the p half, Φ of the q half): ``sum`` or ``gcn`` for
    both halves, or one per half as ``p=gcn,q=sum``."""
    parts = [part.strip() for part in str(text).split(",")]
    if len(parts) == 1 and parts[0] in AGGREGATIONS:
        return parts[0], parts[0]
    halves = dict(part.split("=", 1) for part in parts if part.count("=") == 1)
    if len(halves) == len(parts) == 2 and set(halves) == {"p", "q"}:
        if set(halves.values()) <= set(AGGREGATIONS):
            return halves["p"], halves["q"]
    raise UsageError(
        f"--aggregation {text!r} is not sum, gcn or p=…,q=…",
        "e.g. --aggregation gcn or --aggregation p=gcn,q=sum",
    )


def check_phdgn_options(aggregation: str, readout: str) -> None:
    """The PH-DGN options' usage errors (checked before any work)."""
    parse_aggregation(aggregation)
    if readout not in READOUTS:
        raise UsageError(f"unknown --readout {readout!r}", f"use one of: {', '.join(READOUTS)}")


def phdgn_extras(aggregation: str, readout: str) -> dict:
    """The PH-DGN options that differ from :data:`PHDGN_DEFAULTS`, for a task's config."""
    given = {"aggregation": aggregation, "readout": readout}
    return {k: v for k, v in given.items() if v != PHDGN_DEFAULTS[k]}


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
        p_agg, q_agg = parse_aggregation(spec.aggregation)
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
            p_agg=p_agg,
            q_agg=q_agg,
            readout=spec.readout,
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

"""Node-to-node sensitivity at initialisation: does a signal survive ``hops`` edges?

The paper bounds ‖∂x_u(T)/∂x_v(0)‖ (Theorem 2.4) and argues PH-DGN keeps it large where
message passing lets it vanish. Measured here, per model and distance on the ``line``
topology at initialisation (float64, width d, depth L = distance, the copy task's two
input features): S = ‖∂h_target(L) / ∂x_source‖_F, h the state the readout sees,
x_source the source's input features; reported as the mean over seeds of log10 S (S = 0,
which the node-wise MLP gives exactly, is reported as −inf → null) and the least-squares
slope of mean log10 S against distance (``log10_slope``: decades lost per unit of
distance). This is the gradient signal the first step of training gets; it is not a
measure of what a trained model can do (``transfer`` measures that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from iclr25.core.ph_dgn.graphs import topology
from iclr25.core.ph_dgn.models import MODELS, ModelSpec, build, check_models, graph_aggregations
from iclr25.errors import UsageError
from iclr25.parallel import derive_seed


@dataclass(frozen=True)
class SensitivityConfig:
    distances: tuple[int, ...] = (3, 5, 10, 20, 50)
    models: tuple[str, ...] = MODELS
    width: int = 16
    eps: float = 0.2
    seeds: int = 3

    def __post_init__(self) -> None:
        check_models(list(self.models))
        if not self.distances or min(self.distances) < 2:
            raise UsageError(f"distances {self.distances}", "pass --distances of at least 2")
        if self.seeds < 1 or self.width < 1:
            raise UsageError("--seeds and --width must be at least 1", "e.g. --seeds 3")


def source_sensitivity(model, distance: int, topology_name: str = "line") -> float:
    """‖∂h_target / ∂x_source‖_F of ``model`` on one ``topology_name`` graph.

    Inputs are zero except the copy task's marker channel (+1 source, −1 target), as at
    initialisation; a model with one input channel (the official variant) gets zeros.
    """
    edges, n, source, target = topology(topology_name, distance)
    aggs = graph_aggregations(edges, n, torch.float64)
    in_dim = model.encoder.in_features
    x = torch.zeros(n, in_dim, dtype=torch.float64)
    if in_dim >= 2:
        x[source, 1], x[target, 1] = 1.0, -1.0

    def target_state(x_source: torch.Tensor) -> torch.Tensor:
        full = torch.cat([x[:source], x_source[None], x[source + 1 :]], 0)  # (n, 2)
        return model.hidden(full, aggs)[target]  # (d,)

    jac = torch.autograd.functional.jacobian(target_state, x[source].clone())  # (d, 2)
    return jac.norm().item()


def run_sensitivity(cfg: SensitivityConfig, run_seed: int, on_progress=None) -> dict:
    table: dict[str, dict[str, float | None]] = {}
    for name in cfg.models:
        table[name] = {}
        for distance in cfg.distances:
            logs = []
            for s in range(cfg.seeds):
                torch.manual_seed(derive_seed(run_seed, "sensitivity", name, distance, s) % 2**62)
                model = build(ModelSpec(name, 2, 1, cfg.width, distance, cfg.eps)).double()
                value = source_sensitivity(model, distance)
                logs.append(math.log10(value) if value > 0 else -math.inf)
                if on_progress:
                    on_progress(1)
            mean = sum(logs) / len(logs)
            table[name][str(distance)] = mean if math.isfinite(mean) else None
    slopes = {name: _slope(cfg.distances, table[name]) for name in cfg.models}
    return {
        "log10_sensitivity": table,
        "log10_slope": slopes,
        "distances": list(cfg.distances),
        "seeds": cfg.seeds,
        "trained": False,
        "definition": "mean over seeds of log10 ‖∂h_target(L)/∂x_source‖_F at initialisation, "
        "line topology, L = distance; null = exactly 0",
    }


def _slope(distances, row: dict) -> float | None:
    pts = [(d, row[str(d)]) for d in distances if row[str(d)] is not None]
    if len(pts) < 2:
        return None
    mx = sum(d for d, _ in pts) / len(pts)
    my = sum(v for _, v in pts) / len(pts)
    den = sum((d - mx) ** 2 for d, _ in pts)
    return sum((d - mx) * (v - my) for d, v in pts) / den if den else None


def run_saved_sensitivity(loaded: list[tuple[dict, torch.nn.Module]], on_progress=None) -> dict:
    """The same measure for trained models (``transfer --save-models``), at their distance.

    ``loaded``: (metadata, module) pairs from :func:`.saved.read`; each model is measured
    on its own training topology and distance, in float64; the table is the mean over the
    saved seeds of log10 S per model and distance.
    """
    logs: dict[str, dict[int, list[float]]] = {}
    topologies = sorted({meta["topology"] for meta, _ in loaded})
    for meta, model in loaded:
        value = source_sensitivity(model.double(), meta["distance"], meta["topology"])
        logs.setdefault(meta["model"], {}).setdefault(meta["distance"], []).append(
            math.log10(value) if value > 0 else -math.inf
        )
        if on_progress:
            on_progress(1)
    distances = sorted({d for row in logs.values() for d in row})
    table: dict[str, dict[str, float | None]] = {}
    for name, row in logs.items():
        table[name] = {}
        for d in distances:
            values = row.get(d)
            mean = sum(values) / len(values) if values else math.nan
            table[name][str(d)] = mean if math.isfinite(mean) else None
    return {
        "log10_sensitivity": table,
        "log10_slope": {name: _slope(distances, table[name]) for name in table},
        "distances": distances,
        "seeds": max(len(v) for row in logs.values() for v in row.values()),
        "trained": True,
        "topologies": topologies,
        "definition": "mean over saved seeds of log10 ‖∂h_target(L)/∂x_source‖_F of the "
        "trained models (transfer --save-models), on their training topology and distance; "
        "null = exactly 0 or not saved",
    }

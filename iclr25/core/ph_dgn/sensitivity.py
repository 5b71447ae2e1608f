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


def source_sensitivity(model, distance: int) -> float:
    """‖∂h_target / ∂x_source‖_F of ``model`` on a line of ``distance`` nodes."""
    edges, n, source, target = topology("line", distance)
    aggs = graph_aggregations(edges, n, torch.float64)
    x = torch.zeros(n, 2, dtype=torch.float64)
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

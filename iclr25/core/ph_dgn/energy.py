"""Does the PH-DGN_C step conserve its Hamiltonian? (the paper's §2 claim, measured).

At initialisation (random weights, random state x = (p, q) ~ N(0, 1), float64) the step
map is iterated K times with symplectic Euler (the model's step) and with explicit Euler
x ← x + ε J ∇H(x) (the non-symplectic comparison). Measured:
  rel_energy_error       |H_k − H_0| / |H_0| at k = K/100, K/10, K
  drift_ratio_symplectic max_k≤K error / max_k≤K/10 error (≈ 1: bounded, no drift)
  growth_ratio_explicit  error at K / error at K/100 (≫ 1: drift)
  symplecticity_residual max |JᵀΩJ − Ω| of one step's Jacobian J (autograd), (q, p) order
  log_abs_det            log |det J| (0 for a volume-preserving map)
``conserved`` iff drift ≤ 1.5, growth ≥ 10, residual ≤ 1e-10 and |log det| ≤ 1e-10 (fixed
in advance, issue 28). PH-DGN with D = ``param+`` (D ⪰ 0), α = 1 and β = 0 must dissipate:
``energy_nonincreasing`` iff H_K < H_0 and no H_k exceeds H_0 by more than the
conservative run's own oscillation (a discrete scheme cannot be monotone step by step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from iclr25.core.ph_dgn.graphs import aggregation
from iclr25.core.ph_dgn.phdgn import PHDGN, PHDGNConfig, explicit_euler_step
from iclr25.errors import UsageError

DRIFT_MAX, GROWTH_MIN, RESIDUAL_MAX = 1.5, 10.0, 1e-10  # the pass conditions


@dataclass(frozen=True)
class EnergyConfig:
    edge_index: torch.Tensor  # (2, E)
    n_nodes: int
    graph: str  # a label for the report, e.g. "ring, distance 6"
    steps: int = 1000  # K
    eps: float = 0.1  # ε
    width: int = 4  # d
    aggregation: str = "sum"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 10:
            raise UsageError(f"--steps {self.steps} is below 10", "pass --steps ≥ 10 (e.g. 1000)")
        if not self.eps > 0 or not math.isfinite(self.eps):
            raise UsageError(f"--eps {self.eps} must be a positive number", "e.g. --eps 0.1")
        if self.width < 1 or self.n_nodes < 1:
            raise UsageError("the graph and --width must be non-empty", "give ≥ 1 node, width ≥ 1")


def _model(cfg: EnergyConfig, **port) -> PHDGN:
    torch.manual_seed(cfg.seed)
    pcfg = PHDGNConfig(1, 1, cfg.width, 1, cfg.eps, cfg.aggregation, cfg.aggregation, **port)
    return PHDGN(pcfg).double()


def _trajectory(step, energy, p, q, steps: int) -> list[float]:
    out = [energy(p, q).item()]
    with torch.no_grad():
        for _ in range(steps):
            p, q = step(p, q)
            h = energy(p, q).item()
            out.append(h if math.isfinite(h) else math.inf)
            if not math.isfinite(h):
                break
    return out + [math.inf] * (steps + 1 - len(out))


def _step_jacobian(model: PHDGN, aggs, p, q, explicit: bool = False) -> torch.Tensor:
    n, d = p.shape

    def f(x):  # x (2·n·d,) in (q, p) order
        qq, pp = x[: n * d].view(n, d), x[n * d :].view(n, d)
        if explicit:
            p2, q2 = explicit_euler_step(model, pp, qq, aggs)
        else:
            p2, q2 = model.step(pp, qq, aggs, 0.0)
        return torch.cat([q2.reshape(-1), p2.reshape(-1)])

    return torch.autograd.functional.jacobian(f, torch.cat([q.reshape(-1), p.reshape(-1)]))


def _symplectic_defect(jac: torch.Tensor) -> tuple[float, float]:
    m = jac.shape[0] // 2
    eye, zero = torch.eye(m, dtype=jac.dtype), torch.zeros(m, m, dtype=jac.dtype)
    om = torch.cat([torch.cat([zero, eye], 1), torch.cat([-eye, zero], 1)], 0)  # Ω (2m, 2m)
    residual = (jac.T @ om @ jac - om).abs().max().item()
    return residual, torch.linalg.slogdet(jac)[1].item()


def _rel(hs: list[float], k: int) -> float | None:
    err = abs(hs[k] - hs[0]) / abs(hs[0])
    return err if math.isfinite(err) else None


def run_energy(cfg: EnergyConfig) -> dict:
    agg = aggregation(cfg.edge_index, cfg.n_nodes, cfg.aggregation, torch.float64)
    aggs = (agg, agg)
    model = _model(cfg)
    g = torch.Generator().manual_seed(cfg.seed)
    p = torch.randn(cfg.n_nodes, cfg.width, dtype=torch.float64, generator=g)  # (n, d)
    q = torch.randn(cfg.n_nodes, cfg.width, dtype=torch.float64, generator=g)
    k = cfg.steps
    checkpoints = [k // 100, k // 10, k] if k >= 100 else [k // 10, k]
    with torch.no_grad():
        h_sym = _trajectory(
            lambda a, b: model.step(a, b, aggs, 0.0), energy_fn(model, aggs), p, q, k
        )
        h_exp = _trajectory(
            lambda a, b: explicit_euler_step(model, a, b, aggs), energy_fn(model, aggs), p, q, k
        )
    return _energy_results(cfg, model, aggs, p, q, h_sym, h_exp, checkpoints)


def energy_fn(model: PHDGN, aggs):
    return lambda p, q: model.energy(p, q, aggs)


def _energy_results(cfg, model, aggs, p, q, h_sym, h_exp, checkpoints) -> dict:
    k = cfg.steps
    err_sym = [abs(h - h_sym[0]) / abs(h_sym[0]) for h in h_sym]
    drift = max(err_sym[1:]) / max(max(err_sym[1 : k // 10 + 1]), 1e-300)
    late, early = _rel(h_exp, k), _rel(h_exp, max(1, k // 100))
    growth = None if late is None else late / max(early or 1e-300, 1e-300)
    residual, log_det = _symplectic_defect(_step_jacobian(model, aggs, p, q))
    exp_residual, exp_log_det = _symplectic_defect(_step_jacobian(model, aggs, p, q, True))
    conserved = (
        drift <= DRIFT_MAX
        and (growth is None or growth >= GROWTH_MIN)
        and residual <= RESIDUAL_MAX
        and abs(log_det) <= RESIDUAL_MAX
    )
    return {
        "graph": cfg.graph,
        "n_nodes": cfg.n_nodes,
        "n_edges": int(cfg.edge_index.shape[1]),
        "steps": k,
        "eps": cfg.eps,
        "width": cfg.width,
        "rel_energy_error": {
            "symplectic": {str(c): _rel(h_sym, c) for c in checkpoints},
            "explicit": {str(c): _rel(h_exp, c) for c in checkpoints},
        },
        "drift_ratio_symplectic": drift,
        "growth_ratio_explicit": growth,
        "explicit_diverged": growth is None,
        "symplecticity_residual": residual,
        "log_abs_det": log_det,
        "explicit_symplecticity_residual": exp_residual,
        "explicit_log_abs_det": exp_log_det,
        "conserved": conserved,
        "pass_conditions": {
            "drift_ratio_symplectic_max": DRIFT_MAX,
            "growth_ratio_explicit_min": GROWTH_MIN,
            "residual_max": RESIDUAL_MAX,
        },
        **_dissipation(cfg, p, q, max(err_sym) * abs(h_sym[0])),
    }


def _dissipation(cfg: EnergyConfig, p, q, tolerance: float) -> dict:
    """PH-DGN, D = param+ (D ⪰ 0), α = 1, β = 0: H along the damped trajectory."""
    model = _model(cfg, alpha=1.0, dampening="param+")
    agg = aggregation(cfg.edge_index, cfg.n_nodes, cfg.aggregation, torch.float64)
    aggs = (agg, agg)
    with torch.no_grad():
        hs = _trajectory(
            lambda a, b: model.step(a, b, aggs, 0.0), energy_fn(model, aggs), p, q, cfg.steps
        )
    finite = all(math.isfinite(h) for h in hs)
    ok = finite and hs[-1] < hs[0] and max(hs) <= hs[0] + tolerance
    return {
        "damped_rel_energy_change": (hs[-1] - hs[0]) / abs(hs[0]) if finite else None,
        "damped_max_rise": max(h - hs[0] for h in hs) if finite else None,
        "energy_nonincreasing": ok,
    }

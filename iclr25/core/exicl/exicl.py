"""The ExICL exploration loop (the paper's Algorithm 1, our reading of it).

K constraints are learned one after another. For constraint k (fresh φ_ω, λ_k = λ_0):

1. **Sample** (Eq. 9–10): ``samples`` guided trajectories τ̂ ~ p̃ ∝ p_θ·exp(r − λ_k c_φ)
   between the start and goal of demonstrations drawn at random (:mod:`.sampler`); at
   reverse step i the cost uses φ at its level for τ^i, (i + 1)/T (the paper's
   noise-conditioned φ; :func:`.feasibility.level_of`).
2. **Update φ** (Eq. 11–13): ``net_steps`` Adam steps on
   L = L_NR(D_E, τ̂) + δ_s·E_x[1 − φ(x)] + δ_d·InfoNCE(φ; Z),
   sparsity over ``probe_points`` states uniform on the map, InfoNCE over as many states
   uniform on the relevant region (where masks are compared), Z the accepted constraints
   (:mod:`.feasibility`: the InfoNCE acts on whole constraints, not per state).
3. **Update λ** by projected dual ascent, capped (:func:`dual_step`):
   λ_k ← min(λ_max, max(0, λ_k + η_λ (E_τ̂[c̄_φ(τ̂)] − ε))), c̄ the cost per point (states and
   move midpoints) at the clean level, ε = E_{D_E}[c̄_φ(τ)] (the expert's cost). The
   paper's Algorithm 1 writes "minimise λ·E[c − ε]", which read literally drives λ to 0
   when the samples cost more than ε; we use the dual-ascent sign (paper note, item 4).
   Why per point and capped (ours): with a hard constraint the expert's cost is ≈ 0 and
   every sample that touches a state with φ < 1 costs more, so the ascent never stops;
   on summed costs λ reached 30–480 within 6–20 rounds, and at such λ the sampler avoided
   states with φ ≈ 0.9 — states the mask calls *allowed* — so neither the ICL negatives
   nor the GDV ever proposed the shortcuts through them.

After ``rounds`` rounds the candidate's mask is {c : φ(c, 0) < 0.5} minus the cells the
demonstrations need (visited cells and the corners of their diagonal moves): ICL assumes
the experts feasible, so no constraint may forbid what they did (our rule; without it a few
expert cells next to a blocked shortcut fell below 0.5 and made the candidate exactly
infeasible for a reason the ICL premise already excludes). **Acceptance** (the
paper gives no rule; ours): the candidate enters Z when the GDV (:mod:`.gdv`) finds **its
mask** feasible: guided samples under the mask's permissibility
(:class:`.feasibility.MaskPermissibility`, λ = ``gdv_lambda``) — the same test ``exicl
calibrate`` measures, so its precision and recall describe this rule. (The first version
sampled under the learned soft φ with the learned λ, which at large λ avoided allowed
cells and missed the shortcuts through them: the GDV accepted exactly infeasible masks.)
Rejected candidates are still reported. With δ_d = 0 (the control) Z plays no role and
the K constraints differ only by their random initialisation, the paper's Fig. 4
"random initialisation" alternative.

Budget per constraint: ``rounds`` × ``samples`` guided samples and ``rounds`` ×
``net_steps`` φ steps, the same for every δ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.exicl import feasibility as F
from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.gdv import gdv_verdicts
from iclr25.core.exicl.prior import Prior, to_unit
from iclr25.core.exicl.sampler import Guidance, sample
from iclr25.core.exicl.verifier import most_restrictive_mask
from iclr25.errors import UsageError


@dataclass(frozen=True)
class ExiclConfig:
    k: int = 5  # K, constraints to learn
    diversity: float = 1.0  # δ_d, weight of the InfoNCE term
    sparsity: float = 0.1  # δ_s, weight of E[1 − φ]
    rounds: int = 20  # exploration rounds per constraint
    samples: int = 32  # guided samples per round
    net_steps: int = 20  # φ optimiser steps per round
    hidden: int = 64  # φ MLP width
    lr: float = 3e-3  # φ Adam step
    lambda_init: float = 1.0  # λ_0
    lambda_lr: float = 0.05  # η_λ, per unit of the per-point cost
    lambda_max: float = 10.0  # λ's cap (module docstring)
    gdv_lambda: float = 1.0  # λ of the GDV's guided sampling under a decoded mask
    temperature: float = 0.1  # InfoNCE τ
    probe_points: int = 256  # uniform states per φ step for the sparsity / InfoNCE terms
    guidance_scale: float = 0.2  # α of the guided reverse step
    gdv_samples: int = 4  # guided samples per demonstration for the GDV verdict
    tolerance: float = 0.10
    cell_table: bool = True  # φ's per-cell logit table (module docstring of .feasibility)
    table_lr: float = 0.1  # Adam step of the table (logits move ~O(1) per few rounds)

    def validate(self) -> None:
        checks = (
            (self.k >= 1, f"--k {self.k}", "use --k ≥ 1"),
            (self.diversity >= 0, f"--diversity {self.diversity}", "use a weight ≥ 0"),
            (self.sparsity >= 0, f"--sparsity {self.sparsity}", "use a weight ≥ 0"),
            (self.rounds >= 1, f"--rounds {self.rounds}", "use --rounds ≥ 1"),
            (self.samples >= 1, f"--samples {self.samples}", "use --samples ≥ 1"),
            (self.tolerance >= 0, f"--tolerance {self.tolerance}", "use a tolerance ≥ 0"),
        )
        for ok, what, fix in checks:
            if not ok:
                raise UsageError(f"{what} is out of range", fix)


@dataclass
class Candidate:
    """One learned constraint."""

    mask: np.ndarray  # (H, W) bool, True = infeasible
    phi: np.ndarray  # (H, W) φ(c, 0)
    lam: float  # final λ
    gdv_feasible: bool
    witnesses: int
    accepted: bool


def _expert_unit(demos: Demos, prior: Prior):
    import torch

    traj = demos.padded(prior.config.horizon)  # (N, H, 2)
    unit = to_unit(traj, prior.width_cells, prior.height_cells)
    return torch.as_tensor(unit, dtype=torch.float32)


def _probe(n: int, generator):
    import torch

    return torch.rand((n, 2), generator=generator) * 2.0 - 1.0  # (P, 2) unit coordinates


def _probe_cells(cells_unit, half_cell, n: int, generator):
    """(n, 2) unit coordinates uniform over the given cells (centres (C, 2), ± half a cell)."""
    import torch

    pick = torch.randint(0, len(cells_unit), (n,), generator=generator)
    jitter = (torch.rand((n, 2), generator=generator) - 0.5) * 2.0 * half_cell
    return cells_unit[pick] + jitter


def _phi_at(net, points, level: float = 0.0):
    import torch

    return torch.sigmoid(net(points[None], level))[0]  # (P,)


def _update_phi(net, opt, expert_u, generated_u, prior, accepted, config, generator,
                region=None):  # fmt: skip
    """``net_steps`` steps of L_NR + δ_s·sparsity + δ_d·InfoNCE; returns the last loss.
    Sparsity over states uniform on the map, InfoNCE over states uniform on the relevant
    region ``region`` = (cell centres (C, 2), half a cell (2,)) in unit coordinates."""
    import torch

    loss = torch.zeros(())
    for _ in range(config.net_steps):
        pts = _probe(config.probe_points, generator)
        phi = _phi_at(net, pts)
        loss = F.noise_robust_icl_loss(net, expert_u, generated_u, prior.ddpm, generator)
        loss = loss + config.sparsity * F.sparsity_loss(phi)
        if config.diversity > 0 and accepted:
            near = pts if region is None else _probe_cells(*region, config.probe_points, generator)
            with torch.no_grad():
                others = torch.stack([_phi_at(z, near) for z in accepted])  # (A, P)
            info = F.info_nce_loss(_phi_at(net, near), others, config.temperature)
            loss = loss + config.diversity * info
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


def _mean_cost(net, x_u) -> float:
    """E_τ[c_φ(τ, 0)] per point (the 2H − 1 states and move midpoints of c_φ)."""
    import torch

    with torch.no_grad():
        return float(F.trajectory_cost(net, x_u, 0.0, 1).mean()) / (2 * x_u.shape[1] - 1)


def dual_step(lam: float, generated_cost: float, expert_cost: float, config: ExiclConfig) -> float:
    """λ ← min(λ_max, max(0, λ + η_λ (E c_φ(τ̂) − ε))), costs per point, ε = the expert's."""
    step = lam + config.lambda_lr * (generated_cost - expert_cost)
    return min(config.lambda_max, max(0.0, step))


def _region_cells(spec, demos):
    """The relevant region's cell centres (C, 2) and half a cell (2,), unit coordinates."""
    import torch

    from iclr25.core.exicl.verifier import relevant_region

    ys, xs = np.nonzero(relevant_region(spec, demos))
    xy = np.stack([xs, ys], 1).astype(np.float64)
    centres = torch.as_tensor(to_unit(xy, spec.width, spec.height), dtype=torch.float32)
    half = torch.tensor([1.0 / (spec.width - 1), 1.0 / (spec.height - 1)])
    return centres, half


def learn_constraint(spec, demos: Demos, prior: Prior, accepted: list, config: ExiclConfig,
                     seed: int, on_round=None) -> tuple[object, float]:  # fmt: skip
    """Steps 1–3 for one constraint; returns (φ network, λ)."""
    import torch

    g = torch.Generator().manual_seed(seed % 2**63)
    rng = np.random.default_rng(seed)
    cells = (spec.width, spec.height) if config.cell_table else None
    net = F.make_feasibility_net(1, config.hidden, seed, cells=cells)
    mlp = [p for name, p in net.named_parameters() if name != "table"]
    groups = [{"params": mlp, "lr": config.lr}]
    if net.table is not None:
        groups.append({"params": [net.table], "lr": config.table_lr})
    opt = torch.optim.Adam(groups)
    expert_u = _expert_unit(demos, prior)
    guidance = Guidance(scale=config.guidance_scale)
    lam = config.lambda_init
    region = _region_cells(spec, demos) if config.diversity > 0 and accepted else None
    for _ in range(config.rounds):
        pick = rng.integers(0, len(demos), config.samples)
        cost = _cost_fn(net, 1, prior.ddpm.steps)
        traj = sample(prior, demos.starts[pick], demos.goals[pick], int(rng.integers(2**62)),
                      guidance, cost, np.full(config.samples, lam))  # fmt: skip
        gen_u = torch.as_tensor(to_unit(traj, prior.width_cells, prior.height_cells),
                                dtype=torch.float32)  # fmt: skip
        _update_phi(net, opt, expert_u, gen_u, prior, accepted, config, g, region)
        lam = dual_step(lam, _mean_cost(net, gen_u), _mean_cost(net, expert_u), config)
        if on_round is not None:
            on_round(1)
    return net, lam


def _cost_fn(net, members: int = 1, steps: int | None = None):
    """c_φ(τ^i, i) for the sampler: φ at its level (i + 1)/T (:func:`.feasibility.level_of`),
    or at the clean level 0 for every i when ``steps`` is None (a level-free φ)."""

    def cost(x, i):
        level = 0.0 if steps is None else F.level_of(i, steps)
        return F.trajectory_cost(net, x, level, members)

    return cost


def gdv_check(spec, demos: Demos, prior: Prior, phi_fn, lams: np.ndarray, masks: np.ndarray,
              config: ExiclConfig, seed: int, members: int):  # fmt: skip
    """The GDV verdict of ``members`` constraints at once: one batched guided sampling of
    ``gdv_samples`` per demonstration per constraint (rows k·b … (k+1)·b − 1)."""
    from iclr25.core.exicl.verifier import demo_lengths

    n, s = len(demos), config.gdv_samples
    starts = np.tile(np.repeat(demos.starts, s, axis=0), (members, 1))  # (K·N·S, 2)
    goals = np.tile(np.repeat(demos.goals, s, axis=0), (members, 1))
    lam = np.repeat(np.asarray(lams, float), n * s)
    traj = sample(prior, starts, goals, seed, Guidance(scale=config.guidance_scale),
                  _cost_fn(phi_fn, members), lam)  # fmt: skip
    traj = traj.reshape(members, n, s, *traj.shape[1:])  # (K, N, S, H, 2)
    return gdv_verdicts(spec, demos, traj, masks, demo_lengths(spec, demos), config.tolerance)


def explore(spec, demos: Demos, prior: Prior, config: ExiclConfig, seed: int,
            on_round=None) -> list[Candidate]:  # fmt: skip
    """Learn ``config.k`` constraints (module docstring)."""
    config.validate()
    accepted: list = []
    out: list[Candidate] = []
    for k in range(config.k):
        net, lam = learn_constraint(spec, demos, prior, accepted, config, seed + 7919 * k, on_round)
        masks, phi = F.masks_of(net, spec.width, spec.height)
        masks &= most_restrictive_mask(spec, demos)[None]  # never a cell the experts need
        v = gdv_check(spec, demos, prior, F.MaskPermissibility(masks),
                      np.array([config.gdv_lambda]), masks, config, seed + k, 1)  # fmt: skip
        ok = bool(v.feasible[0])
        if ok:
            accepted.append(net)
        out.append(Candidate(masks[0], phi[0], lam, ok, int(v.witnesses[0]), ok))
    return out

"""PH-DGN_C and PH-DGN (Heilig, Gravina, Trenta, Gallicchio, Bacciu, ICLR 2025, §2).

Symbols (code name -> paper):
  p, q          -> momentum p and position q of every node, each (n, d); x_u = (p_u, q_u)
  w_p, v_p, b_p -> W, V, b of the p half (the official code's W, V are block-diagonal
                   between p and q, so H(p, q) = H_p(p) + H_q(q) is separable)
  agg           -> Φ: the neighbourhood sum Φ_u(x) = Σ_{v∈N(u)} V x_v (A @ x V'), `sum`
                   or `gcn`-normalised, chosen per half
  hamiltonian   -> H(x) = Σ_u 1ᵀ σ̃(W x_u + Φ_u(x) + b), σ̃ = log cosh (σ = tanh)
  grad_h        -> ∇_x H = σ(Z) W + Aᵀ σ(Z) V (row-vector form, Z = x Wᵀ + A x Vᵀ + b):
                   the second sum runs over *out*-neighbours, through the transposed
                   aggregation. The official code reuses the forward edge list, which is
                   exact only on undirected graphs; here it is exact on directed ones.
  eps, steps    -> ε = T / L and L; weights are shared over the L steps
  alpha, beta   -> α, β: scale of dampening D(q) and forcing F(q, t)

One step (symplectic Euler, then the port terms; α = β = 0 gives PH-DGN_C):
  1. q_{ℓ+1} = q_ℓ + ε ∇_p H(p_ℓ)
  2. p_{ℓ+1} = p_ℓ − ε ∇_q H(q_{ℓ+1})
  3. p_{ℓ+1} ← p_{ℓ+1} − ε α D(q_{ℓ+1}) ⊙ ∇_p H(p_ℓ) + ε β F(q_{ℓ+1}, t = ε ℓ)
Each half-step is a shear, so the step map has Jacobian determinant 1 and is symplectic.

Dampening D built here: ``param`` (a learned vector, Kaiming-normal initialised, may be
negative), ``param+`` (its ReLU), ``mlp`` (official ``MLP4ReLU``: four linear layers on q,
ReLU after each, so D ⪰ 0) and ``dgn`` (official ``DGNReLU``: ReLU(A q W_D), summed over
the neighbourhood). Forcing F: ``dgn-tanh`` = tanh(A [q, t] W_F) and ``mlp-sin``
(official ``MLP4Sin``: four linear layers on [q, t], sin after the first three).
Choices where the paper is silent: the encoder is one linear map to 2d features split
into (p, q) (the official ``double_dim = False``); the readout is linear on p, q or both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from iclr25.core.ph_dgn.graphs import Aggregation
from iclr25.core.ph_dgn.hamiltonian_grad import hamiltonian_grad, symplectic_step
from iclr25.errors import UsageError

DAMPENING = ("none", "param", "param+", "mlp", "dgn")
FORCING = ("none", "dgn-tanh", "mlp-sin")
READOUTS = ("p", "q", "pq")


def log_cosh(z: torch.Tensor) -> torch.Tensor:
    """σ̃(z) = log cosh z, computed without overflow: |z| + log1p(e^{−2|z|}) − log 2."""
    a = z.abs()
    return a + torch.log1p(torch.exp(-2.0 * a)) - math.log(2.0)


class HamiltonianHalf(nn.Module):
    """H_s(s) = Σ_u 1ᵀ log cosh(W s_u + Σ_{v∈N(u)} V s_v + b) for one half s ∈ {p, q}."""

    def __init__(self, d: int):
        super().__init__()
        self.w = nn.Linear(d, d, bias=True)  # W, b
        self.v = nn.Linear(d, d, bias=False)  # V

    def pre_activation(self, s: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        return self.w(s) + agg(self.v(s))  # (n, d): Z = s Wᵀ + b + A s Vᵀ

    def energy(self, s: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        return log_cosh(self.pre_activation(s, agg)).sum()

    def grad(self, s: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        """∇_s H_s = σ(Z) W + Aᵀ σ(Z) V  (n, d); the message-passing form of the gradient,
        one autograd node with a written-out backward (:mod:`.hamiltonian_grad`)."""
        return hamiltonian_grad(s, self.w.weight, self.w.bias, self.v.weight, agg)

    def grad_reference(self, s: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        """The same ∇_s H_s through plain autograd ops (tests compare the two)."""
        sig = torch.tanh(self.pre_activation(s, agg))  # (n, d)
        return sig @ self.w.weight + agg.transposed()(sig @ self.v.weight)


@dataclass(frozen=True)
class PHDGNConfig:
    in_dim: int
    out_dim: int
    width: int = 16  # d: size of p and of q (state 2d per node)
    steps: int = 10  # L; ε = T / L
    eps: float = 0.2  # ε (the official grid: 0.5 … 1e-4)
    p_agg: str = "sum"  # Φ for the p half: sum or gcn
    q_agg: str = "sum"
    readout: str = "pq"  # p, q or pq
    alpha: float = 0.0  # α: 0 = no dampening (PH-DGN_C)
    beta: float = 0.0  # β: 0 = no forcing
    dampening: str = "none"  # none, param, param+, mlp, dgn
    forcing: str = "none"  # none, dgn-tanh, mlp-sin

    def __post_init__(self) -> None:
        if self.eps <= 0:
            raise UsageError(f"ε = {self.eps} must be positive", "pass --eps > 0, e.g. 0.2")
        if self.steps < 1:
            raise UsageError(f"{self.steps} steps", "pass --steps ≥ 1")
        for name, value, allowed in (
            ("dampening", self.dampening, DAMPENING),
            ("forcing", self.forcing, FORCING),
            ("readout", self.readout, READOUTS),
        ):
            if value not in allowed:
                raise UsageError(f"unknown {name} {value!r}", f"use one of: {', '.join(allowed)}")


class PHDGN(nn.Module):
    """Encoder → L shared port-Hamiltonian steps → linear readout (node level)."""

    def __init__(self, cfg: PHDGNConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.width
        self.encoder = nn.Linear(cfg.in_dim, 2 * d)
        self.h_p, self.h_q = HamiltonianHalf(d), HamiltonianHalf(d)
        if cfg.dampening in ("param", "param+"):
            self.damp = nn.Parameter(torch.empty(d))
            nn.init.normal_(self.damp, std=math.sqrt(2.0 / d))  # Kaiming normal, fan-in d
        elif cfg.dampening == "mlp":
            self.damp_net = _four_layers(d, d, nn.ReLU, last=nn.ReLU())  # D(q) ⪰ 0
        elif cfg.dampening == "dgn":
            self.damp_lin = nn.Linear(d, d, bias=False)  # W_D
        if cfg.forcing == "dgn-tanh":
            self.force = nn.Linear(d + 1, d, bias=False)  # W_F on [q, t]
        elif cfg.forcing == "mlp-sin":
            self.force_net = _four_layers(d + 1, d, Sin)
        out_in = d * (2 if cfg.readout == "pq" else 1)
        self.readout = nn.Linear(out_in, cfg.out_dim)

    def dampening(self, q: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        """D(q): (d,) for param/param+, (n, d) for mlp/dgn (a diagonal per node)."""
        mode = self.cfg.dampening
        if mode == "mlp":
            return self.damp_net(q)
        if mode == "dgn":
            return torch.relu(agg(self.damp_lin(q)))  # (n, d)
        return torch.relu(self.damp) if mode == "param+" else self.damp

    def forcing(self, q: torch.Tensor, t: float, agg: Aggregation) -> torch.Tensor:
        """F(q, t)  (n, d)."""
        qt = torch.cat([q, torch.full((q.shape[0], 1), t, dtype=q.dtype)], 1)  # (n, d+1)
        if self.cfg.forcing == "mlp-sin":
            return self.force_net(qt)
        return torch.tanh(agg(self.force(qt)))

    def step(self, p, q, aggs: tuple[Aggregation, Aggregation], t: float):
        """One step (module docstring, steps 1–3); p, q (n, d)."""
        agg_p, agg_q = aggs
        eps, cfg = self.cfg.eps, self.cfg
        damped = bool(cfg.alpha) and cfg.dampening != "none"
        if not damped and not (cfg.beta and cfg.forcing != "none"):
            return symplectic_step(p, q, self.h_p, self.h_q, aggs, eps)  # steps 1–2, one node
        dh_dp = self.h_p.grad(p, agg_p)
        q = torch.add(q, dh_dp, alpha=eps)
        p = torch.add(p, self.h_q.grad(q, agg_q), alpha=-eps)
        if damped:
            p = p - eps * cfg.alpha * self.dampening(q, agg_q) * dh_dp
        if cfg.beta and cfg.forcing != "none":
            p = p + eps * cfg.beta * self.forcing(q, t, agg_q)
        return p, q

    def energy(self, p, q, aggs) -> torch.Tensor:
        return self.h_p.energy(p, aggs[0]) + self.h_q.energy(q, aggs[1])

    def encode(self, x: torch.Tensor):
        pq = self.encoder(x)  # (n, 2d)
        return pq[:, : self.cfg.width], pq[:, self.cfg.width :]

    def halves(self, aggs: dict[str, Aggregation]) -> tuple[Aggregation, Aggregation]:
        """(Φ for p, Φ for q) from the graph's aggregations keyed by mode."""
        return aggs[self.cfg.p_agg], aggs[self.cfg.q_agg]

    def hidden(self, x: torch.Tensor, aggs: dict[str, Aggregation]) -> torch.Tensor:
        """The final state the readout sees: p, q or [p, q]  (n, d or 2d)."""
        aggs = self.halves(aggs)
        p, q = self.encode(x)
        for ell in range(self.cfg.steps):
            p, q = self.step(p, q, aggs, self.cfg.eps * ell)
        return {"p": p, "q": q, "pq": torch.cat([p, q], 1)}[self.cfg.readout]

    def forward(self, x: torch.Tensor, aggs: dict[str, Aggregation]) -> torch.Tensor:
        return self.readout(self.hidden(x, aggs))  # (n, out_dim)

    @property
    def aggregations_per_step(self) -> int:
        """Sparse products per step: 2 per ∇H half (A and Aᵀ), +1 for each of dgn
        dampening and dgn-tanh forcing when active."""
        cfg = self.cfg
        return (
            4
            + int(bool(cfg.alpha) and cfg.dampening == "dgn")
            + int(bool(cfg.beta) and cfg.forcing == "dgn-tanh")
        )


class Sin(nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.sin(z)


def _four_layers(in_dim: int, out_dim: int, act, last: nn.Module | None = None) -> nn.Sequential:
    """Linear → act → Linear → act → Linear → act → Linear (→ ``last``): the official MLP4."""
    layers: list[nn.Module] = [nn.Linear(in_dim, out_dim)]
    for _ in range(3):
        layers += [act(), nn.Linear(out_dim, out_dim)]
    return nn.Sequential(*layers, *([last] if last is not None else []))


def explicit_euler_step(model: PHDGN, p, q, aggs):
    """x_{ℓ+1} = x_ℓ + ε J ∇H(x_ℓ): the non-symplectic comparison for the energy check."""
    eps = model.cfg.eps
    dh_dp, dh_dq = model.h_p.grad(p, aggs[0]), model.h_q.grad(q, aggs[1])
    return p - eps * dh_dq, q + eps * dh_dp

"""Alg. 4 of Chen et al. (ICLR 2025): a ((2d+1)^(B-1), δ)-list replicable batched algorithm
for linear bandits in R^d, finite action sets or the unit ball. Claimed regret
Õ(d² T^{1/2 + 2^-(B+1)}).

The paper's pseudocode was not available to us. Our design keeps the structure the list
size asks for — B-1 decisions, each with at most 2d+1 outcomes — by making every decision
a function of a *replicably rounded* estimate θ̃ (:func:`.linear_design.pigeonhole_round`).

Finite action set {x_a} (a k-armed bandit is the case x_a = e_a, d = k):
- Batch b < B plays the G-optimal design of the active set A_b (integer counts, arm-major
  blocks in index order) for t_b - t_{b-1} rounds, on the minimax batch grid of
  :func:`.list_batched.batch_ends`.
- Decision b: least squares θ̂ on all data so far, V = Σ_a n_a x_a x_a^T; per coordinate
  η_i = σ √(2 (V^-1)_ii ln(2d(B-1)/δ)); θ̃ = pigeonhole-rounded θ̂ (spacing s_i ∝ η_i);
  â = argmax_{a∈A_b} ⟨θ̃, x_a⟩ and ε_a = Σ_i (s_i/2) |x_âi - x_ai|, which bounds
  |⟨θ̃ - θ, x_â - x_a⟩|; A_{b+1} = {a ∈ A_b : ⟨θ̃, x_â - x_a⟩ ≤ ε_a}.
- Batch B plays the greedy arm argmax_{a∈A_B} ⟨θ̃_{B-1}, x_a⟩ (ties: lowest index).
Unit ball: batches b < B first explore e_1..e_d round-robin (the ball's G-optimal
design) for a geometrically growing share of a total of E = ⌈d^{3/2} σ √(T L)⌉ rounds
(at most T/2), then play the direction θ̃_{b-1}/|θ̃_{b-1}| for the rest of the batch;
batch B plays θ̃_{B-1}/|θ̃_{B-1}|. On the ball the curvature makes the regret of a
direction error e quadratic, |θ| e²/2, so exploration of order √T suffices.

List size (2d+1)^(B-1): on the good event (every |θ̂_i - θ_i| ≤ η_i at every decision,
probability ≥ 1 - δ by Gaussian tails and a union bound), θ̃ at decision b is a function
of (θ, A_b, j_b) with j_b ∈ {0..2d}; A_{b+1}, the next design, and the played directions
are functions of θ̃. So the trace is a function of (j_1, ..., j_{B-1}). The best arm
stays active: ⟨θ̃, x_â - x_a*⟩ ≤ ⟨θ̃ - θ, x_â - x_a*⟩ ≤ ε_a*, and a survivor a has
Δ_a ≤ 2ε_a + ε_a* = O(d · d η) (rounding ∝ d η in each of up to d coordinates), which is
where the extra powers of d come from. The T-exponent is that of the batch grid (see
:mod:`.list_batched`); ``sweep`` measures it.

Symbols: θ → ``theta``, θ̂ → ``theta_hat``, θ̃ → ``theta_tilde``, V → ``gram``,
j → ``choices``, ε_a → ``epsilon``, â → ``best``, A_b → ``active``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.linear_design import (
    design_counts,
    g_optimal_design,
    group_rows,
    pigeonhole_round,
)
from iclr25.core.bandit_replicable.list_batched import batch_ends
from iclr25.core.bandit_replicable.schedule import Blocks
from iclr25.core.bandit_replicable.traces import TraceHasher

RIDGE = 1e-9  # keeps V invertible when a batch leaves a direction unexplored


def list_bound(dim: int, batches: int) -> int:
    return (2 * dim + 1) ** (batches - 1)


def _log_term(dim: int, batches: int, delta: float) -> float:
    return float(np.log(2.0 * dim * max(batches - 1, 1) / delta))


# ---------------------------------------------------------------------------------------
# Finite action sets (the phase engine of .schedule)
# ---------------------------------------------------------------------------------------
@dataclass
class LinearState:
    features: np.ndarray  # (N, d) x_a
    ends: np.ndarray  # (B,) batch ends
    log_term: float
    sigma: float
    active: np.ndarray  # (runs, N) bool
    theta_tilde: np.ndarray  # (runs, d) the last rounded estimate
    choices: np.ndarray  # (runs, B-1) offset index j of each decision
    designs: dict  # active-mask bytes -> π (cache; designs are deterministic)


class LinearBatchedFinite:
    name = "linear-batched"

    def __init__(self, delta: float, batches: int):
        self.delta = float(delta)
        self.batches = int(batches)

    def init(self, env, horizon, runs, rng) -> LinearState:
        features = env.features if env.features is not None else np.eye(env.k)
        dim = features.shape[1]
        return LinearState(
            features=np.asarray(features, np.float64),
            ends=batch_ends(horizon, self.batches, dim),
            log_term=_log_term(dim, self.batches, self.delta),
            sigma=env.subgaussian,
            active=np.ones((runs, env.k), bool),
            theta_tilde=np.zeros((runs, dim)),
            choices=np.full((runs, self.batches - 1), -1, np.int64),
            designs={},
        )

    def _design(self, state: LinearState, mask: np.ndarray) -> np.ndarray:
        key = np.packbits(mask).tobytes()
        if key not in state.designs:
            pi = np.zeros(mask.size)
            pi[mask] = g_optimal_design(state.features[mask])
            state.designs[key] = pi
        return state.designs[key]

    def segment(self, state: LinearState, index: int) -> Blocks:
        runs, n_arms = state.active.shape
        start = state.ends[index - 1] if index else 0
        length = int(state.ends[index] - start) if index < state.ends.size else 0
        counts = np.zeros((runs, n_arms), np.int64)
        if index < self.batches - 1:
            masks, inverse = group_rows(state.active)
            for u, mask in enumerate(masks):
                counts[inverse == u] = design_counts(self._design(state, mask), length)
        elif length > 0:  # the last batch: the greedy arm of θ̃_{B-1}
            values = np.where(state.active, state.theta_tilde @ state.features.T, -np.inf)
            counts[np.arange(runs), np.argmax(values, axis=1)] = length
        return Blocks(counts)

    def decide(self, state: LinearState, index, sums, counts, completed) -> None:
        if index >= self.batches - 1:
            return
        theta_hat, eta = _least_squares(state.features, sums, counts, state.sigma, state.log_term)
        theta_tilde, choice, _, spacing = pigeonhole_round(theta_hat, eta)
        keep = _survivors(state.features, state.active, theta_tilde, spacing)
        done = completed[:, None]
        state.active = np.where(done, keep, state.active)
        state.theta_tilde = np.where(done, theta_tilde, state.theta_tilde)
        state.choices[:, index] = np.where(completed, choice, state.choices[:, index])


def _least_squares(features, sums, counts, sigma, log_term):
    """θ̂ (runs, d) and per-coordinate accuracies η (runs, d), grouped by design history."""
    runs, dim = sums.shape[0], features.shape[1]
    theta_hat = np.empty((runs, dim))
    eta = np.empty((runs, dim))
    histories, inverse = group_rows(counts)
    for u, history in enumerate(histories):
        rows = inverse == u
        gram = features.T @ (history[:, None] * features) + RIDGE * np.eye(dim)  # (d, d) V
        gram_inv = np.linalg.inv(gram)
        theta_hat[rows] = (sums[rows] @ features) @ gram_inv  # θ̂ = V^-1 Σ_a x_a S_a
        eta[rows] = sigma * np.sqrt(2.0 * np.diag(gram_inv) * log_term)
    return theta_hat, eta


def _survivors(features, active, theta_tilde, spacing) -> np.ndarray:
    """A_{b+1} = {a ∈ A_b : ⟨θ̃, x_â - x_a⟩ ≤ ε_a}, â the greedy arm of θ̃ and
    ε_a = Σ_i (s_i/2) |x_âi - x_ai| ≥ |⟨θ̃ - θ, x_â - x_a⟩|, for every execution."""
    values = np.where(active, theta_tilde @ features.T, -np.inf)  # (runs, N)
    best = np.argmax(values, axis=1)  # â (first maximum)
    epsilon = np.empty(values.shape)
    groups, inverse = group_rows(np.concatenate([best[:, None], spacing], axis=1))
    for u, row in enumerate(groups):  # one group per (â, design history): few of them
        half = row[1:] / 2.0  # (d,) s_i / 2
        epsilon[inverse == u] = np.abs(features[int(row[0])] - features) @ half
    return active & (values.max(axis=1, keepdims=True) - values <= epsilon)


# ---------------------------------------------------------------------------------------
# The unit ball (its own simulators: actions are directions, not arm indices)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BallPlan:
    ends: np.ndarray  # (B,) batch ends t_b
    explore: np.ndarray  # (B,) exploration rounds at the start of each batch (0 in the last)


def ball_plan(horizon: int, dim: int, batches: int, delta: float, sigma: float) -> BallPlan:
    log_term = _log_term(dim, batches, delta)
    total = int(min(horizon // 2, np.ceil(dim**1.5 * sigma * np.sqrt(horizon * log_term))))
    total = max(total, dim)
    cumulative = [int(np.ceil(total * 2.0 ** (b - (batches - 1)))) for b in range(1, batches)]
    cumulative = np.maximum.accumulate(np.maximum(cumulative, dim))
    explore = np.diff(np.concatenate([[0], cumulative, [cumulative[-1]]]))  # (B,)
    ends = [int(cumulative[0])]
    for b in range(2, batches):
        geometric = int(ends[0] * (horizon / ends[0]) ** ((b - 1) / (batches - 1)))
        ends.append(min(horizon, max(geometric, ends[-1] + int(explore[b - 1]))))
    ends.append(horizon)
    return BallPlan(np.asarray(ends, np.int64), explore.astype(np.int64))


@dataclass
class BallOutcome:
    regret: np.ndarray  # (runs,)
    keys: np.ndarray  # (runs, 2) uint64
    curve: np.ndarray  # (C,) summed regret at checkpoints
    choices: np.ndarray  # (runs, B-1)
    directions: np.ndarray  # (runs, B-1, d) the directions played after each decision


def simulate_ball(env, horizon, runs, rng, delta, batches, checkpoints=None, per_round=False):
    """Executions of the ball algorithm; ``per_round`` draws one reward per round."""
    dim, norm = env.dim, env.best_value
    plan = ball_plan(horizon, dim, batches, delta, env.sigma)
    log_term = _log_term(dim, batches, delta)
    sums = np.zeros((runs, dim))
    pulls = np.zeros(dim, np.int64)  # exploration pulls of e_i (identical in every run)
    regret = np.zeros(runs)
    direction = None  # (runs, d) the direction exploited in the current batch
    hasher = TraceHasher(runs, dim + 1)
    choices = np.full((runs, batches - 1), -1, np.int64)
    directions = np.zeros((runs, batches - 1, dim))
    tracker = _BallCurve(checkpoints, runs)
    start = 0
    for b in range(batches):
        n_explore = int(plan.explore[b])
        order = (pulls.sum() + np.arange(n_explore)) % dim  # coordinates explored, in order
        new = np.bincount(order, minlength=dim)
        tracker.explore(start, order, regret, norm - env.theta)
        regret += new @ (norm - env.theta)
        sums += _ball_rewards(env, rng, order, new, runs, per_round)
        pulls += new
        exploit = int(plan.ends[b] - start - n_explore)
        if exploit > 0:
            loss = norm - direction @ env.theta  # (runs,) regret per exploit round
            tracker.exploit(start + n_explore, exploit, regret, loss)
            regret += exploit * loss
        start = int(plan.ends[b])
        if b < batches - 1:
            theta_hat = sums / pulls  # orthogonal design: per-coordinate means
            eta = np.broadcast_to(env.sigma * np.sqrt(2.0 * log_term / pulls), theta_hat.shape)
            theta_tilde, choice, lattice, _ = pigeonhole_round(theta_hat, eta)
            choices[:, b] = choice
            # (lattice, j) ↔ θ̃ one-to-one; the played directions are functions of θ̃
            visible = np.concatenate([lattice, choice[:, None]], axis=1)  # (runs, d+1)
            hasher.fold(visible, np.full(runs, 1))
            direction = _unit_or_first(theta_tilde)
            directions[:, b] = direction
    return BallOutcome(regret, hasher.finish(), tracker.sums, choices, directions)


def _ball_rewards(env, rng, order, new, runs, per_round):
    mean = new * env.theta  # (d,)
    if not per_round:
        return mean[None, :] + env.sigma * np.sqrt(new)[None, :] * rng.standard_normal(
            (runs, new.size)
        )
    out = np.zeros((runs, new.size))
    for coordinate in order:  # one reward per round
        out[:, coordinate] += env.theta[coordinate] + env.sigma * rng.standard_normal(runs)
    return out


def _unit_or_first(theta_tilde: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(theta_tilde, axis=1, keepdims=True)
    first = np.zeros_like(theta_tilde)
    first[:, 0] = 1.0
    return np.where(norms > 0, theta_tilde / np.where(norms > 0, norms, 1.0), first)


class _BallCurve:
    def __init__(self, checkpoints, runs):
        self.t = np.zeros(0, np.int64) if checkpoints is None else np.asarray(checkpoints)
        self.sums = np.zeros(self.t.size)

    def explore(self, start, order, regret, losses):
        inside = (self.t > start) & (self.t <= start + order.size)
        for ci in np.flatnonzero(inside):
            part = losses[order[: self.t[ci] - start]].sum()
            self.sums[ci] += (regret + part).sum()

    def exploit(self, start, length, regret, loss):
        inside = (self.t > start) & (self.t <= start + length)
        for ci in np.flatnonzero(inside):
            self.sums[ci] += (regret + (self.t[ci] - start) * loss).sum()

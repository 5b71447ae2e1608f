"""Guided reverse sampling from p̃(τ) ∝ p_θ(τ)·exp(r(τ) − λ c_φ(τ)) (the paper's Eq. 9–10).

Per level i = T−1 … 0 (Diffuser's guided step, ``n_step_guided_p_sample``):

1. ε = ε_θ(τ^i, i); (μ_θ, Σ_i) = the DDPM posterior (:mod:`.ddpm`);
2. μ ← μ_θ + α Σ_i ∇_τ J(τ^i, i), J = w_r·r(τ) − λ·c_φ(τ, i), for i ≥ ``stop_level``;
3. τ^{i−1} = μ + √Σ_i z (z = 0 at i = 0);
4. inpainting: s_0 ← start, s_{H−1} ← goal.

r(τ) = −Σ_t ‖s_{t+1} − s_t‖ in cell units (smoothed: √(d² + 10⁻⁴)); c_φ(τ, i) =
−Σ_t log φ(s_t^i, i), supplied by the caller as ``cost_fn(τ_unit, i) -> (B,)`` with one
λ per trajectory, so one call samples for many constraints at once (batched over K: the
trajectories of constraint k are rows k·b … (k+1)·b − 1). exp(λε) in Eq. 10 is constant in
τ and drops out. With α = 0 the sampler is the unguided one, step for step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.exicl.prior import Prior, from_unit, to_unit


@dataclass(frozen=True)
class Guidance:
    scale: float = 0.2  # α
    reward_weight: float = 1.0  # w_r: weight of r(τ) = −length
    stop_level: int = 0  # no guidance below this level (Diffuser's t_stopgrad)


def path_length_unit(x, width: int, height: int):
    """(B,) smoothed length in cells of unit-coordinate trajectories (B, H, 2)."""
    d = from_unit(x[:, 1:], width, height) - from_unit(x[:, :-1], width, height)
    return (d.pow(2).sum(-1) + 1e-4).sqrt().sum(-1)


def objective(x, i: int, prior: Prior, guidance: Guidance, cost_fn, lam):
    """J(τ^i) (B,): w_r·r(τ) − λ c_φ(τ, i)."""
    j = -guidance.reward_weight * path_length_unit(x, prior.width_cells, prior.height_cells)
    if cost_fn is not None:
        j = j - lam * cost_fn(x, i)
    return j


def sample(prior: Prior, starts: np.ndarray, goals: np.ndarray, seed: int,
           guidance: Guidance | None = None, cost_fn=None, lam=None) -> np.ndarray:  # fmt: skip
    """(B, H, 2) trajectories in grid coordinates from (B, 2) starts and goals."""
    import torch

    g = torch.Generator().manual_seed(int(seed) % 2**63)
    w, h = prior.width_cells, prior.height_cells
    s_u = torch.as_tensor(to_unit(np.asarray(starts, float), w, h), dtype=torch.float32)
    g_u = torch.as_tensor(to_unit(np.asarray(goals, float), w, h), dtype=torch.float32)
    b, horizon = len(s_u), prior.config.horizon
    lam_t = None if lam is None else torch.as_tensor(lam, dtype=torch.float32).reshape(b)
    x = prior.condition(torch.randn((b, horizon, 2), generator=g), s_u, g_u)
    ddpm = prior.ddpm
    for i in reversed(range(ddpm.steps)):
        idx = torch.full((b,), i, dtype=torch.long)
        with torch.no_grad():
            eps = prior.model(x, idx)
        mean, var = ddpm.p_mean_variance(x, idx, eps)
        if guidance is not None and guidance.scale > 0 and i >= guidance.stop_level:
            mean = mean + guidance.scale * var * _grad(x, i, prior, guidance, cost_fn, lam_t)
        noise = torch.randn(x.shape, generator=g)
        x = mean if i == 0 else mean + var.sqrt() * noise
        x = prior.condition(x, s_u, g_u)
    return from_unit(x.detach(), w, h).numpy().astype(np.float64)


def _grad(x, i, prior, guidance, cost_fn, lam):
    import torch

    with torch.enable_grad():
        xg = x.detach().requires_grad_(True)
        j = objective(xg, i, prior, guidance, cost_fn, lam)
        (grad,) = torch.autograd.grad(j.sum(), xg)
    return grad


# ---------------------------------------------------------------------------------------
# Decoding samples onto the grid
# ---------------------------------------------------------------------------------------
def to_cells(traj: np.ndarray, width: int, height: int) -> np.ndarray:
    """Round (…, H, 2) grid coordinates to cells, clipped to the grid."""
    c = np.floor(np.asarray(traj) + 0.5).astype(np.int64)
    c[..., 0] = np.clip(c[..., 0], 0, width - 1)
    c[..., 1] = np.clip(c[..., 1], 0, height - 1)
    return c


def until_goal(cells: np.ndarray) -> np.ndarray:
    """A cell path (T, 2) cut at its first visit of its last cell (the inpainted goal).

    Trajectories shorter than the horizon are padded by staying at the goal (module
    docstring of :mod:`.prior`), so a sample's path ends where it first reaches the goal;
    what follows is padding, and the rounding jitter of a sample waiting there (a step
    off the goal cell and back) is not part of the path. Without the cut that jitter
    added moves: on the bundled ``wall`` prior the median guided-path ratio to the
    shortest path was 1.24 with it and 1.10 without."""
    cells = np.asarray(cells)
    first = int(np.flatnonzero((cells == cells[-1]).all(axis=-1))[0])
    return cells[: first + 1]


def decode_path(traj: np.ndarray, width: int, height: int) -> np.ndarray:
    """One sample (H, 2) in grid coordinates → the cell path it proposes: rounded,
    cut at the goal (:func:`until_goal`), jumps filled (:func:`fill_path`)."""
    return fill_path(until_goal(to_cells(traj, width, height)))


def legal_move_rate(spec, traj: np.ndarray) -> float:
    """Share of the moves between consecutive rounded states (stays included) that are
    legal on the grid with its known walls (one step, no wall, no corner cutting); for a
    point2d spec, of the continuous moves (:func:`.point2d.legal_move_rate_point`)."""
    from iclr25.core.exicl import grid
    from iclr25.core.exicl.spec import PointSpec

    if isinstance(spec, PointSpec):
        from iclr25.core.exicl.point2d import legal_move_rate_point

        return legal_move_rate_point(spec, traj)

    cells = to_cells(traj, spec.width, spec.height)
    bad = [grid.illegal_moves(spec, c, spec.walls) for c in cells]
    return float(1.0 - np.mean(np.concatenate(bad)))


def fill_path(cells: np.ndarray) -> np.ndarray:
    """A cell path (T, 2) with every jump longer than one step filled by single steps
    (diagonal first, then straight), and repeated cells dropped."""
    out = [cells[0]]
    for c in cells[1:]:
        cur = out[-1].copy()
        while (cur != c).any():
            cur = cur + np.sign(c - cur)
            out.append(cur.copy())
    return np.array(out)


TUBE = 0.5  # cells whose centre lies within this Chebyshev distance of a sample's point


def tube_path(spec, traj: np.ndarray, blocked: np.ndarray) -> np.ndarray | None:
    """The shortest legal cell path (T, 2) inside a sample's tube, or None if the tube holds
    none — how a continuous sample (H, 2) (grid coordinates) is read as a grid path.

    The tube: every cell whose centre is within ``TUBE`` (Chebyshev) of one of the sample's
    states or move midpoints up to its first visit of the goal cell (:func:`until_goal`),
    plus the start and goal cells; legal moves avoid ``blocked`` (H, W) and cut no corner.
    Why (our decoding rule): a sample running straight between two cell rows or columns
    (x ≈ 8.5) rounds to a zig-zag (8 → 9 → 8 …) whose length counts √2 per step, although
    the continuous path is straight; on the ``box`` prior's short trips that jitter alone
    made the median decoded path ≈ 1.24 × the shortest one. Inside the tube the decoded path
    never leaves the corridor the sample proposes, so it cannot find a route the sampler
    did not propose."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    from iclr25.core.exicl import grid

    w, h = spec.width, spec.height
    cells = to_cells(traj, w, h)
    first = int(np.flatnonzero((cells == cells[-1]).all(axis=-1))[0])
    pts = np.asarray(traj, float)[: first + 1]
    pts = np.concatenate([pts, 0.5 * (pts[1:] + pts[:-1])])  # (P, 2)
    ys, xs = np.mgrid[0:h, 0:w]
    near = (np.abs(xs.ravel()[None] - pts[:, :1]) <= TUBE) & (
        np.abs(ys.ravel()[None] - pts[:, 1:]) <= TUBE
    )  # (P, cells)
    tube = near.any(axis=0)
    a = int(grid.cell_index(spec, cells[0]))
    b = int(grid.cell_index(spec, cells[-1]))
    tube[[a, b]] = True
    free = tube & ~blocked.ravel()
    if not (free[a] and free[b]):
        return None
    e = grid.edges(spec)
    keep = grid.open_edges(spec, blocked) & free[e.src] & free[e.dst]
    graph = csr_matrix((e.weight[keep], (e.src[keep], e.dst[keep])), shape=(spec.cells,) * 2)
    dist, pred = dijkstra(graph, directed=True, indices=a, return_predecessors=True)
    if not np.isfinite(dist[b]):
        return None
    path = [b]
    while path[-1] != a:
        path.append(int(pred[path[-1]]))
    return grid.cell_xy(spec, np.array(path[::-1]))

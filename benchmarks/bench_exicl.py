"""exicl: exact verification of many constraint masks (batched grid shortest paths).

The issue's setting is 2,000 masks × 64 sources on a 32×32 grid (8-connected, √2
diagonals, no corner cutting, random masks of 20 % density). The peer is what a
researcher writes: a networkx graph per mask and ``single_source_dijkstra_path_length``
per source. networkx needs minutes per repetition at full size, so both sides run on the
same subset (``MASKS`` × ``SOURCES``; quick: fewer) and the ratio is per mask × source.

1. ``cpu_speedup_vs_networkx``: ours (:func:`distances_cpu`, scipy's multi-source
   Dijkstra per mask) against the networkx loop, interleaved by ``report.time``; the
   distances must agree to 1e-9, or the ratio is not comparable.
2. ``kernel_speedup_vs_cpu``: the CUDA kernel (:mod:`iclr25.gpu.kernels.grid_sssp`) at the
   full size against the CPU path — measured only on a CUDA machine with CuPy.
3. ``sampler_batched_vs_loop``: guided sampling for K = 8 constraints (each a mask's φ,
   :class:`.feasibility.MaskPermissibility`, its own λ) in one batched call of
   :func:`.sampler.sample`, against what a researcher writes with diffusers: a loop over
   the K constraints, each a reverse loop of ``DDPMScheduler.step`` (cosine schedule,
   fixed-small variance, clipping — the step our DDPM equals to 1e-6 in
   tests/core/exicl/test_diffusion.py) plus the same guidance gradient αΣ∇J and
   inpainting. Same prior, same number of trajectories, levels and gradients; the noise
   streams differ, so the outputs are compared by shape and by their mean path length
   (within 25 %), not element by element.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.harness import Report, Target
from iclr25.timing import TimingConfig

NAME = "exicl"
TARGETS = {
    "cpu_speedup_vs_networkx": Target(
        ">=", 20.0, "verifying thousands of masks must not need a per-source Python loop"
    ),
    "kernel_speedup_vs_cpu": Target(
        ">=", 20.0, "calibration and experiments verify masks × sources by the thousand"
    ),
    "sampler_batched_vs_loop": Target(
        ">=", 2.0, "one batched guided sampling for K constraints instead of K loops"
    ),
}
SIZE = 32
MASKS, SOURCES = 8, 32  # the subset both sides run (quick: 3 × 8)
FULL_MASKS, FULL_SOURCES = 2000, 64
DENSITY = 0.2


def _problem(masks: int, sources: int, seed: int = 0):
    from iclr25.core.exicl.spec import open_grid

    rng = np.random.default_rng(seed)
    spec = open_grid(SIZE, SIZE)
    m = rng.random((masks, SIZE, SIZE)) < DENSITY
    src = rng.choice(SIZE * SIZE, size=sources, replace=False)
    m[:, src // SIZE, src % SIZE] = False  # sources stay open
    return spec, m, src


def networkx_distances(spec, masks, sources) -> np.ndarray:
    """The peer: one networkx graph per mask, one Dijkstra per source."""
    import networkx as nx

    out = np.full((len(masks), len(sources), spec.cells), math.inf)
    moves = [(1, 0, 1.0), (-1, 0, 1.0), (0, 1, 1.0), (0, -1, 1.0)]
    moves += [(dx, dy, math.sqrt(2.0)) for dx in (-1, 1) for dy in (-1, 1)]
    for k, mask in enumerate(masks):
        g = nx.DiGraph()
        for y in range(spec.height):
            for x in range(spec.width):
                if mask[y, x]:
                    continue
                for dx, dy, w in moves:
                    nx_, ny_ = x + dx, y + dy
                    if not (0 <= nx_ < spec.width and 0 <= ny_ < spec.height) or mask[ny_, nx_]:
                        continue
                    if dx and dy and (mask[y, nx_] or mask[ny_, x]):
                        continue
                    g.add_edge(y * spec.width + x, ny_ * spec.width + nx_, weight=w)
        for j, s in enumerate(sources):
            for node, d in nx.single_source_dijkstra_path_length(g, int(s)).items():
                out[k, j, node] = d
    return out


def _cpu_vs_networkx(report: Report) -> None:
    from iclr25.core.exicl.shortest_paths import distances_cpu

    masks, sources = (3, 8) if report.quick else (MASKS, SOURCES)
    spec, m, src = _problem(masks, sources)
    ours = distances_cpu(spec, m, src)
    peer = networkx_distances(spec, m, src)
    same = bool(np.allclose(np.nan_to_num(ours, posinf=-1), np.nan_to_num(peer, posinf=-1),
                            rtol=1e-9, atol=1e-9))  # fmt: skip
    config = TimingConfig(warmup=1, repeats=3 if report.quick else 5)
    timed = report.time(
        "verify_cpu",
        {
            "ours": lambda: distances_cpu(spec, m, src),
            "peer": lambda: networkx_distances(spec, m, src),
        },
        config=config,
    )
    report.figure("cpu_subset", {"masks": masks, "sources": sources, "grid": SIZE})
    report.check(
        "cpu_speedup_vs_networkx",
        timed.ratio("peer", "ours"),
        comparable=same,
        note=f"{masks} masks × {sources} sources on {SIZE}×{SIZE} (subset of 2,000 × 64); "
        + ("distances equal" if same else "distances differ"),
    )


def _kernel_vs_cpu(report: Report) -> None:
    from iclr25.gpu import select_device

    if select_device("auto").kind != "cuda":
        report.check("kernel_speedup_vs_cpu", None, note="no CUDA device on this machine")
        return
    from iclr25.core.exicl.shortest_paths import distances, distances_cpu

    masks, sources = (50, 16) if report.quick else (FULL_MASKS, FULL_SOURCES)
    spec, m, src = _problem(masks, sources, seed=1)
    gpu = distances(spec, m, src, device="cuda")
    cpu = distances_cpu(spec, m, src)
    same = bool(np.allclose(np.nan_to_num(gpu, posinf=-1), np.nan_to_num(cpu, posinf=-1),
                            rtol=1e-5, atol=1e-4))  # fmt: skip
    timed = report.time(
        "verify_kernel",
        {
            "ours": lambda: distances(spec, m, src, device="cuda"),
            "peer": lambda: distances_cpu(spec, m, src),
        },  # fmt: skip
        config=TimingConfig(warmup=1, repeats=3 if report.quick else 5),
    )
    note = f"{masks} masks × {sources} sources, float32 kernel vs float64 CPU"
    report.check("kernel_speedup_vs_cpu", timed.ratio("peer", "ours"), comparable=same, note=note)


K_SAMPLER = 8


def _sampler_inputs(per_constraint: int):
    from iclr25.core.exicl.feasibility import MaskPermissibility
    from iclr25.core.exicl.layouts import make_layout
    from iclr25.core.exicl.prior import load_prior
    from iclr25.paths import package_file

    lay = make_layout("wall", 0)
    prior = load_prior(package_file("iclr25.data", "exicl", "wall_prior.safetensors"), lay.spec)
    rng = np.random.default_rng(2)
    masks = rng.random((K_SAMPLER, 16, 16)) < 0.15  # (K, H, W)
    pick = rng.integers(0, len(lay.demos), per_constraint)
    starts, goals = lay.demos.starts[pick], lay.demos.goals[pick]  # (b, 2)
    return prior, masks, MaskPermissibility, starts, goals


def batched_sampling(prior, masks, phi_cls, starts, goals, scale: float = 0.2):
    """Ours: one call for K constraints (rows k·b … (k+1)·b − 1 belong to constraint k)."""
    from iclr25.core.exicl.feasibility import trajectory_cost
    from iclr25.core.exicl.sampler import Guidance, sample

    k = len(masks)
    phi = phi_cls(masks)

    def cost(x, i):
        return trajectory_cost(phi, x, 0.0, k)

    lam = np.ones(k * len(starts))
    return sample(prior, np.tile(starts, (k, 1)), np.tile(goals, (k, 1)), 0,
                  Guidance(scale=scale), cost, lam)  # fmt: skip


def diffusers_loop(prior, masks, phi_cls, starts, goals, scale: float = 0.2):
    """The peer: per constraint, a reverse loop of diffusers' DDPMScheduler.step plus the
    same guidance gradient and inpainting."""
    import torch
    from diffusers import DDPMScheduler

    from iclr25.core.exicl.feasibility import trajectory_cost
    from iclr25.core.exicl.prior import from_unit, to_unit
    from iclr25.core.exicl.sampler import Guidance, objective

    steps = prior.ddpm.steps
    sched = DDPMScheduler(num_train_timesteps=steps, beta_schedule="squaredcos_cap_v2",
                          variance_type="fixed_small", clip_sample=True,
                          prediction_type="epsilon")  # fmt: skip
    sched.set_timesteps(steps)
    w, h = prior.width_cells, prior.height_cells
    s_u = torch.as_tensor(to_unit(np.asarray(starts, float), w, h), dtype=torch.float32)
    g_u = torch.as_tensor(to_unit(np.asarray(goals, float), w, h), dtype=torch.float32)
    b, out = len(starts), []
    gen = torch.Generator().manual_seed(0)
    guidance = Guidance(scale=scale)
    for k in range(len(masks)):
        phi = phi_cls(masks[k : k + 1])

        def cost(x, i, phi=phi):
            return trajectory_cost(phi, x, 0.0, 1)

        lam = torch.ones(b)
        x = prior.condition(torch.randn((b, prior.config.horizon, 2), generator=gen), s_u, g_u)
        for t in sched.timesteps:
            i = int(t)
            with torch.no_grad():
                eps = prior.model(x, torch.full((b,), i, dtype=torch.long))
            step = sched.step(eps, t, x, generator=gen).prev_sample
            with torch.enable_grad():
                xg = x.detach().requires_grad_(True)
                (grad,) = torch.autograd.grad(
                    objective(xg, i, prior, guidance, cost, lam).sum(), xg
                )
            var = float(sched._get_variance(i))
            x = prior.condition(step + scale * var * grad, s_u, g_u)
        out.append(from_unit(x.detach(), w, h).numpy())
    return np.concatenate(out)


def _mean_length(traj: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(traj, axis=1), axis=-1).sum(axis=1).mean())


def _sampler_batched_vs_loop(report: Report) -> None:
    import torch

    torch.set_num_threads(1)
    per = 4 if report.quick else 16
    prior, masks, phi_cls, starts, goals = _sampler_inputs(per)
    ours = batched_sampling(prior, masks, phi_cls, starts, goals)
    peer = diffusers_loop(prior, masks, phi_cls, starts, goals)
    la, lb = _mean_length(ours), _mean_length(peer)
    same = ours.shape == peer.shape and abs(la - lb) <= 0.25 * max(la, lb)
    timed = report.time(
        "sampler",
        {
            "ours": lambda: batched_sampling(prior, masks, phi_cls, starts, goals),
            "peer": lambda: diffusers_loop(prior, masks, phi_cls, starts, goals),
        },
        config=TimingConfig(warmup=1, repeats=3 if report.quick else 5),
    )
    report.figure("sampler", {"k": K_SAMPLER, "per_constraint": per, "levels": prior.ddpm.steps,
                              "mean_length_ours": la, "mean_length_peer": lb})  # fmt: skip
    report.check(
        "sampler_batched_vs_loop",
        timed.ratio("peer", "ours"),
        comparable=same,
        note=f"K = {K_SAMPLER} × {per} guided samples, {prior.ddpm.steps} levels, one thread; "
        f"mean length {la:.1f} vs {lb:.1f} cells",
    )


def run(report: Report) -> None:
    _cpu_vs_networkx(report)
    _kernel_vs_cpu(report)
    _sampler_batched_vs_loop(report)

"""diffusion-at: the cost of adversarial training, and the MMD kernel-sum hot path.

Ratios (time per optimiser step, same model, data and batch, measured in one run):

- ``free_over_plain``: free AT (3 replays) against plain training — target ≤ 1.3
  (Shafahi et al. 2019: AT "for free", the δ gradient comes out of the training step);
- ``pgd3_over_plain``: PGD-3 against plain training — the issue expects ≈ (k+1)× = 4×;
  target ≤ 4.4 (at most (k+1)× + 10 %). Each PGD iteration is one forward and an
  input-only backward (``torch.autograd.grad`` w.r.t. δ, no weight gradients, no
  optimiser or EMA update), so it costs less than a training step and PGD-k lands below
  (k+1)× — how far below is in details (``*_cost_over_plain``, with FGSM and PGD-5);
- ``mmd_tiled_speedup_over_naive``: the tiled torch kernel sums against the plain numpy
  definition on 4000 × 4000 points (target ≥ 1), with 10^4 / 10^5-pair timings in details.

Measured on the 2-D MLP (batch 256) and the 8×8 U-Net (digits, batch 128), one torch
thread (what the CLI uses for points), each arm timed three times interleaved, median.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np
import torch

NAME = "diffusion-at"
TARGETS = {
    "free_over_plain": ("<=", 1.3),
    "pgd3_over_plain": ("<=", 4.4),
    "unet_free_over_plain": ("<=", 1.3),
    "unet_pgd3_over_plain": ("<=", 4.4),
    "mmd_tiled_speedup_over_naive": (">=", 1.0),
}
ARMS = {
    "plain": {},
    "free": {"method": "free", "alpha": 0.05},
    "fgsm": {"method": "fgsm", "alpha": 0.05},
    "pgd3": {"method": "pgd", "alpha": 0.05, "pgd_steps": 3},
    "pgd5": {"method": "pgd", "alpha": 0.05, "pgd_steps": 5},
}


def _seconds_per_step(data: str, arm: dict, steps: int) -> float:
    from iclr25.core.diffusion_at.adversarial import ATConfig
    from iclr25.core.diffusion_at.data import load_dataset
    from iclr25.core.diffusion_at.pipeline import default_config, make_objective
    from iclr25.core.diffusion_at.training import init_state, run_training

    dataset = load_dataset(data)
    config = default_config(dataset, steps=steps + 6, at=ATConfig(**arm))
    objective = make_objective(config, dataset)
    state = init_state(config)
    run_training(state, objective, dataclasses.replace(config, steps=6))  # warm-up
    t0 = time.perf_counter()
    run_training(state, objective, config)
    return (time.perf_counter() - t0) / steps


def _training_costs(data: str, steps: int, repeats: int = 3) -> dict:
    times = {name: [] for name in ARMS}
    for _ in range(repeats):
        for name, arm in ARMS.items():
            times[name].append(_seconds_per_step(data, arm, steps))
    return {name: statistics.median(values) for name, values in times.items()}


def _mmd_costs(quick: bool) -> dict:
    from iclr25.gpu.kernels.mmd import rbf_kernel_sums_reference, rbf_kernel_sums_tiled

    rng = np.random.default_rng(0)
    gammas = [0.5, 2.0, 8.0]
    x, y = rng.normal(size=(4000, 2)), rng.normal(size=(4000, 2))
    t0 = time.perf_counter()
    naive = rbf_kernel_sums_reference(x, y, gammas)
    naive_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    tiled = rbf_kernel_sums_tiled(x, y, gammas)
    tiled_s = time.perf_counter() - t0
    assert np.allclose(naive, tiled, rtol=1e-9)
    details = {"naive_4000_s": naive_s, "tiled_4000_s": tiled_s}
    n_large = 10_000 if quick else 30_000
    big = rng.normal(size=(n_large, 2))
    for dtype in (torch.float64, torch.float32):
        t0 = time.perf_counter()
        rbf_kernel_sums_tiled(big, big, gammas, dtype=dtype)
        details[f"tiled_{n_large}x{n_large}_{str(dtype).split('.')[-1]}_s"] = (
            time.perf_counter() - t0
        )
    return {"speedup": naive_s / tiled_s, "details": details}


def run(quick: bool = False) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        mlp = _training_costs("8gaussians", 60 if quick else 300)
        unet = _training_costs("digits", 8 if quick else 40)
        mmd = _mmd_costs(quick)
    finally:
        torch.set_num_threads(threads)
    ratios = {
        "free_over_plain": mlp["free"] / mlp["plain"],
        "pgd3_over_plain": mlp["pgd3"] / mlp["plain"],
        "unet_free_over_plain": unet["free"] / unet["plain"],
        "unet_pgd3_over_plain": unet["pgd3"] / unet["plain"],
        "mmd_tiled_speedup_over_naive": mmd["speedup"],
    }
    details = {
        "mlp_steps_per_s": {k: 1 / v for k, v in mlp.items()},
        "unet_steps_per_s": {k: 1 / v for k, v in unet.items()},
        "mlp_cost_over_plain": {k: v / mlp["plain"] for k, v in mlp.items()},
        "unet_cost_over_plain": {k: v / unet["plain"] for k, v in unet.items()},
        "mmd": mmd["details"],
        "torch_threads": 1,
    }
    return {"ratios": ratios, "details": details}

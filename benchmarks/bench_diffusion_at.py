"""diffusion-at: the cost of adversarial training and of its controls, and the MMD hot path.

Ratios of time per optimiser step against plain training (same model, data, batch and
seed), every arm timed interleaved with the others in one run (``report.time``):

- ``free_over_plain``: free AT (3 replays) — target ≤ 1.3 (Shafahi et al. 2019: AT "for
  free", ∂L/∂δ comes out of the training step's own backward pass);
- ``pgd3_over_plain``: PGD-3 — target ≤ 4.4, the (k+1)× of k extra forward/backward
  passes plus 10 %. Each PGD iteration is a forward and an input-only backward (no weight
  gradients, optimiser or EMA update), so PGD-k lands below (k+1)×;
- ``noise_over_plain``: the noise control (free's schedule, a random δ) — target ≤ 1.3:
  the controls of ``compare`` cost what the arm they control costs;

each on the 2-D MLP (8gaussians, batch 256) and the 8×8 U-Net (digits, batch 128), and
``mmd_tiled_speedup_over_naive``: the tiled torch kernel sums against the numpy
definition on 4000 × 4000 points (target ≥ 1). One torch thread (what the CLI uses for
points and every compare task). The statistic is the median *process CPU time* per call:
the work is single-threaded, and on a shared machine CPU time is not inflated by other
jobs the way wall time is (median wall times are kept in the timings).
"""

from __future__ import annotations

import dataclasses

from benchmarks.harness import Report, Target
from iclr25.timing import TimingConfig

NAME = "diffusion-at"
_FREE = "Shafahi et al. 2019: free AT costs about one plain step per optimiser update"
_PGD = "k extra forward/backward passes: (k+1)x a plain step, +10%"
_NOISE = "a control must cost what the arm it controls costs (free's schedule, random δ)"
TARGETS = {
    "free_over_plain": Target("<=", 1.3, _FREE),
    "pgd3_over_plain": Target("<=", 4.4, _PGD),
    "noise_over_plain": Target("<=", 1.3, _NOISE),
    "unet_free_over_plain": Target("<=", 1.3, _FREE + " (U-Net on digits)"),
    "unet_pgd3_over_plain": Target("<=", 4.4, _PGD + " (U-Net on digits)"),
    "unet_noise_over_plain": Target("<=", 1.3, _NOISE + " (U-Net on digits)"),
    "mmd_tiled_speedup_over_naive": Target(
        ">=", 1.0, "the tiled kernel sums must beat the plain numpy definition they replace"
    ),
}
ARMS = {
    "plain": {},
    "free": {"method": "free", "alpha": 0.05},
    "noise": {"method": "noise", "alpha": 0.05},
    "fgsm": {"method": "fgsm", "alpha": 0.05},
    "pgd3": {"method": "pgd", "alpha": 0.05, "pgd_steps": 3},
    "pgd5": {"method": "pgd", "alpha": 0.05, "pgd_steps": 5},
}


def _stepper(data: str, arm: dict, steps: int):
    """A call that trains ``steps`` more optimiser steps of one arm (a persistent run)."""
    from iclr25.core.diffusion_at.adversarial import ATConfig
    from iclr25.core.diffusion_at.data import load_dataset
    from iclr25.core.diffusion_at.pipeline import default_config, make_objective
    from iclr25.core.diffusion_at.training import init_state, run_training

    dataset = load_dataset(data)
    config = default_config(dataset, at=ATConfig(**arm))
    objective = make_objective(config, dataset)
    state = init_state(config)

    def train_more() -> None:
        run_training(state, objective, dataclasses.replace(config, steps=state.step + steps))

    return train_more


def _training_costs(report: Report, prefix: str, data: str, steps: int) -> None:
    sides = {name: _stepper(data, arm, steps) for name, arm in ARMS.items()}
    timed = report.time(f"{data}: {steps} optimiser steps", sides, statistic="cpu_median_s")
    for arm in ("free", "pgd3", "noise"):
        report.check(f"{prefix}{arm}_over_plain", timed.ratio(arm, "plain"))
    report.figure(f"{data}_cpu_cost_over_plain", {arm: timed.ratio(arm, "plain") for arm in ARMS})
    report.figure(f"{data}_steps_per_cpu_s", {arm: steps / timed.seconds(arm) for arm in ARMS})


def _mmd(report: Report) -> None:
    import numpy as np

    from iclr25.gpu.kernels.mmd import rbf_kernel_sums_reference, rbf_kernel_sums_tiled

    rng = np.random.default_rng(0)
    gammas = [0.5, 2.0, 8.0]
    n = 1500 if report.quick else 4000
    x, y = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    naive, tiled = rbf_kernel_sums_reference(x, y, gammas), rbf_kernel_sums_tiled(x, y, gammas)
    same = bool(np.allclose(naive, tiled, rtol=1e-9))
    sides = {
        "tiled": lambda: rbf_kernel_sums_tiled(x, y, gammas),
        "naive": lambda: rbf_kernel_sums_reference(x, y, gammas),
    }
    timed = report.time(f"MMD kernel sums, {n} x {n} points", sides, statistic="median_s")
    report.check(
        "mmd_tiled_speedup_over_naive",
        timed.ratio("naive", "tiled"),
        comparable=same,
        note="" if same else "the two paths disagree beyond rtol 1e-9",
    )


def run(report: Report) -> None:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    report.timing_config = TimingConfig(warmup=1, repeats=3 if report.quick else 5)
    try:
        _training_costs(report, "", "8gaussians", 20 if report.quick else 100)
        _training_costs(report, "unet_", "digits", 3 if report.quick else 10)
        _mmd(report)
    finally:
        torch.set_num_threads(threads)

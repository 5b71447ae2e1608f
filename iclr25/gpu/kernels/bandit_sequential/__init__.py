"""UCB1 and Thompson sampling, one CUDA thread per bandit execution.

``run_sequential_cuda`` simulates executions ``run_ids`` of UCB1 or Gaussian Thompson
sampling on the device and returns the arrays of the CPU path's ``SequentialOutcome``
(``iclr25/core/bandit_replicable/sequential.py``); both draw the counter-based numbers of
:mod:`iclr25.counter_rng`. The plain per-execution definition is
:func:`reference.sequential_reference_run`. ``env`` is anything with ``k``, ``means``,
``gaps``, ``noise`` and ``sigma`` (this package imports nothing from ``iclr25.core``).
gpu-bench's hot-path case for this kernel lives beside the CPU path it is measured
against (``iclr25/core/bandit_replicable/gpu_cases.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="bandit_sequential",
    package=__name__,
    description="UCB1 / Thompson sampling, one thread per execution (float64, counter RNG)",
    options=("--fmad=false",),
)
KMAX = 64  # must match kernel.cu


@dataclass
class SequentialArrays:
    """Host copies of the kernel's outputs (the fields of the CPU ``SequentialOutcome``)."""

    pulls: np.ndarray  # (runs, k) int64
    regret: np.ndarray  # (runs,) pseudo-regret
    keys: np.ndarray  # (runs, 2) uint64 rolling-hash trace keys
    curve: np.ndarray  # (C,) summed regret at the checkpoints


THREADS = 128
ALGOS = {"ucb1": 0, "thompson": 1}


def run_sequential_cuda(
    algo: str, env, horizon: int, run_ids, seed: int, checkpoints=None, prior_scale: float = 1.0
):
    """Simulate on the GPU; returns :class:`SequentialArrays` (numpy arrays)."""
    from iclr25.counter_rng import run_keys
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    k = env.k
    if k > KMAX:
        raise ValueError(f"the CUDA path handles at most {KMAX} arms, got {k}")
    runs = int(len(run_ids))
    marks = np.zeros(0, np.int64) if checkpoints is None else np.asarray(checkpoints, np.int64)
    pulls = cp.zeros((runs, k), dtype=cp.int64)
    regret = cp.zeros(runs, dtype=cp.float64)
    curve = cp.zeros((runs, max(marks.size, 1)), dtype=cp.float64)
    keys_out = cp.zeros((runs, 2), dtype=cp.uint64)
    if runs:
        keys = run_keys(seed, cp.asarray(run_ids), cp)
        kernel = load_module(SPEC.name).get_function("bandit_sequential")
        args = (
            np.int32(ALGOS[algo]),
            cp.asarray(env.means, cp.float64),
            cp.asarray(env.gaps, cp.float64),
            np.int32(k),
            np.int64(horizon),
            np.int32(env.noise == "bernoulli"),
            np.float64(env.sigma),
            np.float64(prior_scale),
            keys,
            np.int32(runs),
            cp.asarray(marks),
            np.int32(marks.size),
            pulls,
            regret,
            curve,
            keys_out,
        )
        kernel(((runs + THREADS - 1) // THREADS,), (THREADS,), args)
    return SequentialArrays(
        pulls=pulls.get(),
        regret=regret.get(),
        keys=keys_out.get(),
        curve=curve.get()[:, : marks.size].sum(axis=0),
    )


__all__ = ["SPEC", "SequentialArrays", "run_sequential_cuda"]

"""UCB1 and Thompson sampling, one CUDA thread per bandit execution.

``run_sequential_cuda`` simulates executions ``run_ids`` of UCB1 or Gaussian Thompson
sampling on the device and returns the same :class:`SequentialOutcome` as the CPU path
(:func:`iclr25.core.bandit_replicable.sequential.simulate_sequential`); both draw the
counter-based numbers of :mod:`iclr25.core.bandit_replicable.counter_rng`. The plain
per-execution definition is :func:`reference.sequential_reference_run`.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.registry import KernelSpec, load_module

SPEC = KernelSpec(
    name="bandit_sequential",
    package=__name__,
    description="UCB1 / Thompson sampling, one thread per execution (float64, counter RNG)",
    options=("--fmad=false",),
)
KMAX = 64  # must match kernel.cu
THREADS = 128
ALGOS = {"ucb1": 0, "thompson": 1}


def run_sequential_cuda(
    algo: str, env, horizon: int, run_ids, seed: int, checkpoints=None, prior_scale: float = 1.0
):
    """Simulate on the GPU; returns a SequentialOutcome with numpy arrays."""
    from iclr25.core.bandit_replicable.counter_rng import run_keys
    from iclr25.core.bandit_replicable.sequential import SequentialOutcome
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
    return SequentialOutcome(
        pulls=pulls.get(),
        regret=regret.get(),
        keys=keys_out.get(),
        curve=curve.get()[:, : marks.size].sum(axis=0),
    )


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against the same algorithm vectorised over executions in
    CuPy (one launch sequence per round), comparing mean pulls per arm."""
    from iclr25.gpu.hotpath import HotPathCase

    sizes = [(16384, 2000, 10)] if quick else [(16384, 2000, 10), (65536, 10000, 10)]

    def make(algo: str, runs: int, horizon: int, k: int):
        def setup():
            import cupy as cp

            from iclr25.core.bandit_replicable.environments import ArmsEnvironment
            from iclr25.core.bandit_replicable.registry import sequential_rule
            from iclr25.core.bandit_replicable.sequential import simulate_sequential

            env = ArmsEnvironment(np.linspace(0.9, 0.1, k), "bernoulli", 1.0)
            ids = np.arange(runs)

            def ours():
                out = run_sequential_cuda(algo, env, horizon, ids, seed=0)
                return cp.asarray(out.pulls.mean(axis=0))

            def reference():
                out = simulate_sequential(sequential_rule(algo), env, horizon, ids, 0, xp=cp)
                return cp.asarray(out.pulls.mean(axis=0))

            return ours, reference

        flops = 12.0 * runs * horizon * k  # index or posterior draw per arm and round
        ref = "CuPy vectorised per-round loop"
        shape = f"{algo} runs={runs} T={horizon} k={k}"
        return HotPathCase(SPEC.name, shape, flops, ref, setup, rtol=2e-2, atol=0.5)

    return [make(a, *size) for size in sizes for a in ("ucb1", "thompson")]


__all__ = ["SPEC", "run_sequential_cuda", "hot_path_cases"]

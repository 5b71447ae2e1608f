"""gpu-bench's hot-path case for the ``bandit_sequential`` kernel.

It lives here, beside the CuPy-vectorised CPU path it is measured against, because
``iclr25/gpu/`` never imports ``iclr25/core/``; :mod:`iclr25.core.gpu_bench.ops` finds it
through ``CORE_HOT_PATHS``.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.registry import sequential_rule
from iclr25.core.bandit_replicable.sequential import simulate_sequential


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against the same algorithm vectorised over executions in
    CuPy (one launch sequence per round), comparing mean pulls per arm."""
    from iclr25.gpu.hotpath import HotPathCase
    from iclr25.gpu.kernels.bandit_sequential import SPEC, run_sequential_cuda

    sizes = [(16384, 2000, 10)] if quick else [(16384, 2000, 10), (65536, 10000, 10)]

    def make(algo: str, runs: int, horizon: int, k: int):
        def setup():
            import cupy as cp

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

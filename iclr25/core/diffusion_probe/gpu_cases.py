"""gpu-bench's hot-path case for the ``rhm_bp`` kernel: the kernel against the same BP
vectorised over data in CuPy (:mod:`iclr25.core.diffusion_probe.bp` on CuPy arrays), at
(v, m, s) = (9, 6, 3), L = 6, comparing the mean sampled symbol per position (float32
messages make ~0.1 % of draws differ from float64 ones, which moves a mean by < 0.01). Found by
:mod:`iclr25.core.gpu_bench.ops` through ``CORE_HOT_PATHS`` (``iclr25/gpu`` never
imports core)."""

from __future__ import annotations

import numpy as np

from iclr25.core.diffusion_probe import bp
from iclr25.core.diffusion_probe.noise import leaf_messages
from iclr25.core.diffusion_probe.rhm import RHMSpec, generate, sample_rules


def hot_path_cases(quick: bool) -> list:
    from iclr25.gpu.hotpath import HotPathCase
    from iclr25.gpu.kernels.rhm_bp import SPEC, rhm_bp_cuda

    sizes = [(10_000, 5)] if quick else [(10_000, 5), (100_000, 6)]

    def make(n: int, depth: int):
        def setup():
            import cupy as cp

            rng = np.random.default_rng(0)
            grammar = sample_rules(RHMSpec(9, 6, 3, depth), rng)
            x0, _ = generate(grammar, n, rng)
            msg, _ = leaf_messages("flip", x0, 9, 0.4, rng)
            u = rng.random((n, bp.uniforms_per_datum(grammar)))
            msg_gpu, u_gpu = cp.asarray(msg), cp.asarray(u)
            chunk = max(1, 2**30 // (8 * 4 * 9 * 6 * 3 ** (depth - 1)))

            def ours():
                leaves, _ = rhm_bp_cuda(
                    msg_gpu, grammar.rules, grammar.weights, grammar.vocab, grammar.s, u_gpu
                )
                return cp.asarray(leaves).mean(axis=0)

            def reference():
                parts = []
                for a in range(0, n, chunk):
                    msgs = bp.upward(grammar, msg_gpu[a : a + chunk])
                    parts.append(bp.sample(grammar, msgs, u_gpu[a : a + chunk])[0])
                return cp.concatenate(parts).mean(axis=0)

            return ours, reference

        flops = 2.0 * n * 9 * 6 * 3 * sum(3**lv for lv in range(depth)) * 2  # up + down
        shape = f"n={n} L={depth} (v,m,s)=(9,6,3)"
        return HotPathCase(
            SPEC.name, shape, flops, "CuPy vectorised BP", setup, rtol=0.0, atol=0.01
        )

    return [make(*size) for size in sizes]

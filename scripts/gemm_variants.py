"""Sweep the persistent Hopper GEMM's compile-time variants against cuBLAS (an sm_90 GPU and
nvcc). Timed by gpu-bench's one method — :func:`iclr25.core.gpu_bench.bench.time_sides`:
interleaved samples of back-to-back launches over input sets rotated past the L2, CUDA
events, the same repeats and median for every variant and for cuBLAS, in one process.

Builds iclr25/gpu/kernels/gemm_hopper/kernel.cu with nvcc for each ``-DGEMM_STAGES``
(depth of the TMA ring; shared memory allows 2 or 3 with the 64 KiB epilogue buffer) and
``-DGEMM_GROUP_M`` (tile-rows per L2 group), checks each build against the fp32 product,
and prints its ratio to cuBLAS. This is how the kernel's defaults are chosen; gpu-bench
measures the default build through ``gemm()``.

Usage: python scripts/gemm_variants.py [--size 4096] [--repeats 20] [--launches 10]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(src: Path, out_dir: Path, stages: int, group: int) -> Path:
    from iclr25.gpu.compile import nvcc_path
    from iclr25.gpu.registry import include_dir

    cubin = out_dir / f"gemm_{stages}_{group}.cubin"
    cmd = [nvcc_path() or "nvcc", "-cubin", "-arch=sm_90a", "-std=c++17", f"-I{include_dir()}"]
    cmd += [f"-DGEMM_STAGES={stages}", f"-DGEMM_GROUP_M={group}", "-o", str(cubin), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-800:])
    return cubin


def launcher(cubin: Path, stages: int):
    """``(a, b) -> a @ b`` with one build (same launch as gemm_hopper, its own cubin)."""
    import torch

    from iclr25.gpu import driver, tensor_map
    from iclr25.gpu.kernels import gemm_hopper as gh

    smem = stages * gh.STAGE_BYTES + gh.C_BYTES + 1024 + 16 * stages

    def run(a, b):
        (m, k), n = a.shape, b.shape[1]
        c = torch.empty((m, n), dtype=a.dtype, device=a.device)
        cluster = gh.default_cluster(m)
        fn = driver.function(cubin, gh.function_name(a.dtype, "n", "n", cluster), 0, smem)
        params = [tensor_map.param(a, *gh.BOX_A["n"]), tensor_map.param(b, *gh.BOX_B["n"])]
        params += [tensor_map.param(c, *gh.BOX_C), driver.i32(m), driver.i32(n), driver.i32(k)]
        grid = gh.grid_size(m, n, driver.multiprocessor_count(0), cluster)
        stream = torch.cuda.current_stream().cuda_stream
        driver.launch(fn, (grid, 1, 1), (gh.THREADS, 1, 1), params, smem, stream)
        return c

    return run


def main() -> None:
    import torch

    from iclr25 import timing
    from iclr25.core.gpu_bench.bench import time_sides
    from iclr25.gpu.kernels import gemm_hopper

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--launches", type=int, default=10)
    args = parser.parse_args()
    s = args.size
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        sys.exit("needs an sm_90 GPU")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets_n = timing.rotation_count(2 * s * s * 2, l2, 8 << 30)
    gen = torch.Generator(device="cuda").manual_seed(0)
    sets = [
        tuple(torch.randn(s, s, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in "ab")
        for _ in range(sets_n)
    ]
    exact = sets[0][0].float() @ sets[0][1].float()
    sides = {"cuBLAS": lambda i: torch.matmul(*sets[i])}
    with tempfile.TemporaryDirectory() as tmp:
        for stages in (2, 3):
            for group in (8, 16):
                run = launcher(
                    build(gemm_hopper.SPEC.source_path(), Path(tmp), stages, group), stages
                )
                err = (run(*sets[0]).float() - exact).abs().max().item()
                print(f"STAGES={stages} GROUP_M={group}: max |error| {err:.3g}")
                sides[f"STAGES={stages} GROUP_M={group}"] = lambda i, run=run: run(*sets[i])
        config = timing.TimingConfig(warmup=3, repeats=args.repeats)
        seconds = time_sides(sides, len(sets), args.launches, config, timing.CudaEventClock())
    flop = 2 * s**3
    for name, sec in seconds.items():
        ratio = seconds["cuBLAS"] / sec
        print(f"{name}: {flop / sec / 1e12:.0f} TFLOP/s, {ratio:.3f} of cuBLAS")


if __name__ == "__main__":
    main()

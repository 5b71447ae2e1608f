"""Sweep the Hopper GEMM's compile-time variants against cuBLAS (needs an sm_90 GPU and nvcc).

Builds iclr25/gpu/kernels/gemm_wgmma/kernel.cu with nvcc for each ``-DGEMM_STAGES`` (depth
of the TMA ring) and ``-DGEMM_GROUP_M`` (tile-rows per L2 group), checks each build against
the fp32 product, and times it against ``torch.matmul`` on three rotated input sets (median
of CUDA-event timings). This is how the kernel's defaults were chosen; gpu-bench measures
the default build through the normal dispatch.

Usage: python scripts/gemm_variants.py [--size 4096] [--repeats 60]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(src: Path, out_dir: Path, stages: int, group: int):
    import cupy

    from iclr25.gpu.registry import include_dir

    cubin = out_dir / f"gemm_{stages}_{group}.cubin"
    cmd = ["nvcc", "-cubin", "-arch=sm_90a", "-std=c++17", f"-I{include_dir()}"]
    cmd += [f"-DGEMM_STAGES={stages}", f"-DGEMM_GROUP_M={group}", "-o", str(cubin), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-800:])
    return cupy.RawModule(path=str(cubin)).get_function("gemm_wgmma_bf16")


def median_ms(f, sets, repeats: int) -> float:
    import torch

    for i in range(5):
        f(*sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    for i in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f(*sets[i % len(sets)])
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main() -> None:
    import torch

    from iclr25.gpu.kernels import gemm_wgmma

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    s = args.size
    if s % 256 or not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        sys.exit("needs an sm_90 GPU and --size a multiple of 256")
    gen = torch.Generator(device="cuda").manual_seed(0)
    sets = [
        tuple(torch.randn(s, s, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in "ab")
        for _ in range(3)
    ]
    flop = 2 * s**3
    ref_ms = median_ms(torch.matmul, sets, args.repeats)
    print(f"cuBLAS: {flop / ref_ms / 1e9:.0f} TFLOP/s")
    exact = sets[0][0].float() @ sets[0][1].float()
    with tempfile.TemporaryDirectory() as tmp:
        for stages in (3, 4):
            for group in (8, 16):
                fn = build(gemm_wgmma.SPEC.source_path(), Path(tmp), stages, group)
                run = partial(gemm_wgmma.launch_gemm, fn, stages=stages)
                err = (run(*sets[0]).float() - exact).abs().max().item()
                ms = median_ms(run, sets, args.repeats)
                print(
                    f"STAGES={stages} GROUP_M={group}: {flop / ms / 1e9:.0f} TFLOP/s, "
                    f"{ref_ms / ms:.3f} of cuBLAS, max |error| {err:.3g}"
                )


if __name__ == "__main__":
    main()

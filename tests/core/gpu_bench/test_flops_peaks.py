"""FLOP formulas and the peak table (known answers from the notes and vendor sheets)."""

from __future__ import annotations

import pytest

from iclr25.core.gpu_bench import peaks
from iclr25.gpu import flops


def test_gemm_flops_known_answer():
    # 2 M N K; the ThunderKittens notes' 4096^3 GEMM is 137.4 GFLOP per call
    assert flops.gemm_flops(4096, 4096, 4096) == 2 * 4096**3 == 137438953472.0
    assert flops.gemm_flops(2, 3, 5) == 60.0


def test_attention_flops_known_answers():
    # 4 B H N^2 D, halved when causal; backward 2.5x (notes)
    assert flops.attention_forward_flops(1, 1, 4, 4, 8, causal=False) == 4 * 16 * 8
    assert flops.attention_forward_flops(4, 16, 4096, 4096, 128, causal=True) == (
        4 * 4 * 16 * 4096**2 * 128 / 2
    )
    assert (
        flops.attention_backward_flops(2, 3, 5, 7, 64, causal=False) == 2.5 * 4 * 2 * 3 * 5 * 7 * 64
    )


def test_linear_attention_flops_counts_the_chunked_algorithm():
    # per position: (C + 1)(Dk + Dv) for the causal intra-chunk products (C (C+1)/2 pairs of
    # 2 Dk + 2 Dv per chunk of C) + 2 Dk Dv (Q S) + 2 Dk Dv (state update)
    c, dk, dv = 64, 128, 128
    per_chunk = c * (c + 1) // 2 * (2 * dk + 2 * dv) + 2 * c * dk * dv + 2 * c * dk * dv
    assert flops.linear_attention_flops(1, 1, c, dk, dv, c) == per_chunk
    assert flops.linear_attention_flops(8, 16, 4096, dk, dv, c) == 8 * 16 * 64 * per_chunk


def test_tflops():
    assert flops.tflops(2e12, 0.5) == 4.0
    assert flops.tflops(1.0, None) is None
    assert flops.tflops(1.0, 0.0) is None


@pytest.mark.parametrize(
    ("name", "dtype", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", "bf16", 989.4),  # SXM, dense (not the 1979 sparse figure)
        ("NVIDIA H100 PCIe", "bf16", 756.5),
        ("NVIDIA H100 NVL", "fp16", 835.5),
        ("NVIDIA H200", "bf16", 989.4),
        ("NVIDIA GH200 480GB", "bf16", 989.4),
        ("NVIDIA A100-SXM4-80GB", "bf16", 312.0),
        ("NVIDIA L40S", "bf16", 362.05),
        ("NVIDIA L40", "bf16", 181.05),
        ("NVIDIA L4", "fp16", 121.0),
        ("NVIDIA GeForce RTX 4090", "bf16", 165.2),
        ("Tesla V100-SXM2-16GB", "fp16", 125.0),
        ("Tesla V100-SXM2-16GB", "bf16", None),  # no bf16 tensor cores
        ("Some Future GPU", "bf16", None),
        (None, "bf16", None),
    ],
)
def test_dense_peaks_by_device_name(name, dtype, expected):
    assert peaks.dense_peak_tflops(name, dtype) == expected


def test_percent_of_peak():
    assert peaks.percent_of_peak(494.7, 989.4) == pytest.approx(50.0)
    assert peaks.percent_of_peak(None, 989.4) is None
    assert peaks.percent_of_peak(100.0, None) is None

"""The throughput figure: which bars, in which unit, in which order."""

from __future__ import annotations

import pytest

from iclr25.core.gpu_bench.plots import OURS, bars, throughput_figure


def _row(op, shape, reference, ref_tflops, ours=None):
    return {"op": op, "shape": shape, "reference": reference,
            "reference_tflops": ref_tflops, "ours_tflops": ours}  # fmt: skip


GPU_ROWS = [
    _row("attention", "N=4096", "SDPA flash", 500.0, ours=400.0),
    _row("attention", "N=4096", "SDPA cudnn", None, ours=400.0),  # unavailable: no bar
    _row("gemm", "M=N=K=4096", "cuBLAS", 700.0, ours=None),  # ours failed: reference only
    _row("hot", "n=8", None, None),  # the case itself failed: no bar at all
]


def test_gpu_bars_put_ours_first_in_each_case_and_skip_missing_figures():
    assert bars(GPU_ROWS, gpu=True) == [
        ("attention N=4096", OURS, 400.0),
        ("attention N=4096", "SDPA flash", 500.0),
        ("gemm M=N=K=4096", "cuBLAS", 700.0),
    ]


def test_cpu_bars_are_references_in_gflops():
    rows = [_row("gemm", "M=64", "torch.matmul (fp32, CPU)", 0.186)]
    assert bars(rows, gpu=False) == [("gemm M=64", "torch.matmul (fp32, CPU)", 186.0)]


def test_figure_has_one_bar_per_figure():
    pytest.importorskip("matplotlib")
    fig = throughput_figure(GPU_ROWS, gpu=True)
    ax = fig.axes[0]
    assert len(ax.patches) == 3 and "TFLOP/s" in ax.get_xlabel()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["attention N=4096  |  ours", "SDPA flash", "gemm M=N=K=4096  |  cuBLAS"]

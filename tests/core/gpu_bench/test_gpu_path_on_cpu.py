"""The GPU run's code path, exercised on the CPU.

Our kernels cannot run here, so they are replaced by torch stand-ins (the same maths) and
the "cuda" cases put their tensors on the CPU; everything else — case building, input
rotation, SDPA backend probing, timing with the harness, errors against the fp32 exact
output, tolerances, % of peak, the row layout — is the code a GPU run executes.
"""

from __future__ import annotations

import pytest
import torch

import iclr25.gpu
from iclr25 import timing as harness
from iclr25.core.gpu_bench import bench, ops
from iclr25.gpu.kernels import attention_fwd, gemm_bf16, linear_attention
from iclr25.gpu.kernels.linear_attention import linear_attention_chunked


@pytest.fixture
def gpu_path_on_cpu(monkeypatch):
    sdpa = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(gemm_bf16, "gemm", lambda a, b: (a.float() @ b.float()).to(a.dtype))

    def attention_stand_in(q, k, v, causal=False, return_lse=False):
        group = q.shape[1] // k.shape[1]  # grouped-query attention: expand k and v
        k, v = attention_fwd.expand_kv(k, group), attention_fwd.expand_kv(v, group)
        o, lse = attention_fwd.attention_reference(q, k, v, causal)
        return (o.to(q.dtype), lse) if return_lse else sdpa(q, k, v, is_causal=causal)

    monkeypatch.setattr(attention_fwd, "attention_forward", attention_stand_in)
    monkeypatch.setattr(
        linear_attention,
        "linear_attention",
        lambda q, k, v, s=None: linear_attention_chunked(q.float(), k.float(), v.float(), s).to(
            q.dtype
        ),
    )
    monkeypatch.setattr(ops, "GPU_TENSOR_DEVICE", "cpu")
    facts = bench.DeviceFacts("cuda", "NVIDIA H100 80GB HBM3", (9, 0), 8 * bench.GIB, 1 << 15)
    monkeypatch.setattr(bench, "cuda_facts", lambda: facts)
    monkeypatch.setattr(harness, "CudaEventClock", harness.PerfCounterClock)
    monkeypatch.setattr(iclr25.gpu, "get_cupy", lambda: object())


def test_gpu_run_rows(gpu_path_on_cpu):
    config = bench.GpuBenchConfig(
        ops=("gemm", "attention", "linear-attention"),
        sizes=("64",),
        options=ops.OpOptions(head_dim=64, batch=1, heads=2, decay="yes"),
        repeats=2,
        warmup=1,
    )
    warnings, progress = [], []
    rows = bench.run_gpu(config, warnings.append, lambda n, **kw: progress.append(kw["case"]))
    assert warnings == [] and len(progress) == 3
    by_ref = {(r["op"], r["reference"]): r for r in rows}
    assert set(by_ref) >= {
        ("gemm", "cuBLAS (torch.matmul)"),
        ("attention", "SDPA flash"),
        ("attention", "SDPA efficient"),
        ("linear-attention", "PyTorch chunked"),
        ("linear-attention", "flash-linear-attention"),
    }
    kernels = {"gemm": "gemm_bf16", "attention": "attention_fwd"}
    kernels["linear-attention"] = "linear_attention"
    outputs = {"gemm": ["C"], "attention": ["O", "LSE"], "linear-attention": ["O"]}
    for row in rows:
        assert row["dtype"] == "bf16" and row["kernel"] == kernels[row["op"]]
        assert row["fallback"] == "" and row["launches"] == 10 and row["repeats"] == 2
        assert [c["name"] for c in row["checks"]] == outputs[row["op"]]
        assert all(c["ok"] for c in row["checks"]) and row["error_ratio"] <= 1
        assert row["ours_tflops"] > 0 and row["peak_tflops"] == 989.4
        assert row["pct_of_peak"] == pytest.approx(100 * row["ours_tflops"] / 989.4)
        assert row["within_tolerance"] is True, row  # the stand-ins are exact up to rounding
        # sets flush twice the 32 KiB "L2": gemm inputs are 16 KiB, q, k, v 48 KiB
        assert row["sets"] == (5 if row["op"] == "gemm" else 3)
        if row["note"]:  # a backend or package this machine lacks: reported, not fatal
            assert row["note"].startswith("unavailable: ") and row["reference_tflops"] is None
        else:
            assert row["ratio"] == pytest.approx(row["ours_tflops"] / row["reference_tflops"])
            assert row["reference_max_abs_err"] is not None
    fla = by_ref[("linear-attention", "flash-linear-attention")]
    assert "unavailable" in fla["note"]  # not installed here


def test_gpu_run_without_cupy_times_only_the_references(gpu_path_on_cpu, monkeypatch):
    monkeypatch.setattr(iclr25.gpu, "get_cupy", lambda: None)
    config = bench.GpuBenchConfig(ops=("gemm",), sizes=("32",), repeats=1, warmup=0)
    warnings = []
    (row,) = bench.run_gpu(config, warnings.append)
    assert any("CuPy is not installed" in w for w in warnings)
    assert row["ours_tflops"] is None and row["kernel"] is None and row["reference_tflops"] > 0


def test_gpu_run_refuses_bf16_on_old_gpus(gpu_path_on_cpu, monkeypatch):
    facts = bench.DeviceFacts("cuda", "Tesla T4", (7, 5), 8 * bench.GIB, 4 << 20)
    monkeypatch.setattr(bench, "cuda_facts", lambda: facts)
    with pytest.raises(iclr25.errors.UsageError, match="bf16 tensor cores"):
        bench.run_gpu(bench.GpuBenchConfig(ops=("gemm",), sizes=("32",)), print)


def _raise(exc):
    def fn(*args, **kwargs):
        raise exc

    return fn


def test_a_failing_kernel_becomes_a_row_note_and_the_run_goes_on(gpu_path_on_cpu, monkeypatch):
    """A kernel that does not compile on this machine (e.g. an NVRTC error) must not take the
    whole table down: its rows say why, the references are still timed, the next op runs."""
    monkeypatch.setattr(
        gemm_bf16, "gemm", _raise(RuntimeError("kernel.cu(21): error: INFINITY is undefined"))
    )
    config = bench.GpuBenchConfig(
        ops=("gemm", "linear-attention"),
        sizes=("64",),
        options=ops.OpOptions(head_dim=64, batch=1, heads=2, decay="no"),
        repeats=1,
        warmup=0,
    )
    warnings = []
    rows = bench.run_gpu(config, warnings.append)
    (gemm_row,) = [r for r in rows if r["op"] == "gemm"]
    assert gemm_row["ours_tflops"] is None and gemm_row["ratio"] is None
    why = "RuntimeError: kernel.cu(21): error: INFINITY is undefined"
    assert gemm_row["note"] == f"ours failed: {why}"
    assert gemm_row["reference_tflops"] > 0  # cuBLAS still measured
    assert warnings == [f"gemm M=64 N=64 K=64: {gemm_row['note']}"]
    lin = [r for r in rows if r["op"] == "linear-attention" and r["reference"] == "PyTorch chunked"]
    assert lin and lin[0]["ours_tflops"] > 0 and lin[0]["within_tolerance"] is True


def test_a_hot_path_that_cannot_be_built_is_reported(gpu_path_on_cpu, monkeypatch):
    """E.g. a hot path whose reference needs scipy on a machine without it."""
    broken = ops.BenchCase(
        "pairwise_sqdist", "n=8", "", 1.0, 0, 0, "pairwise_sqdist",
        _raise(ModuleNotFoundError("No module named 'scipy'")), rotate=False,
    )  # fmt: skip
    monkeypatch.setattr(ops, "hot_path_cases", lambda kernel, quick: [broken])
    config = bench.GpuBenchConfig(ops=("pairwise_sqdist", "gemm"), repeats=1, warmup=0)
    monkeypatch.setitem(ops.DEFAULT_SIZES["gemm"], ("cuda", False), ["32"])
    warnings = []
    rows = bench.run_gpu(config, warnings.append)
    assert [r["op"] for r in rows] == ["pairwise_sqdist", "gemm"]
    assert rows[0]["note"] == "failed: ModuleNotFoundError: No module named 'scipy'"
    assert rows[0]["reference"] is None and rows[0]["ours_tflops"] is None
    assert warnings == ["pairwise_sqdist n=8: failed: ModuleNotFoundError: No module named 'scipy'"]
    assert rows[1]["ours_tflops"] > 0


def test_a_wrong_kernel_is_flagged_in_the_row_and_a_warning(gpu_path_on_cpu, monkeypatch):
    wrong = lambda a, b: (1.05 * (a.float() @ b.float())).to(a.dtype)  # noqa: E731
    monkeypatch.setattr(gemm_bf16, "gemm", wrong)
    config = bench.GpuBenchConfig(ops=("gemm",), sizes=("64",), repeats=1, warmup=0)
    warnings = []
    (row,) = bench.run_gpu(config, warnings.append)
    assert row["within_tolerance"] is False and row["ours_tflops"] > 0
    assert [c["name"] for c in row["checks"]] == ["C"] and row["error_ratio"] > 1
    assert warnings == [
        f"gemm M=64 N=64 K=64: gemm_bf16 is outside its tolerance (C error "
        f"{row['max_abs_err']:.3g} is {row['error_ratio']:.3g}x its bound)"
    ]


def test_a_wrong_log_sum_exp_is_caught_even_when_the_output_is_right(gpu_path_on_cpu, monkeypatch):
    right = attention_fwd.attention_forward

    def off_lse(q, k, v, causal=False, return_lse=False):
        out = right(q, k, v, causal=causal, return_lse=return_lse)
        return (out[0], out[1] + 0.01) if return_lse else out

    monkeypatch.setattr(attention_fwd, "attention_forward", off_lse)
    config = bench.GpuBenchConfig(
        ops=("attention",), sizes=("64",),
        options=ops.OpOptions(head_dim=64, batch=1, heads=2), repeats=1, warmup=0,
    )  # fmt: skip
    warnings = []
    rows = bench.run_gpu(config, warnings.append)
    checks = {c["name"]: c for c in rows[0]["checks"]}
    assert checks["O"]["ok"] and not checks["LSE"]["ok"]
    assert all(r["within_tolerance"] is False for r in rows)
    assert len(warnings) == 1 and "LSE error 0.01" in warnings[0]


def test_a_fallback_names_the_kernel_that_ran_and_warns(gpu_path_on_cpu, monkeypatch):
    """The dispatcher passed over the Hopper kernels: the row and the JSON say which
    kernel really ran, and the reason is a warning (not a silent slowdown)."""
    why = "gemm_hopper: failed its self-check on this GPU (SelfCheckFailed: 3 elements off)"
    plan = gemm_bf16.GemmPlan("gemm_bf16", why, (("gemm_hopper", "3 elements off"),))
    monkeypatch.setattr(gemm_bf16, "gemm_plan", lambda a, b: plan)
    config = bench.GpuBenchConfig(ops=("gemm",), sizes=("64",), repeats=1, warmup=0)
    warnings = []
    (row,) = bench.run_gpu(config, warnings.append)
    assert row["kernel"] == "gemm_bf16" and row["fallback"] == why
    assert warnings == [f"gemm M=64 N=64 K=64: ran gemm_bf16, not a faster kernel: {why}"]


def test_attention_backward_rows_check_every_gradient(gpu_path_on_cpu, monkeypatch):
    """GQA (4 query heads on 2 kv heads), causal: ours checked on dQ, dK and dV against the
    closed form at our forward's O; SDPA backends this machine lacks are reported."""
    from iclr25.gpu.kernels import attention_bwd

    def stand_in(q, k, v, o, lse, grad_out, causal=False, scale=None):
        grads = attention_bwd.attention_backward_reference(q, k, v, grad_out, causal, o=o)
        return tuple(g.to(q.dtype) for g in grads)

    monkeypatch.setattr(attention_bwd, "attention_backward", stand_in)
    config = bench.GpuBenchConfig(
        ops=("attention-backward",), sizes=("64",),
        options=ops.OpOptions(head_dim=64, batch=1, heads=4, kv_heads=2, causal=True),
        repeats=1, warmup=0,
    )  # fmt: skip
    warnings = []
    rows = bench.run_gpu(config, warnings.append)
    assert {r["reference"] for r in rows} >= {"SDPA flash", "SDPA efficient"}
    for row in rows:
        assert row["shape"] == "B=1 H=4 Hkv=2 N=64 D=64 causal" and row["kernel"] == "attention_bwd"
        assert [c["name"] for c in row["checks"]] == ["dQ", "dK", "dV"]
        assert row["within_tolerance"] is True and row["ours_tflops"] > 0
    assert warnings == []


def test_based_rows_run_the_linear_attention_kernel_path(gpu_path_on_cpu):
    config = bench.GpuBenchConfig(
        ops=("based",), sizes=("96",), options=ops.OpOptions(batch=1, heads=2),
        repeats=2, warmup=1,
    )  # fmt: skip
    warnings = []
    rows = bench.run_gpu(config, warnings.append)
    by_ref = {r["reference"]: r for r in rows}
    assert set(by_ref) == {"PyTorch chunked", "flash-linear-attention"} and warnings == []
    row = by_ref["PyTorch chunked"]
    assert row["shape"] == "B=1 H=2 N=96 d'=16 Dv=64" and row["kernel"] == "linear_attention"
    assert row["within_tolerance"] is True and row["ratio"] > 0
    assert [c["name"] for c in row["checks"]] == ["O"]
    assert "unavailable" in by_ref["flash-linear-attention"]["note"]  # not installed here


def test_a_wrong_based_path_is_flagged(gpu_path_on_cpu, monkeypatch):
    """A block-sum bug (one feature block dropped) must land outside the tolerance."""
    right = linear_attention.linear_attention

    def drop_last_block(q, k, v, s=None):
        out = right(q, k, v, s)
        out[:, 2::3] = 0  # block 3 of every head (the quadratic features' tail)
        return out

    monkeypatch.setattr(linear_attention, "linear_attention", drop_last_block)
    config = bench.GpuBenchConfig(
        ops=("based",), sizes=("64",), options=ops.OpOptions(batch=1, heads=2),
        repeats=1, warmup=0,
    )  # fmt: skip
    warnings = []
    rows = bench.run_gpu(config, warnings.append)
    assert all(r["within_tolerance"] is False for r in rows) and len(warnings) == 1

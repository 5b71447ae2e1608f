"""The op registry (names, sizes, cases, memory estimates) and --save / --baseline."""

from __future__ import annotations

import json

import pytest

from iclr25.core.gpu_bench import baseline, ops
from iclr25.errors import InputError, UsageError


def test_registry_lists_first_class_ops_and_uncovered_hot_paths():
    names = ops.all_ops()
    assert names[:4] == ["gemm", "attention", "attention-backward", "linear-attention"]
    assert "pairwise_sqdist" in names  # another command's hot path
    for covered in ops.COVERED_KERNELS:  # measured by the first-class ops instead
        assert covered not in names


def test_gqa_cases_name_the_kv_heads_and_refuse_non_divisors():
    opts = ops.OpOptions(batch=2, heads=16, kv_heads=4)
    (case,) = ops.attention_cases("1024", opts, "cuda")
    assert case.shape == "B=2 H=16 Hkv=4 N=1024 D=128"
    (plain,) = ops.attention_cases("1024", ops.OpOptions(batch=2, heads=16), "cuda")
    assert case.set_bytes < plain.set_bytes  # k and v have a quarter of the heads
    (bwd,) = ops.attention_backward_cases("1024", opts, "cuda")
    assert bwd.op == "attention-backward" and bwd.flops == 2.5 * case.flops
    with pytest.raises(UsageError, match="does not divide"):
        ops.attention_cases("1024", ops.OpOptions(heads=16, kv_heads=3), "cuda")


def test_unknown_op_lists_the_valid_ones():
    with pytest.raises(UsageError) as err:
        ops.resolve_ops(["gemm", "flash-fft"])
    assert "flash-fft" in err.value.what
    assert "linear-attention" in err.value.fix and "pairwise_sqdist" in err.value.fix
    assert ops.resolve_ops(["gemm", "gemm"]) == ["gemm"]


@pytest.mark.parametrize(
    ("token", "dims"), [("4096", (4096, 4096, 4096)), ("2048x4096x1024", (2048, 4096, 1024))]
)
def test_gemm_sizes(token, dims):
    assert ops.parse_gemm_size(token) == dims


@pytest.mark.parametrize("token", ["4096x4096", "abc", "0", "16x0x16", "-5"])
def test_bad_sizes_are_usage_errors(token):
    with pytest.raises(UsageError):
        ops.parse_gemm_size(token)
    if "x" not in token:
        with pytest.raises(UsageError, match="not a sequence length"):
            ops.parse_length("attention", token)


def test_gpu_cases_follow_the_conventions():
    opts = ops.OpOptions(head_dim=128)
    (attn,) = ops.attention_cases("4096", opts, "cuda")
    assert attn.shape == "B=4 H=16 N=4096 D=128"  # 16k tokens per batch, H = 2048 / D
    assert attn.flops == 4 * 4 * 16 * 4096**2 * 128
    assert attn.set_bytes == 3 * 4 * 16 * 4096 * 128 * 2  # q, k, v in bf16
    (causal,) = ops.attention_cases("1024", ops.OpOptions(causal=True, head_dim=64), "cuda")
    assert causal.shape == "B=16 H=32 N=1024 D=64 causal"
    lin = ops.linear_cases("4096", opts, "cuda")
    assert [c.shape for c in lin] == [
        "B=8 H=16 N=4096 D=128 decay=no",
        "B=8 H=16 N=4096 D=128 decay=yes",
    ]
    assert len(ops.linear_cases("512", ops.OpOptions(decay="yes"), "cpu")) == 1
    (gemm,) = ops.gemm_cases("8192", opts, "cuda")
    assert (gemm.kernel, gemm.set_bytes) == ("gemm_bf16", 2 * 8192 * 8192 * 2)


def test_cpu_cases_run_in_fp32_without_our_kernels():
    cases = ops.expand_cases(ops.all_ops(), None, ops.OpOptions(quick=True), "cpu")
    assert {c.op for c in cases} == set(ops.FIRST_CLASS)  # no hot paths
    assert all(c.dtype == "fp32" and c.kernel is None for c in cases)


def test_batch_times_heads_beyond_the_grid_limit_is_refused_up_front():
    # attention N=4, D=128 on a GPU: B = 16384 / 4 = 4096, H = 2048 / 128 = 16 -> 65536 > 65535
    with pytest.raises(UsageError, match=r"4096 x 16 = 65536 exceeds") as err:
        ops.expand_cases(["attention"], ["4"], ops.OpOptions(), "cuda")
    assert "--batch" in err.value.fix
    (case,) = ops.expand_cases(["attention"], ["8"], ops.OpOptions(), "cuda")  # 32768: fine
    assert case.shape.startswith("B=2048 H=16")
    with pytest.raises(UsageError, match="linear-attention"):
        ops.expand_cases(["linear-attention"], ["64"], ops.OpOptions(batch=4096), "cuda")
    assert ops.expand_cases(["attention"], ["4"], ops.OpOptions(batch=65536), "cpu")  # no grid


def test_sizes_do_not_apply_to_hot_paths():
    with pytest.raises(UsageError, match="--sizes does not apply"):
        ops.expand_cases(["pairwise_sqdist"], ["100"], ops.OpOptions(), "cuda")
    with pytest.raises(UsageError, match="--sizes does not apply"):  # also on a CPU dry run
        ops.expand_cases(["gemm", "pairwise_sqdist"], ["100"], ops.OpOptions(), "cpu")


# --- baseline ---------------------------------------------------------------------------
def _row(op="gemm", shape="M=1 N=1 K=1", ours=None, ref=2.0):
    return {"op": op, "shape": shape, "dtype": "bf16", "reference": "cuBLAS",
            "ours_tflops": ours, "reference_tflops": ref}  # fmt: skip


def test_save_and_load_round_trip_and_refuse_overwrite(tmp_path):
    path = tmp_path / "table.json"
    baseline.save(
        path, [_row(ours=5.0)], [{"name": "k", "arch": "sm_80", "ok": True}], "H200", False
    )
    loaded = baseline.load(path)
    assert loaded["device"] == "H200" and loaded["rows"][0]["ours_tflops"] == 5.0
    with pytest.raises(InputError, match="exists"):
        baseline.save(path, [], [], None, overwrite=False)
    baseline.save(path, [], [], None, overwrite=True)
    assert baseline.load(path)["rows"] == []


def test_load_accepts_a_json_document(tmp_path):
    doc = {"command": "gpu-bench", "results": [_row(ours=1.0)],
           "environment": {"device": {"name": "NVIDIA H200"}}}  # fmt: skip
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    assert baseline.load(tmp_path / "doc.json")["device"] == "NVIDIA H200"
    cpu_doc = {"command": "gpu-bench", "results": {"kernels": [{"name": "k"}], "cpu_reference": []}}
    (tmp_path / "cpu.json").write_text(json.dumps(cpu_doc))
    assert baseline.load(tmp_path / "cpu.json")["kernels"] == [{"name": "k"}]


@pytest.mark.parametrize("content", [None, "not json", json.dumps({"command": "info"})])
def test_load_rejects_missing_or_foreign_files(tmp_path, content):
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError):
        baseline.load(path)


def test_compare_rows_flags_slowdowns_beyond_the_tolerance():
    old = [
        _row(shape="a", ours=100.0),
        _row(shape="b", ours=100.0),
        _row(shape="c", ours=None, ref=4.0),
    ]
    new = [
        _row(shape="a", ours=96.0),
        _row(shape="b", ours=90.0),
        _row(shape="c", ours=None, ref=3.0),
        _row(shape="d", ours=1.0),
    ]
    messages = baseline.compare_rows(new, old, tolerance=0.05)
    assert [r["regression"] for r in new] == [False, True, True, False]
    assert new[1]["change"] == pytest.approx(-0.10)
    assert new[2]["baseline_tflops"] == 4.0  # CPU rows compare the reference figure
    assert new[3]["baseline_tflops"] is None and new[3]["change"] is None
    assert len(messages) == 2 and "10.0% below" in messages[0]


def test_compare_kernels_flags_new_failures_and_more_spills():
    old = [{"name": "a", "arch": "sm_80", "ok": True, "spills": 0},
           {"name": "b", "arch": "sm_80", "ok": True, "spills": 0},
           {"name": "c", "arch": "sm_80", "ok": True, "spills": 8}]  # fmt: skip
    new = [{"name": "a", "arch": "sm_80", "ok": False, "spills": None},
           {"name": "b", "arch": "sm_80", "ok": True, "spills": 16},
           {"name": "c", "arch": "sm_80", "ok": True, "spills": 8}]  # fmt: skip
    messages = baseline.compare_kernels(new, old)
    assert [k["regression"] for k in new] == [True, True, False]
    assert len(messages) == 2


def test_the_fla_reference_gets_its_native_layout_and_returns_ours(monkeypatch):
    """flash-linear-attention takes and returns (B, T, H, D); the reference hands it
    contiguous copies (made once, untimed) and gives back (B, H, T, D) like every output."""
    import sys
    import types

    import torch

    from iclr25.core.gpu_bench import builders

    seen = []

    def chunk_linear_attn(q, k, v, scale, normalize):
        seen.append((q.shape, q.is_contiguous(), scale, normalize))
        return v * 2.0, None

    fla = types.ModuleType("fla")
    ops = types.ModuleType("fla.ops")
    lin = types.ModuleType("fla.ops.linear_attn")
    gla = types.ModuleType("fla.ops.simple_gla")
    lin.chunk_linear_attn, gla.chunk_simple_gla = chunk_linear_attn, None
    for name, module in {"fla": fla, "fla.ops": ops, "fla.ops.linear_attn": lin,
                         "fla.ops.simple_gla": gla}.items():  # fmt: skip
        monkeypatch.setitem(sys.modules, name, module)
    q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))  # (B, H, T, D)
    run = builders._fla_reference([(q, k, v)], None)
    out = run(0)
    assert seen == [((2, 5, 3, 4), True, 1.0, False)]
    torch.testing.assert_close(out, 2.0 * v)  # back in (B, H, T, D)
    run(0)
    assert len(seen) == 2  # the layout copies are made once per set, not per call

"""`iclr25 gpu-bench` through the real console script, on a machine without a CUDA device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr25.gpu import cuda_available
from iclr25.gpu.compile import nvcc_path
from iclr25.gpu.registry import all_kernels
from iclr25.testing import error_line

pytestmark = pytest.mark.skipif(cuda_available(), reason="checks the CPU-only behaviour")
TINY = ("--quick", "--sizes", "64", "--head-dim", "64", "--repeats", "2", "--warmup", "0")


@pytest.mark.slow
def test_bare_command_runs_without_arguments(cli):
    result = cli("gpu-bench", timeout=900)
    assert result.returncode == 0, result
    assert "kernel compile check" in result.stdout and "CPU references" in result.stdout


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_default_run_compiles_every_kernel_and_times_the_cpu_references(cli):
    ops = "gemm,attention,linear-attention,pairwise_sqdist"
    quick = ("--quick", "--head-dim", "64", "--repeats", "2", "--warmup", "0")  # CPU quick sizes
    result = cli("gpu-bench", "--json", *quick, "--ops", ops, timeout=900)
    assert result.returncode == 0, result
    doc = result.json()
    assert any("no CUDA device found" in w for w in doc["warnings"])
    res = doc["results"]
    assert res["device"] == "cpu"
    assert len(res["kernels"]) == 2 * len(all_kernels())
    for k in res["kernels"]:
        assert {"name", "arch", "ok", "registers", "spills", "seconds"} <= set(k)
        if nvcc_path() is not None and not k["skipped"]:
            assert k["ok"] and k["spills"] == 0 and k["registers"] > 0, k
    assert {r["op"] for r in res["cpu_reference"]} == {"gemm", "attention", "linear-attention"}
    assert all(r["reference_tflops"] > 0 and r["ours_tflops"] is None for r in res["cpu_reference"])
    assert "pairwise_sqdist" in res["gpu_only_ops"]
    assert "compile_s" in doc["timings"] and "bench_s" in doc["timings"]


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not on PATH")
@pytest.mark.slow  # > 10 s: compiles every kernel twice (tests/gpu/test_compile.py: cache)
def test_compile_only_is_served_from_the_cache_the_second_time(cli):
    first = cli("gpu-bench", "--compile-only", "--json", timeout=900)
    assert first.returncode == 0, first
    second = cli("gpu-bench", "--compile-only", "--json")
    kernels = second.json()["results"]["kernels"]
    assert list(second.json()["results"]) == ["kernels"]
    assert all(k["cached"] or k["skipped"] for k in kernels)
    strip = [{k: v for k, v in row.items() if k != "cached"} for row in kernels]
    assert strip == [
        {k: v for k, v in row.items() if k != "cached"}
        for row in first.json()["results"]["kernels"]
    ]


def test_no_compile_reports_the_cache_without_compiling(cli, tmp_path):
    result = cli("gpu-bench", "--no-compile", *TINY, "--ops", "gemm", "--json",
                 env={"ICLR25_CACHE_DIR": str(tmp_path)})  # fmt: skip
    assert result.returncode == 0, result
    res = result.json()["results"]
    applicable = [k for k in res["kernels"] if not k["skipped"]]
    assert all(k["ok"] is None and "not compiled yet" in k["reason"] for k in applicable)
    # a Hopper-only kernel on sm_80 is a skip with its reason, as in --compile-only
    skipped = [k for k in res["kernels"] if k["skipped"]]
    assert all(k["arch"] == "sm_80" and "Hopper" in k["reason"] for k in skipped)
    assert not (tmp_path / "compile").exists() or not list((tmp_path / "compile").iterdir())
    (row,) = res["cpu_reference"]
    assert row["shape"] == "M=64 N=64 K=64" and row["reference"] == "torch.matmul (fp32, CPU)"


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_out_holds_the_throughput_plot_and_degrades_without_matplotlib(cli, tmp_path):
    args = ("gpu-bench", "--no-compile", *TINY, "--ops", "gemm", "--json")
    result = cli(*args, "--out", tmp_path / "run")
    assert result.returncode == 0, result
    png = tmp_path / "run" / "throughput.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bare = Path(__file__).parents[1] / "gpu" / "bare_python"  # makes matplotlib unimportable
    env = {"PYTHONPATH": str(bare), "ICLR25_BLOCK_IMPORTS": "matplotlib"}
    result = cli(*args, "--out", tmp_path / "bare", env=env)
    assert result.returncode == 0, result
    assert any("no throughput.png" in w for w in result.json()["warnings"])
    assert (tmp_path / "bare" / "result.json").exists()
    assert not (tmp_path / "bare" / "throughput.png").exists()


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_save_then_compare_with_a_baseline(cli, tmp_path):
    table = tmp_path / "table.json"
    args = ("gpu-bench", "--no-compile", *TINY, "--ops", "gemm")
    first = cli(*args, "--save", table, "--quiet")
    assert first.returncode == 0, first
    saved = json.loads(table.read_text())
    assert saved["format"] == "iclr25-gpu-bench" and len(saved["rows"]) == 1
    again = cli(*args, "--save", table)
    assert again.returncode == 2 and "--overwrite" in again.stderr
    compared = cli(*args, "--baseline", table, "--tolerance", "0.99", "--json")
    assert compared.returncode == 0, compared
    rows = compared.json()["results"]["cpu_reference"]
    assert all(r["baseline_tflops"] > 0 and r["regression"] is False for r in rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ops", "gemm,fft-conv"), "linear-attention"),  # lists the valid ops
        (("--dtype", "fp8"), "bf16 or fp16"),
        (("--head-dim", "96"), "64 or 128"),
        (("--ops", "attention", "--sizes", "0"), "not a sequence length"),
        (("--ops", "gemm", "--sizes", "12x34"), "MxNxK"),
        (("--ops", "gemm,pairwise_sqdist", "--sizes", "64"), "--sizes does not apply"),
        (("--ops", "gemm", "--sizes", "300000"), "GiB of host memory"),
        (("--repeats", "0"), "--repeats"),
        (("--ops", "attention", "--heads", "16", "--kv-heads", "3"), "does not divide"),
        (("--gemm-layout", "xy"), "nn, nt"),
        (("--launches", "0"), "--launches"),
        (("--baseline", "/nonexistent/table.json"), "does not exist"),
        (("--device", "cuda"), "--device cpu"),
    ],
)
def test_bad_input_exits_2_with_a_fix(cli, args, message):
    result = cli("gpu-bench", "--no-compile", *args)
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith("Error: ") and message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_help_lists_the_json_keys(cli):
    result = cli("gpu-bench", "--help")
    assert result.returncode == 0
    for key in ("ours_tflops", "reference_tflops", "ratio", "max_abs_err", "kernels", "spills"):
        assert key in result.stdout


def _gpu_row(op, shape, reference, ref_tflops, note="", ok=True):
    ours = 330.0
    ratio = ours / ref_tflops if ref_tflops else None
    return {"op": op, "shape": shape, "reference": reference, "ours_tflops": ours,
            "reference_tflops": ref_tflops, "ratio": ratio, "pct_of_peak": 33.4,
            "max_abs_err": 0.0123, "within_tolerance": ok, "note": note}  # fmt: skip


def test_gpu_table_fits_100_columns_with_notes_as_footnotes():
    from rich.console import Console

    from iclr25.commands.gpu_bench import _render

    why = "unavailable: ModuleNotFoundError: No module named 'fla'"
    rows = [
        _gpu_row("attention", "B=4 H=16 N=4096 D=128", "SDPA flash", 520.0),
        _gpu_row("attention", "B=4 H=16 N=4096 D=128", "SDPA efficient", 380.0),
        _gpu_row("linear-attention", "B=8 H=16 N=4096 D=128 decay=yes", "PyTorch chunked", 40.0,
                 ok=False),
        _gpu_row("linear-attention", "B=8 H=16 N=4096 D=128 decay=yes",
                 "flash-linear-attention", None, note=why),
    ]  # fmt: skip
    console = Console(width=100, record=True)
    _render(console, rows)
    text = console.export_text()
    table, _, footnotes = text.partition("└")
    assert max(len(line) for line in table.splitlines()) <= 100
    assert table.count("attention B=4") == 1  # the case is named once
    assert "0.635" in table and "(!)" in table  # ratio 330 / 520; the row outside tolerance
    assert "[1]" in table and "[1] linear-attention B=8 H=16 N=4096 D=128 decay=yes" in footnotes
    assert why in footnotes


def test_headline_counts_only_the_builds_that_apply():
    """A Hopper-only kernel skipped on sm_80 is neither a success nor a failure."""
    from iclr25.commands.gpu_bench import _headline

    kernels = [
        {"name": "gemm_bf16", "arch": "sm_80", "ok": True, "skipped": False},
        {"name": "gemm_wgmma", "arch": "sm_80", "ok": True, "skipped": True},
        {"name": "gemm_wgmma", "arch": "sm_90a", "ok": False, "skipped": False},
    ]
    assert _headline({"results": {"kernels": kernels}}) == "1/2 kernel builds cached ok"

"""scripts/gpu-check.sh and its report on a bare machine (no GPU needed).

The lent GPU machines have torch, transformers, cupy, typer and rich but not necessarily
pytest plugins, hypothesis, scipy, scikit-learn, pyarrow or matplotlib, and no network.
``bare_python/sitecustomize.py`` makes such packages unimportable in a subprocess, so the
script's graceful degradation is checked here: GPU test files still collect, the report
prints whatever was measured, and the target verdicts come from the rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iclr25.gpu.compile import nvcc_path

ROOT = Path(__file__).resolve().parents[2]
BARE = Path(__file__).with_name("bare_python")
MISSING = (
    "hypothesis,_hypothesis_pytestplugin,pytest_timeout,pytest_benchmark,scipy,sklearn,"
    "pyarrow,matplotlib,pandas,cvxpy,PIL"
)


def bare_env(**extra) -> dict:
    env = {**os.environ, "ICLR25_BLOCK_IMPORTS": MISSING, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(BARE), str(ROOT)])
    return {**env, **extra}


def test_the_blocker_really_hides_packages():
    code = "import hypothesis"
    proc = subprocess.run([sys.executable, "-c", code], env=bare_env(), capture_output=True)
    assert proc.returncode != 0 and b"No module named 'hypothesis'" in proc.stderr


def test_gpu_tests_collect_without_hypothesis_and_pytest_plugins():
    files = ["tests/gpu/test_gemm_bf16.py", "tests/gpu/test_attention_fwd.py"]
    files += ["tests/gpu/test_linear_attention.py"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "gpu", "-p",
         "no:cacheprovider", *files],
        cwd=ROOT, env=bare_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    collected = [line for line in proc.stdout.splitlines() if "::test_kernel" in line]
    assert len(collected) >= 3 * 20  # every kernel's GPU comparison is there


def _row(op, shape, reference, ratio, ok=True, kernel="k", ref_ms=1.0):
    return {
        "op": op, "shape": shape, "dtype": "bf16", "kernel": kernel, "fallback": "",
        "ours_tflops": 1.0, "ours_ms": ref_ms / ratio, "reference": reference,
        "reference_tflops": 1.0 / ratio, "reference_ms": ref_ms, "ratio": ratio,
        "peak_tflops": 989.4, "pct_of_peak": 0.1, "max_abs_err": 0.01, "error_ratio": 0.2,
        "checks": [], "reference_max_abs_err": 0.0, "within_tolerance": ok, "sets": 2,
        "launches": 10, "repeats": 20, "note": "",
    }  # fmt: skip


def test_report_prints_tables_kernels_and_one_line_per_goal(tmp_path):
    rows = [
        _row("gemm", "M=4096 N=4096 K=4096", "cuBLAS (torch.matmul)", 0.96, kernel="gemm_hopper"),
        _row("attention", "B=4 H=16 N=4096 D=128", "SDPA flash", 1.3, ref_ms=2.0),
        _row("attention", "B=4 H=16 N=4096 D=128", "SDPA cudnn", 0.8, ref_ms=1.0),
        _row("linear-attention", "B=8 H=16 N=4096 D=128 decay=no", "PyTorch chunked", 9.0, False),
    ]
    rows[0]["fallback"] = ""
    doc = {"command": "gpu-bench", "results": rows, "warnings": ["w1"],
           "environment": {"device": {"name": "NVIDIA H200"}}}  # fmt: skip
    path = tmp_path / "kernels.json"
    path.write_text(json.dumps(doc))
    verdict = tmp_path / "selfcheck.json"
    verdict.write_text(json.dumps({"kernel": "gemm_hopper", "ok": False, "reason": "timed out"}))
    proc = subprocess.run(
        [sys.executable, "scripts/gpu_check_report.py", str(verdict), str(path),
         str(tmp_path / "absent.json")],
        cwd=ROOT, env=bare_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "self-check gemm_hopper: FAILED: timed out" in out
    assert "device NVIDIA H200" in out and "warning: w1" in out
    assert "absent.json: no results (FileNotFoundError" in out
    assert "SDPA cudnn" in out  # the table
    assert "2/3 measured cases within tolerance" in out and "OUTSIDE: linear-attention" in out
    assert "gemm M=4096 N=4096 K=4096: gemm_hopper" in out  # the kernel that ran
    assert (
        "gemm M=4096 N=4096 K=4096 vs cuBLAS (torch.matmul): 0.960 (target >= 0.95) met"
        " (kernel gemm_hopper)" in out
    )
    assert (  # against the fastest backend of the run, cuDNN here
        "attention B=4 H=16 N=4096 D=128 vs the fastest SDPA backend: 0.800 (target >= 0.9) "
        "not met (fastest: SDPA cudnn; kernel k)" in out
    )
    assert "vs PyTorch chunked: 9.000 (target >= 5) not met (outside its error bound)" in out
    assert (
        "gemm M=8192 N=8192 K=8192 vs cuBLAS (torch.matmul): — (target >= 0.95) not measured" in out
    )


def test_report_reads_the_benchmark_result_file(tmp_path):
    rows = [_row("gemm", "M=1024 N=1024 K=1024", "cuBLAS (torch.matmul)", 0.5)]
    doc = {"schema": "iclr25-benchmark/1", "name": "gpu-bench", "figures": {"rows": rows}}
    path = tmp_path / "gpu-bench.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run(
        [sys.executable, "scripts/gpu_check_report.py", str(path)],
        cwd=ROOT, env=bare_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        "M=1024 N=1024 K=1024 vs cuBLAS (torch.matmul): 0.500 (target >= 0.85) not met"
        in proc.stdout
    )


def test_report_exits_1_when_nothing_was_measured(tmp_path):
    proc = subprocess.run(
        [sys.executable, "scripts/gpu_check_report.py", str(tmp_path / "none.json")],
        cwd=ROOT, env=bare_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1 and "not measured" in proc.stdout


@pytest.mark.slow
@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not on PATH")
def test_whole_script_on_a_bare_cpu_machine(tmp_path):
    """A few minutes: every step runs or says why not, and the report comes out (the
    benchmark writes its CPU result into benchmarks/results, so the file is restored)."""
    out = tmp_path / "check"
    result = ROOT / "benchmarks" / "results" / "gpu-bench.json"
    saved = result.read_bytes() if result.exists() else None
    try:
        proc = subprocess.run(
            ["bash", "scripts/gpu-check.sh", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=1500,
            env=bare_env(PYTHON=sys.executable, ICLR25_CACHE_DIR=str(tmp_path / "cache"),
                         GPU_CHECK_LIMITS="60 300 600 60"),
        )  # fmt: skip
    finally:
        if saved is not None:
            result.write_bytes(saved)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout
    assert "hypothesis is not installed" in text and "pytest exit" in text
    assert "self-check gemm_hopper" in text and "benchmark exit 0" in text
    assert json.loads((out / "gpu-bench.json").read_text())["name"] == "gpu-bench"
    assert "(target >= 0.95) not measured" in text
    assert "gpu-check done in" in text

"""gpu-bench: our kernels against cuBLAS, the fastest SDPA backend and flash-linear-attention.

The targets are the goals of :mod:`iclr25.core.gpu_bench.goals` (issue 21), ratios measured
in one run on an H100/H200-class GPU. On a GPU this benchmark runs the **public CLI**
(``python -m iclr25 gpu-bench --json``) once per group of cases, so the figures are the
ones a user gets: every row timed by gpu-bench's one method (interleaved samples of
back-to-back launches over rotated inputs larger than L2, CUDA events, the same repeats and
statistic for ours and every vendor baseline, through :mod:`iclr25.timing`) and checked
against the fp32 reference; the rows and the CLI's warnings go into ``figures``.

Both record the nvcc compile check of every kernel for sm_80 and sm_90a (registers,
spills) in ``figures.kernels``. Without a GPU the targets are recorded as not measured
("blocked: needs a GPU"), and the CPU references are compared instead (through
``report.time``, no target): torch SDPA against the naive softmax(QK^T)V, and the
chunked linear attention against the quadratic definition.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from benchmarks.harness import Report, Target
from iclr25.core.gpu_bench.goals import GOALS, judge

NAME = "gpu-bench"
TARGETS = {g.name: Target(">=", g.target, g.why) for g in GOALS}

#: (what, CLI arguments) per gpu-bench invocation of a full run
FULL_RUNS = (
    ("gemm", ("--ops", "gemm", "--sizes", "1024,4000,4096,4096x4224x4096,8192")),
    ("gemm x @ W.T", ("--ops", "gemm", "--sizes", "4096", "--gemm-layout", "nt")),
    ("attention", ("--ops", "attention", "--sizes", "4096,8192", "--head-dim", "128")),
    ("attention causal", ("--ops", "attention", "--sizes", "4096", "--causal")),
    ("attention GQA", ("--ops", "attention", "--sizes", "4096", "--kv-heads", "4")),
    ("attention backward", ("--ops", "attention-backward", "--sizes", "4096")),
    ("linear attention", ("--ops", "linear-attention", "--sizes", "4096", "--decay", "both")),
    ("based", ("--ops", "based", "--sizes", "4096")),
)
QUICK_RUNS = (
    ("gemm", ("--ops", "gemm", "--sizes", "4096,4000")),
    ("attention", ("--ops", "attention", "--sizes", "4096")),
    ("attention backward", ("--ops", "attention-backward", "--sizes", "4096")),
    ("linear attention", ("--ops", "linear-attention", "--sizes", "4096", "--decay", "no")),
    ("based", ("--ops", "based", "--sizes", "4096")),
)
NO_GPU = "blocked: needs a GPU (no CUDA device in this environment)"


def run_cli(args: tuple[str, ...], repeats: int, timeout_s: float = 900) -> dict:
    """``python -m iclr25 gpu-bench --json ARGS``: the JSON document (or the failure)."""
    cmd = [sys.executable, "-m", "iclr25", "gpu-bench", "--json", "--repeats", str(repeats)]
    cmd += ["--warmup", "3", *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout_s, env=os.environ
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"timed out after {timeout_s:.0f} s", "argv": cmd}
    if proc.returncode != 0:
        return {
            "failed": proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"],
            "argv": cmd,
        }
    return {**json.loads(proc.stdout), "argv": cmd}


def _gpu(report: Report) -> None:
    rows, runs = [], {}
    for what, args in QUICK_RUNS if report.quick else FULL_RUNS:
        doc = run_cli(args, repeats=10 if report.quick else 20)
        runs[what] = {k: doc.get(k) for k in ("argv", "failed", "warnings", "environment")}
        if isinstance(doc.get("results"), list):
            rows += doc["results"]
    report.figure("rows", rows)
    report.figure("runs", runs)
    for goal in GOALS:
        outcome = judge(goal, rows)
        report.check(goal.name, outcome.ratio, note=outcome.note)


def _cpu(report: Report) -> None:
    import torch

    from iclr25.core.gpu_bench import builders

    n = 512 if report.quick else 1024
    attn = builders.build_attention_cpu(1, 4, 4, n, 64, False, sets=4, seed=0)
    sides = {name: [lambda i=i, f=f: f(i) for i in range(4)] for name, f in attn.references.items()}
    timed = report.time(f"cpu attention N={n}", sides)
    report.figure(
        "cpu_sdpa_speedup_over_naive_attention",
        timed.ratio("softmax(QK^T)V (fp32, CPU)", "torch SDPA (fp32, CPU)"),
    )
    lin = builders.build_linear_cpu(1, 4, n, 64, False, sets=4, seed=0)
    sides = {name: [lambda i=i, f=f: f(i) for i in range(4)] for name, f in lin.references.items()}
    timed = report.time(f"cpu linear attention N={n}", sides)
    report.figure(
        "cpu_chunked_speedup_over_quadratic_linear_attention",
        timed.ratio("quadratic definition (fp32, CPU)", "PyTorch chunked (fp32, CPU)"),
    )
    report.figure("torch_threads", torch.get_num_threads())
    for goal in GOALS:
        report.check(goal.name, None, note=NO_GPU)


def run(report: Report) -> None:
    from iclr25.core.gpu_bench.bench import compile_report
    from iclr25.gpu import cuda_available, get_cupy

    report.figure("kernels", compile_report(no_compile=False))  # nvcc -Xptxas -v, sm_80/sm_90a
    if cuda_available() and get_cupy() is not None:
        _gpu(report)
    else:
        _cpu(report)

"""One run, on the CPU: reference timings, error statistics, memory planning, device checks,
and the compile report (from the cache, without compiling)."""

from __future__ import annotations

import pytest

from iclr25.core.gpu_bench import bench, ops
from iclr25.errors import InputError, UsageError


def _config(**kw):
    options = ops.OpOptions(quick=True, head_dim=64, **kw.pop("options", {}))
    return bench.GpuBenchConfig(options=options, repeats=2, warmup=0, **kw)


def test_cpu_reference_run_times_every_reference_and_measures_its_error():
    config = _config(ops=("gemm", "attention", "linear-attention"),
                     sizes=("64",), options={"decay": "yes"})  # fmt: skip
    progress = []
    rows, gpu_only = bench.run_cpu_reference(config, lambda n, **kw: progress.append(kw["case"]))
    assert gpu_only == []
    assert len(progress) == 3
    # hot-path ops have no CPU reference: listed as needing a GPU (and take no --sizes)
    hot_rows, hot_only = bench.run_cpu_reference(_config(ops=("pairwise_sqdist",)))
    assert hot_rows == [] and hot_only == ["pairwise_sqdist"]
    refs = {(r["op"], r["reference"]) for r in rows}
    assert refs == {
        ("gemm", "torch.matmul (fp32, CPU)"),
        ("attention", "torch SDPA (fp32, CPU)"),
        ("attention", "softmax(QK^T)V (fp32, CPU)"),
        ("linear-attention", "PyTorch chunked (fp32, CPU)"),
        ("linear-attention", "quadratic definition (fp32, CPU)"),
    }
    for row in rows:
        assert row["ours_tflops"] is None and row["ratio"] is None and row["kernel"] is None
        assert row["reference_tflops"] > 0 and row["reference_ms"] > 0
        # fp32 references against the fp64 definition: small but not zero
        assert 0 < row["reference_max_abs_err"] < 1e-3, row
        assert row["sets"] >= 2


def test_every_side_is_timed_by_one_method_with_the_same_launches_and_repeats(monkeypatch):
    """Ours and every reference: interleaved rounds, each sample one clock interval around
    ``launches`` back-to-back calls that walk through the rotated input sets."""
    calls: list[tuple[str, int]] = []

    class CountingClock:
        def __init__(self):
            self.now = 0.0

        def mark(self):
            return len(calls)  # calls made so far: a sample's "duration" is its call count

        def elapsed_s(self, start, end):
            return float(end - start)

        def synchronize(self):
            pass

    sides = {name: (lambda i, name=name: calls.append((name, i))) for name in ("ours", "ref")}
    timing = bench.harness.TimingConfig(warmup=1, repeats=4)
    seconds = bench.time_sides(sides, sets=3, launches=5, timing=timing, clock=CountingClock())
    assert seconds == {"ours": 1.0, "ref": 1.0}  # 5 calls per sample / 5 launches
    for name in ("ours", "ref"):
        used = [i for n, i in calls if n == name]
        assert len(used) == 5 * (1 + 4)  # warm-up round + 4 timed rounds, 5 launches each
        assert used == [k % 3 for k in range(len(used))]  # consecutive calls rotate the sets
    # interleaved: the sides alternate sample by sample (order rotated every round)
    order = [n for k, (n, _) in enumerate(calls) if k % 5 == 0]
    assert order[:6] == ["ours", "ref", "ours", "ref", "ref", "ours"]  # warm-up, rounds 0, 1


def test_oversized_cases_say_how_much_memory_they_need():
    facts = bench.DeviceFacts("cuda", "X", (9, 0), free_bytes=8 * bench.GIB, cache_bytes=50 * 2**20)
    (case,) = ops.gemm_cases("65536", ops.OpOptions(), "cuda")
    with pytest.raises(InputError) as err:
        bench.plan_sets(case, facts)
    assert "needs about" in err.value.what and "GiB of device memory" in err.value.what
    assert "--sizes" in err.value.fix
    (small,) = ops.gemm_cases("4096", ops.OpOptions(), "cuda")
    assert bench.plan_sets(small, facts) == 3  # 64 MiB of inputs vs a 50 MiB L2


def test_counting_cpu_cases_refuses_oversized_ones_before_any_compile(monkeypatch):
    monkeypatch.setattr(bench, "compile_report", lambda no_compile: pytest.fail("compiled"))
    config = bench.GpuBenchConfig(ops=("gemm",), sizes=("64", "300000"))
    with pytest.raises(InputError, match="M=300000 N=300000 K=300000 needs about"):
        bench.count_cases(config, "cpu")
    assert bench.count_cases(bench.GpuBenchConfig(ops=("gemm",), sizes=("64",)), "cpu") == 1


def test_device_support_refuses_bf16_below_sm80():
    with pytest.raises(UsageError, match="bf16 tensor cores need compute capability 8.0"):
        bench.check_device_support("bf16", (7, 5), ["gemm"])
    with pytest.raises(UsageError, match="need compute capability 8.0"):
        bench.check_device_support("fp16", (7, 0), ["attention"])
    bench.check_device_support("bf16", (7, 5), ["pairwise_sqdist"])  # hot paths only: fine
    bench.check_device_support("bf16", (8, 0), ["gemm"])


def test_sizes_without_ops_select_the_sized_ops():
    assert bench.requested_ops(_config(sizes=("128",))) == list(ops.FIRST_CLASS)
    assert "pairwise_sqdist" in bench.requested_ops(_config())


def test_timing_defaults_depend_on_the_device():
    config = bench.GpuBenchConfig(options=ops.OpOptions(quick=True))
    assert (config.timing("cuda").repeats, config.timing("cuda").warmup) == (10, 5)
    assert (config.timing("cpu").repeats, config.timing("cpu").warmup) == (5, 1)


def test_compile_report_without_compiling_reads_the_cache(monkeypatch, tmp_path):
    import subprocess

    from iclr25.gpu.compile import nvcc_version
    from iclr25.gpu.registry import all_kernels

    nvcc_version()  # asked once per process (cached); not a compile
    monkeypatch.setenv("ICLR25_CACHE_DIR", str(tmp_path))  # an empty cache

    def no_compiler(*args, **kwargs):
        raise AssertionError("--no-compile ran a compiler")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    rows = bench.compile_report(no_compile=True)
    assert len(rows) == 2 * len(all_kernels())
    for row in rows:
        assert set(row) >= {"name", "arch", "ok", "registers", "spills", "seconds"}
        assert row["skipped"] or row["ok"] is None  # nothing compiled in an empty cache


def test_goals_judge_against_the_fastest_sdpa_backend_and_never_pass_a_wrong_row():
    from iclr25.core.gpu_bench import goals

    def row(reference, ratio, ms, ok=True, op="attention", shape="B=4 H=16 N=4096 D=128"):
        return {"op": op, "shape": shape, "reference": reference, "ratio": ratio,
                "reference_ms": ms, "within_tolerance": ok, "kernel": "attention_hopper",
                "note": ""}  # fmt: skip

    rows = [
        row("SDPA flash", 1.2, 2.0),
        row("SDPA cudnn", 0.85, 1.5),
        row("SDPA efficient", 2.0, 3.0),
    ]
    (goal,) = [g for g in goals.GOALS if g.name == "attention_4096_d128_vs_fastest_sdpa"]
    outcome = goals.judge(goal, rows)
    assert (outcome.ratio, outcome.verdict) == (0.85, "not met")
    assert outcome.note.startswith("fastest: SDPA cudnn")
    rows[1]["ratio"] = 0.95
    assert goals.judge(goal, rows).verdict == "met"
    rows[1]["within_tolerance"] = False
    assert goals.judge(goal, rows).verdict == "not met"  # outside its bound: never met
    assert goals.judge(goal, []).verdict == "not measured"
    assert goals.headline([]) == "no GPU goal measured (needs a CUDA device)"
    assert goals.headline(rows) == "0/1 measured GPU goals met"

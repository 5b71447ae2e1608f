"""Compile-check every registered kernel with nvcc (no GPU needed), and the ptxas parser."""

from __future__ import annotations

import subprocess

import pytest

from iclr25.gpu import compile as gpu_compile
from iclr25.gpu.registry import DEFAULT_ARCHS, all_kernels

PTXAS_SAMPLE = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm_bf16' for 'sm_80'
ptxas info    : Function properties for gemm_bf16
    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 49152 bytes smem, 400 bytes cmem[0]
ptxas info    : Compiling entry function 'helper' for 'sm_80'
ptxas info    : Function properties for helper
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 380 bytes cmem[0]
"""


def test_parse_ptxas_known_sample():
    usages = {u.function: u for u in gpu_compile.parse_ptxas(PTXAS_SAMPLE)}
    assert set(usages) == {"gemm_bf16", "helper"}
    g = usages["gemm_bf16"]
    assert (g.registers, g.spill_stores_bytes, g.spill_loads_bytes, g.smem_bytes) == (
        168,
        8,
        12,
        49152,
    )
    assert usages["helper"].stack_bytes == 16 and usages["helper"].registers == 32


def test_every_kernel_has_source_and_reference():
    specs = all_kernels()
    assert specs, "no kernel registered"
    for spec in specs:
        assert spec.source_path().exists(), spec
        assert spec.source_path().with_name("reference.py").exists(), spec
        assert spec.read_source().strip()


@pytest.mark.skipif(gpu_compile.nvcc_path() is None, reason="nvcc not on PATH")
def test_compile_all_kernels_and_cache(monkeypatch):
    results = gpu_compile.compile_all(DEFAULT_ARCHS, use_cache=True)
    assert len(results) == len(all_kernels()) * len(DEFAULT_ARCHS)
    failures = [(r.name, r.arch, r.reason, r.log[-2000:]) for r in results if not r.ok]
    assert not failures, failures
    for r in results:
        if r.skipped:
            assert r.reason
            continue
        assert r.registers and r.registers > 0, r
        assert r.spills is not None
        assert r.functions
        # ptxas' C7514/C7515: wgmmas serialized (an in-flight accumulator read, a
        # conditional wait): the Hopper kernels must keep their products asynchronous
        assert "Potential Performance Loss" not in r.log, (r.name, r.arch, r.log[-600:])

    def no_compiler(*args, **kwargs):
        raise AssertionError("a cached kernel was compiled again")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    again = gpu_compile.compile_all(DEFAULT_ARCHS, use_cache=True)
    assert all(r.cached or r.skipped for r in again)
    assert [(r.name, r.arch, r.registers) for r in again] == [
        (r.name, r.arch, r.registers) for r in results
    ]


def test_skipped_arch_is_not_a_failure():
    spec = all_kernels()[0]
    result = gpu_compile.compile_kernel(spec, "sm_75")
    assert result.skipped and result.ok and result.reason


def test_hot_path_cases_are_well_formed():
    import importlib

    from iclr25.core.gpu_bench.ops import CORE_HOT_PATHS
    from iclr25.gpu.hotpath import HotPathCase

    for spec in all_kernels():
        module = importlib.import_module(CORE_HOT_PATHS.get(spec.name, spec.package))
        if not hasattr(module, "hot_path_cases"):
            continue
        for quick in (True, False):
            cases = module.hot_path_cases(quick)
            assert cases, spec.name
            for case in cases:
                assert isinstance(case, HotPathCase)
                assert case.op == spec.name and case.flops > 0 and callable(case.setup)


def test_distance_kernels_share_the_tile_of_sqdist_tile_header():
    """pairwise_sqdist, mmd and silhouette launch grids of the header's TILE."""
    import re

    from iclr25.gpu.kernels import mmd, pairwise_sqdist, silhouette
    from iclr25.gpu.registry import include_dir

    header = (include_dir() / "sqdist_tile.cuh").read_text()
    tile = int(re.search(r"constexpr int TILE = (\d+);", header).group(1))
    for module in (pairwise_sqdist, mmd, silhouette):
        assert module.TILE == tile, module.__name__
        assert '#include "sqdist_tile.cuh"' in module.SPEC.read_source()

"""How load_module hands kernels to CuPy, checked with a stand-in for CuPy (no GPU needed).

CuPy's RawModule appends ``-arch=sm_XY`` for the current device itself; a second
``--gpu-architecture`` in ``options`` is an NVRTC error in older releases (CuPy issue #3292)
and version-dependent in newer ones. Kernels that need an arch-specific target (sm_90a)
are built with nvcc into a cubin and loaded with ``RawModule(path=...)``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

import iclr25.gpu
from iclr25.gpu import loading, registry
from iclr25.gpu.compile import nvcc_path


class FakeCupy:
    def __init__(self, compute_capability: str):
        self.calls: list[dict] = []
        self.cuda = SimpleNamespace(
            Device=lambda: SimpleNamespace(compute_capability=compute_capability)
        )
        outer = self

        class RawModule:
            def __init__(self, **kwargs):
                outer.calls.append(kwargs)

        self.RawModule = RawModule


@pytest.fixture
def fake_cupy(monkeypatch):
    def install(cc: str, spec=None) -> FakeCupy:
        fake = FakeCupy(cc)
        monkeypatch.setattr(iclr25.gpu, "get_cupy", lambda: fake)
        if spec is not None:
            monkeypatch.setattr(loading, "get_kernel", lambda name: spec)
        loading.load_module.cache_clear()
        return fake

    yield install
    loading.load_module.cache_clear()


@pytest.mark.parametrize("cc", ["80", "86", "90"])
def test_nvrtc_path_passes_no_arch_option(fake_cupy, cc):
    fake = fake_cupy(cc)
    loading.load_module("gemm_bf16")
    (call,) = fake.calls
    assert "code" in call and "path" not in call
    assert not [o for o in call["options"] if o.startswith(("-arch", "--gpu-architecture"))]
    assert f"-I{registry.include_dir()}" in call["options"]
    assert "-std=c++17" in call["options"]


def test_device_arch_names_hopper_sm_90a():
    fake = FakeCupy("90")
    assert loading.device_arch(fake) == "sm_90a"
    assert loading.device_arch(FakeCupy("80")) == "sm_80"


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not on PATH")
def test_arch_specific_kernel_is_loaded_from_an_nvcc_cubin(fake_cupy):
    spec = replace(registry.get_kernel("pairwise_sqdist"), name="probe_sm90a", archs=("sm_90a",))
    fake = fake_cupy("90", spec)
    loading.load_module("probe_sm90a")
    (call,) = fake.calls
    cubin = Path(call["path"])
    assert cubin.suffix == ".cubin" and cubin.stat().st_size > 0
    assert "sm_90a" in cubin.name


def test_arch_specific_kernel_on_another_device_is_refused(fake_cupy):
    spec = replace(registry.get_kernel("pairwise_sqdist"), name="probe_sm90a", archs=("sm_90a",))
    fake_cupy("80", spec)
    with pytest.raises(RuntimeError, match="runs only on sm_90a, not sm_80"):
        loading.load_module("probe_sm90a")

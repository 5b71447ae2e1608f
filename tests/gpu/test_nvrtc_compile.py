"""Every kernel compiles under NVRTC with the options CuPy's RawModule uses (no GPU needed).

NVRTC is what CuPy compiles ``RawModule(code=...)`` with; it differs from nvcc (no implicit
toolkit headers, its own option parser). The test loads libnvrtc through ctypes and passes
``loading.nvrtc_options(spec)`` plus what CuPy appends (``-arch=sm_XY``,
``--device-as-default-execution-space``, ``-ftz=true``) — so no toolkit header is needed and
the 16-bit conversions and mma/ldmatrix/cp.async PTX are accepted. Skipped when no libnvrtc
is found (set ICLR25_NVRTC_LIB, or install the nvidia-cuda-nvrtc-cu12 wheel).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import site

import pytest

from iclr25.gpu.loading import needs_arch_specific_target, nvrtc_options
from iclr25.gpu.registry import all_kernels

NVRTC_SUCCESS = 0
CUPY_APPENDS = ("--device-as-default-execution-space", "-ftz=true")


def _find_nvrtc() -> str | None:
    if os.environ.get("ICLR25_NVRTC_LIB"):
        return os.environ["ICLR25_NVRTC_LIB"]
    for root in site.getsitepackages():
        hits = sorted(glob.glob(os.path.join(root, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*")))
        if hits:
            return hits[0]
    return ctypes.util.find_library("nvrtc")


LIB = _find_nvrtc()
pytestmark = pytest.mark.skipif(LIB is None, reason="libnvrtc not found (set ICLR25_NVRTC_LIB)")


def nvrtc_compile(source: str, options: tuple[str, ...]) -> tuple[int, str]:
    nvrtc = ctypes.CDLL(LIB)
    prog = ctypes.c_void_p()
    status = nvrtc.nvrtcCreateProgram(
        ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None
    )
    assert status == NVRTC_SUCCESS
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    status = nvrtc.nvrtcCompileProgram(prog, len(options), opts)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return status, log.value.decode(errors="replace")


@pytest.mark.parametrize("spec", [s for s in all_kernels() if not needs_arch_specific_target(s)],
                         ids=lambda s: s.name)  # fmt: skip
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernel_compiles_with_cupy_style_nvrtc_options(spec, arch):
    status, log = nvrtc_compile(
        spec.read_source(), (*nvrtc_options(spec), f"-arch={arch}", *CUPY_APPENDS)
    )
    assert status == NVRTC_SUCCESS, log

"""Hopper GEMM (TMA + wgmma): CPU checks of the wrapper's constants and guards; GPU checks of
the kernel against the fp32 reference and of gemm()'s dispatch (gpu-marked; the kernel
tests also need an sm_90 device and nvcc, and skip otherwise)."""

from __future__ import annotations

import re

import pytest
import torch

from iclr25.gpu import tensor_map
from iclr25.gpu.kernels import gemm_wgmma
from iclr25.gpu.kernels.gemm_bf16 import gemm, gemm_path, gemm_reference, gemm_tolerance
from iclr25.testing import assert_close


def test_python_constants_match_kernel_source():
    src = gemm_wgmma.SPEC.read_source()
    assert "__grid_constant__ TensorMap map_a" in src  # by value, not read from global memory
    found = dict(re.findall(r"\b(BM|BN|BK|THREADS)\s*=\s*(\d+)", src))
    assert {k: int(v) for k, v in found.items()} == {"BM": 128, "BN": 256, "BK": 64, "THREADS": 384}
    assert re.search(r"#define GEMM_STAGES (\d+)", src).group(1) == str(gemm_wgmma.STAGES)
    stages = gemm_wgmma.STAGES * (128 * 64 + 64 * 256) * 2
    assert stages + 1024 + 16 * gemm_wgmma.STAGES == gemm_wgmma.SMEM_BYTES <= 227 * 1024
    for fn in gemm_wgmma.FUNCTIONS.values():
        assert f"{fn}(" in src
    assert gemm_wgmma.SPEC.archs == ("sm_90a",)


def test_applies_is_false_off_the_gpu():
    a = torch.zeros(128, 64, dtype=torch.bfloat16)
    b = torch.zeros(64, 256, dtype=torch.bfloat16)
    assert gemm_wgmma.applies(a, b) == "inputs must be CUDA tensors of one dtype on one device"


def test_tensor_map_refuses_what_tma_cannot_describe_before_calling_the_driver():
    with pytest.raises(ValueError, match="row-major 2-D 16-bit"):
        tensor_map.encode_2d(torch.zeros(8, 8), 8, 8)  # float32
    with pytest.raises(ValueError, match="row-major 2-D 16-bit"):
        tensor_map.encode_2d(torch.zeros(8, 8, dtype=torch.bfloat16).t(), 8, 8)
    assert tensor_map.map_key(torch.zeros(8, 8, dtype=torch.bfloat16), 8, 8)[1:] == (
        (8, 8), (8, 1), torch.bfloat16, 8, 8,
    )  # fmt: skip


# --- GPU ----------------------------------------------------------------------------------
def _hopper_with_nvcc() -> bool:
    from iclr25.gpu import selfcheck

    if not (torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)):
        return False
    return selfcheck.verify("gemm_wgmma", torch.cuda.current_device()).ok


hopper = pytest.mark.skipif(
    "not _hopper_with_nvcc()", reason="needs an sm_90 GPU where gemm_wgmma passed its self-check"
)


def _inputs(m, n, k, dtype, seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=dtype, generator=gen)
    b = torch.randn(k, n, device="cuda", dtype=dtype, generator=gen)
    return a, b


@pytest.mark.gpu
@hopper
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    ("m", "n", "k"),
    [(128, 256, 64), (256, 512, 128), (384, 768, 320), (128, 256, 640), (1024, 2048, 4096)],
)
def test_kernel_matches_fp32_reference(m, n, k, dtype):
    """One tile, several tiles, k-tile counts below, at and above the 4-stage ring, and a
    long K (64 ring wraps: the mbarrier phases alternate many times)."""
    a, b = _inputs(m, n, k, dtype)
    got = gemm(a, b, kernel="wgmma")
    assert got.dtype == dtype and got.shape == (m, n)
    rtol, atol = gemm_tolerance(dtype, k)
    assert_close(got.float(), gemm_reference(a, b), rtol=rtol, atol=atol, what=f"{m}x{n}x{k}")


@pytest.mark.gpu
@hopper
def test_kernel_on_views_with_a_wider_leading_dimension():
    """TMA reads rows through the map's stride: views of wider matrices (lda = 136, ldb = 520)."""
    big_a, big_b = _inputs(256, 520, 136, torch.bfloat16, seed=4)
    a, b = big_a[:, :128], big_b[:128, :512]
    assert gemm_wgmma.applies(a, b)
    rtol, atol = gemm_tolerance(torch.bfloat16, 128)
    assert_close(gemm(a, b).float(), gemm_reference(a, b), rtol=rtol, atol=atol)


@pytest.mark.gpu
@hopper
def test_dispatch_takes_wgmma_only_where_the_tile_divides():
    a, b = _inputs(256, 512, 128, torch.bfloat16)
    assert gemm_path(a, b) in ("gemm_hopper", "gemm_wgmma")
    odd_a, odd_b = _inputs(200, 512, 128, torch.bfloat16)
    assert gemm_path(odd_a, odd_b) != "gemm_wgmma"
    with pytest.raises(ValueError, match="multiples of 128, 256, 64"):
        gemm(odd_a, odd_b, kernel="wgmma")
    # both kernels agree with each other where both apply
    rtol, atol = gemm_tolerance(torch.bfloat16, 128)
    ours = gemm(a, b, kernel="wgmma").float()
    assert_close(ours, gemm(a, b, kernel="mma.sync").float(), rtol=2 * rtol, atol=2 * atol)


@pytest.mark.gpu
@hopper
def test_tensor_maps_are_host_bytes_cached_per_tensor_geometry():
    a, b = _inputs(256, 256, 128, torch.bfloat16)
    first = tensor_map.param(a, 64, 128)
    assert tensor_map.param(a, 64, 128) is first and first.size == tensor_map.MAP_BYTES
    assert tensor_map.param(b, 64, 128) is not first
    assert tensor_map.param(a, 64, 64).read() != first.read()
    assert first.address % 64 == 0  # CUtensorMap is alignas(64)


@pytest.mark.gpu
@hopper
def test_kernel_agrees_with_cublas_at_4096():
    a, b = _inputs(4096, 4096, 4096, torch.bfloat16, seed=2)
    rtol, atol = gemm_tolerance(torch.bfloat16, 4096)
    got = gemm(a, b, kernel="wgmma").float()
    assert_close(got, torch.matmul(a, b).float(), rtol=2 * rtol, atol=2 * atol)

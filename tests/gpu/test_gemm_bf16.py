"""GEMM kernel: CPU checks of the reference and the launch geometry; GPU checks of the kernel
against the fp32 reference (gpu-marked, skipped without a CUDA device)."""

from __future__ import annotations

import re

import pytest
import torch

from iclr25.gpu.kernels import gemm_bf16
from iclr25.gpu.kernels.gemm_bf16 import gemm, gemm_reference, gemm_tolerance, launch_grid
from iclr25.testing import assert_close


def test_reference_known_answer():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.bfloat16)
    b = torch.tensor([[5.0, 6.0], [7.0, 8.0]], dtype=torch.bfloat16)
    # [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]]
    assert_close(gemm_reference(a, b), torch.tensor([[19.0, 22.0], [43.0, 50.0]]))
    assert gemm_reference(a, b).dtype == torch.float32


def test_reference_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"\(M, K\) @ \(K, N\)"):
        gemm_reference(torch.zeros(2, 3), torch.zeros(4, 2))


def test_tolerance_uses_the_unit_roundoff():
    assert gemm_tolerance(torch.bfloat16, 1) == (2 * 2.0**-8, 2 * 2.0**-8)
    assert gemm_tolerance("float16", 4096) == (2 * 2.0**-11, 2 * 2.0**-11 * 64)
    with pytest.raises(ValueError, match="bfloat16 or float16"):
        gemm_tolerance(torch.float32, 8)


@pytest.mark.parametrize(
    ("m", "n", "blocks"),
    [(1, 1, 1), (128, 128, 1), (129, 128, 2), (4096, 4096, 1024), (300, 700, 18)],
)
def test_launch_grid_covers_every_output_tile(m, n, blocks):
    assert launch_grid(m, n) == (blocks, 1, 1)


def test_python_constants_match_kernel_source():
    src = gemm_bf16.SPEC.read_source()
    found = dict(re.findall(r"\b(BM|BN|BK|STAGES)\s*=\s*(\d+)", src))
    assert {k: int(v) for k, v in found.items()} == {"BM": 128, "BN": 128, "BK": 32, "STAGES": 4}
    assert (gemm_bf16.BM, gemm_bf16.BN, gemm_bf16.BK, gemm_bf16.STAGES) == (128, 128, 32, 4)
    assert gemm_bf16.SMEM_BYTES == 4 * (128 * 32 + 32 * 128) * 2
    for fn in gemm_bf16.FUNCTIONS.values():
        assert f"{fn}(" in src


def test_wrapper_rejects_cpu_tensors_before_touching_a_gpu():
    a = torch.zeros(4, 4, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        gemm(a, a)


def test_wrapper_rejects_an_unknown_kernel_name():
    a = torch.zeros(4, 4, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="auto or one of hopper, wgmma, mma.sync"):
        gemm(a, a, kernel="cublas")


# --- GPU ----------------------------------------------------------------------------------
SHAPES = [
    (1, 1, 1),
    (16, 8, 16),
    (128, 128, 32),
    (127, 129, 31),
    (256, 384, 512),
    (1000, 77, 300),
    (77, 1000, 1),
    (513, 257, 1029),
    (2048, 2048, 2048),
]


def _inputs(m, n, k, dtype, seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=dtype, generator=gen)
    b = torch.randn(k, n, device="cuda", dtype=dtype, generator=gen)
    return a, b


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_kernel_matches_fp32_reference(m, n, k, dtype):
    """The mma.sync kernel itself (on Hopper, gemm() sends tile-divisible shapes to wgmma)."""
    a, b = _inputs(m, n, k, dtype)
    got = gemm(a, b, kernel="mma.sync")
    assert got.dtype == dtype and got.shape == (m, n)
    rtol, atol = gemm_tolerance(dtype, k)
    assert_close(got.float(), gemm_reference(a, b), rtol=rtol, atol=atol, what=f"{m}x{n}x{k}")


@pytest.mark.gpu
def test_kernel_unaligned_leading_dimensions_take_the_scalar_path():
    big_a, big_b = _inputs(300, 203, 133, torch.bfloat16, seed=1)
    a, b = big_a[:, :131], big_b[:131, :201]  # lda = 133, ldb = 203: not multiples of 8
    assert a.stride(0) % 8 and b.stride(0) % 8
    rtol, atol = gemm_tolerance(torch.bfloat16, 131)
    assert_close(gemm(a, b).float(), gemm_reference(a, b), rtol=rtol, atol=atol)


@pytest.mark.gpu
def test_kernel_partial_16_byte_rows_and_misaligned_pointers():
    """lda, ldb multiples of 8 but K = 100, N = 45: the last 16-byte copy of a row is partial
    (cp.async zero-fills the rest) and the odd N stores element by element; then views that
    start one element in (a 2-byte misaligned pointer) must take the element-load path."""
    big_a, big_b = _inputs(300, 48, 136, torch.bfloat16, seed=3)
    a, b = big_a[:, :100], big_b[:100, :45]
    assert a.stride(0) % 8 == 0 and b.stride(0) % 8 == 0
    rtol, atol = gemm_tolerance(torch.bfloat16, 100)
    assert_close(gemm(a, b).float(), gemm_reference(a, b), rtol=rtol, atol=atol, what="partial")
    a, b = big_a[:, 1:101], big_b[1:101, 1:46]
    assert a.data_ptr() % 16 and b.data_ptr() % 16
    assert_close(gemm(a, b).float(), gemm_reference(a, b), rtol=rtol, atol=atol, what="offset")


@pytest.mark.gpu
@pytest.mark.parametrize(("m", "n", "k"), [(0, 5, 5), (5, 0, 5), (5, 5, 0)])
def test_kernel_empty_shapes(m, n, k):
    a, b = _inputs(m, n, k, torch.bfloat16)
    got = gemm(a, b)
    assert got.shape == (m, n)
    assert_close(got.float(), torch.zeros(m, n, device="cuda"))


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["auto", "mma.sync"])
def test_kernel_agrees_with_cublas(kernel):
    a, b = _inputs(1024, 1024, 1024, torch.bfloat16, seed=2)
    rtol, atol = gemm_tolerance(torch.bfloat16, 1024)
    got = gemm(a, b, kernel=kernel).float()
    assert_close(got, torch.matmul(a, b).float(), rtol=2 * rtol, atol=2 * atol)

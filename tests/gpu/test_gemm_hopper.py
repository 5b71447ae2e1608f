"""The persistent Hopper GEMM through the public path: its self-check on this GPU, edge
shapes and transposed operands against the fp32 product, a churn of hundreds of distinct
shapes and buffers (tensor maps by value: nothing cached on the device can go stale), and
the fallback warning. GPU tests need an sm_90 device with nvcc."""

from __future__ import annotations

import warnings

import pytest
import torch

from iclr25.gpu import selfcheck, tensor_map
from iclr25.gpu.kernels import gemm_bf16, gemm_hopper
from iclr25.gpu.kernels.gemm_bf16 import gemm, gemm_plan, gemm_reference, gemm_tolerance
from iclr25.testing import assert_close


def test_tensor_map_refuses_what_tma_cannot_describe_before_calling_the_driver():
    with pytest.raises(ValueError, match="row-major 2-D 16-bit"):
        tensor_map.encode_2d(torch.zeros(8, 8), 8, 8)  # float32
    with pytest.raises(ValueError, match="16-byte aligned rows"):
        tensor_map.encode_2d(torch.zeros(8, 12, dtype=torch.bfloat16), 8, 8)
    with pytest.raises(ValueError, match="128-byte swizzle"):
        tensor_map.encode_2d(torch.zeros(8, 128, dtype=torch.bfloat16), 128, 8)


def test_entry_points_cover_every_layout_dtype_and_cluster():
    src = gemm_hopper.SPEC.read_source()
    for dtype in (torch.bfloat16, torch.float16):
        for la in "nt":
            for lb in "nt":
                for cluster in gemm_hopper.CLUSTERS:
                    name = gemm_hopper.function_name(dtype, la, lb, cluster)
                    short = name.removeprefix("gemm_hopper_").rsplit("_", 2)[0]
                    assert f"HP_GEMM_LAYOUTS({short}," in src and f"_{la}{lb}_c" in name
    assert "__grid_constant__ TensorMap map_a" in src and "const void* map" not in src
    assert gemm_hopper.SMEM_BYTES <= 227 * 1024


# --- GPU ----------------------------------------------------------------------------------
def _hopper() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


hopper = pytest.mark.skipif("not _hopper()", reason="needs an sm_90 GPU")


def _verified():
    verdict = selfcheck.verify("gemm_hopper", torch.cuda.current_device())
    if not verdict.ok:
        pytest.fail(f"gemm_hopper failed its self-check: {verdict.reason}")


def _operand(rows, cols, layout, dtype, gen):
    if layout == "n":
        return torch.randn(rows, cols, device="cuda", dtype=dtype, generator=gen)
    return torch.randn(cols, rows, device="cuda", dtype=dtype, generator=gen).T


@pytest.mark.gpu
@hopper
def test_gemm_hopper_passes_its_self_check_on_this_gpu():
    verdict = selfcheck.verify("gemm_hopper", torch.cuda.current_device())
    assert verdict.ok, verdict.reason


@pytest.mark.gpu
@hopper
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize(
    ("m", "n", "k"),
    [(1, 8, 1), (129, 264, 65), (4000, 4000, 4000), (4096, 4224, 4096), (1024, 1024, 1024),
     (3, 1000, 5000), (777, 136, 9)],
)  # fmt: skip
def test_edge_shapes_and_layouts_match_the_fp32_product(m, n, k, layout):
    _verified()
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    a, b = (
        _operand(m, k, layout[0], torch.bfloat16, gen),
        _operand(k, n, layout[1], torch.bfloat16, gen),
    )
    if gemm_hopper.applies(a, b) is not None:
        pytest.skip(gemm_hopper.applies(a, b))
    assert gemm_plan(a, b).kernel == "gemm_hopper"
    rtol, atol = gemm_tolerance(torch.bfloat16, k)
    assert_close(
        gemm(a, b).float(), gemm_reference(a, b), rtol=rtol, atol=atol, what=f"{m}x{n}x{k} {layout}"
    )


@pytest.mark.gpu
@hopper
def test_x_at_w_transpose_reads_w_in_place_without_a_copy(monkeypatch):
    _verified()
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(512, 768, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(1024, 768, device="cuda", dtype=torch.bfloat16, generator=gen)
    monkeypatch.setattr(torch.Tensor, "contiguous", lambda self, *a, **k: pytest.fail("copied"))
    got = gemm(x, w.T)
    monkeypatch.undo()
    rtol, atol = gemm_tolerance(torch.bfloat16, 768)
    assert_close(got.float(), gemm_reference(x, w.T), rtol=rtol, atol=atol)


@pytest.mark.gpu
@hopper
def test_descriptor_churn_of_hundreds_of_shapes_and_buffers():
    """The previous design cached maps in device memory (64 entries, freed on eviction while
    torch reused the addresses). By-value maps have nothing to go stale: 300 GEMMs on fresh
    buffers of changing shapes, each checked, plus re-use of freed addresses."""
    _verified()
    gen = torch.Generator(device="cuda").manual_seed(7)
    sizes = [
        (64 * (1 + i % 7) + 8 * (i % 3), 8 * (3 + i % 11), 16 * (1 + i % 13)) for i in range(300)
    ]
    for i, (m, n, k) in enumerate(sizes):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=gen)
        got = gemm(a, b)
        rtol, atol = gemm_tolerance(torch.bfloat16, k)
        assert_close(
            got.float(), gemm_reference(a, b), rtol=rtol, atol=atol, what=f"#{i} {m}x{n}x{k}"
        )
        del a, b, got  # the next iteration's buffers reuse these addresses


@pytest.mark.gpu
@hopper
def test_a_failed_self_check_falls_back_with_a_warning(monkeypatch):
    failed = selfcheck.Verdict("gemm_hopper", False, "SelfCheckFailed: injected")
    real = selfcheck.verify
    monkeypatch.setattr(
        selfcheck,
        "verify",
        lambda name, index, runner=None: failed if name == "gemm_hopper" else real(name, index),
    )
    selfcheck.forget()
    a = torch.randn(4000, 4000, device="cuda", dtype=torch.bfloat16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = gemm(a, a)
    assert gemm_bf16.gemm_plan(a, a).kernel == "gemm_bf16"
    assert any(
        "gemm_hopper failed its self-check on this GPU (SelfCheckFailed: injected)"
        in str(w.message)
        for w in caught
    )
    rtol, atol = gemm_tolerance(torch.bfloat16, 4000)
    assert_close(got.float(), gemm_reference(a, a), rtol=rtol, atol=atol)
    selfcheck.forget()

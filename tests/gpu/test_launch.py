"""How launch.py hands a kernel to CuPy, checked with stand-ins for CuPy and torch's streams.

CuPy keeps one function handle per device (RawKernel compiles lazily for the current
device), and ``max_dynamic_shared_size_bytes`` is an attribute of that handle. A kernel
that needs more than 48 KiB of dynamic shared memory must therefore be opted in on the
device it is launched on, inside that device's context; the launch goes to torch's
current stream of that device.
"""

from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace

import pytest
import torch

from iclr25.gpu import launch as launch_mod
from iclr25.gpu.kernels import attention_fwd, gemm_bf16, linear_attention


class FakeKernel:
    """A RawKernel whose attribute and launches are recorded with the current device."""

    def __init__(self, device: list[int]):
        self._device = device
        self.opt_ins: list[tuple[int, int]] = []  # (device, bytes)
        self.launches: list[dict] = []

    @property
    def max_dynamic_shared_size_bytes(self):
        raise AssertionError("launch never reads the attribute")

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value):
        self.opt_ins.append((self._device[0], value))

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.launches.append(
            {"device": self._device[0], "grid": grid, "smem": shared_mem, "stream": stream.ptr}
        )


@pytest.fixture
def fake_cuda(monkeypatch):
    current = [0]  # CuPy's current device

    @contextlib.contextmanager
    def device(index):
        old, current[0] = current[0], index
        try:
            yield
        finally:
            current[0] = old

    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(cuda=SimpleNamespace(Device=device)))
    monkeypatch.setattr(
        torch.cuda, "current_stream", lambda index: SimpleNamespace(cuda_stream=1000 + index)
    )
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(launch_mod, "_SMEM_OPT_IN", {})
    return current


def test_large_dynamic_smem_is_opted_in_once_per_device(fake_cuda):
    fn = FakeKernel(fake_cuda)
    smem = 64 * 1024
    for index in (0, 1, 0, 1):
        launch_mod.launch(fn, (2, 1, 1), (256, 1, 1), (), smem, torch.device("cuda", index))
    assert fn.opt_ins == [(0, smem), (1, smem)]  # on the launching device, once each
    assert [(c["device"], c["stream"]) for c in fn.launches] == [
        (0, 1000),
        (1, 1001),
        (0, 1000),
        (1, 1001),
    ]
    assert all(c["smem"] == smem for c in fn.launches)
    assert fake_cuda[0] == 0  # the device context is restored


def test_a_larger_request_raises_the_opt_in_and_small_ones_need_none(fake_cuda):
    fn = FakeKernel(fake_cuda)
    launch_mod.launch(fn, (1, 1, 1), (128, 1, 1), (), 40 * 1024, torch.device("cuda"))
    assert fn.opt_ins == []  # at or below 48 KiB: the default suffices
    launch_mod.launch(fn, (1, 1, 1), (128, 1, 1), (), 56 * 1024, torch.device("cuda", 0))
    launch_mod.launch(fn, (1, 1, 1), (128, 1, 1), (), 80 * 1024, torch.device("cuda", 0))
    launch_mod.launch(fn, (1, 1, 1), (128, 1, 1), (), 56 * 1024, torch.device("cuda", 0))
    assert fn.opt_ins == [(0, 56 * 1024), (0, 80 * 1024)]


def test_empty_grid_is_refused_before_cupy(fake_cuda):
    with pytest.raises(ValueError, match="empty launch grid"):
        fn = FakeKernel(fake_cuda)
        launch_mod.launch(fn, (0, 1, 1), (128, 1, 1), (), 0, torch.device("cuda"))


# H100 / H200 (sm_90): at most 227 KiB of dynamic shared memory per block after the opt-in,
# 228 KiB per SM (CUDA C++ Programming Guide, "Compute Capabilities", technical specs);
# A100 (sm_80): 163 KiB per block, 164 KiB per SM.
MAX_SMEM_PER_BLOCK_SM80 = 163 * 1024
SMEM_PER_SM_SM80 = 164 * 1024


@pytest.mark.parametrize(
    ("name", "smem", "blocks_per_sm"),
    [
        ("gemm 128x128x32, 4 stages", gemm_bf16.SMEM_BYTES, 2),  # __launch_bounds__(256, 2)
        ("attention D=64", attention_fwd.smem_bytes(64), 1),
        ("attention D=128", attention_fwd.smem_bytes(128), 1),
        ("linear attention DK=64", linear_attention.smem_bytes(64), 1),
        ("linear attention DK=128", linear_attention.smem_bytes(128), 1),
    ],
)
def test_shared_memory_fits_sm80_and_newer(name, smem, blocks_per_sm):
    """Every launch fits an A100's per-block limit (so also H100/H200's), and the GEMM's
    two blocks per SM promised by __launch_bounds__ fit in one SM's shared memory."""
    assert smem <= MAX_SMEM_PER_BLOCK_SM80, name
    assert blocks_per_sm * smem <= SMEM_PER_SM_SM80, name

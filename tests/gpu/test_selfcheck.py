"""The self-check guard (iclr25/gpu/selfcheck.py) and the GEMM dispatch built on it, on the
CPU: verdicts are cached by source and device, failures and hangs become fallbacks with
a warning, and gemm_plan never hands a shape to a kernel that has not passed its check."""

from __future__ import annotations

import json
import sys
import warnings

import pytest
import torch

from iclr25.gpu import selfcheck
from iclr25.gpu.kernels import gemm_bf16, gemm_hopper, gemm_wgmma

IDENTITY = {"device": "NVIDIA H200", "capability": "9.0", "driver": 13000, "nvcc": "13.0"}


@pytest.fixture
def fake_device(monkeypatch, tmp_path):
    monkeypatch.setenv("ICLR25_CACHE_DIR", str(tmp_path))  # an empty verdict cache
    monkeypatch.setattr(selfcheck, "device_identity", lambda index: dict(IDENTITY))
    selfcheck.forget()
    yield
    selfcheck.forget()


def test_a_verdict_is_computed_once_then_read_from_the_cache(fake_device):
    runs = []

    def runner(name, index, timeout_s):
        runs.append((name, index))
        return selfcheck.Verdict(name, True, checks=("128x256x64",), seconds=1.5)

    first = selfcheck.verify("gemm_hopper", 0, runner=runner)
    assert first.ok and not first.cached and runs == [("gemm_hopper", 0)]
    assert selfcheck.verify("gemm_hopper", 0, runner=runner) is first  # in memory
    selfcheck.forget()
    again = selfcheck.verify("gemm_hopper", 0, runner=runner)
    assert again.ok and again.cached and again.checks == ("128x256x64",) and len(runs) == 1


def test_failures_are_cached_too_and_refresh_reruns(fake_device, monkeypatch):
    runs = []

    def failing(name, index, timeout_s):
        runs.append(name)
        return selfcheck.Verdict(name, False, "SelfCheckFailed: 3 elements off")

    assert not selfcheck.verify("gemm_hopper", 0, runner=failing).ok
    selfcheck.forget()
    cached = selfcheck.verify("gemm_hopper", 0, runner=failing)
    assert not cached.ok and cached.cached and cached.reason.endswith("3 elements off")
    assert len(runs) == 1
    selfcheck.forget()
    monkeypatch.setenv("ICLR25_SELFCHECK", "refresh")
    selfcheck.verify("gemm_hopper", 0, runner=failing)
    assert len(runs) == 2


def test_the_cache_key_changes_with_the_source_the_device_and_the_driver(fake_device):
    key = selfcheck.cache_key("gemm_hopper", IDENTITY)
    assert selfcheck.cache_key("gemm_wgmma", IDENTITY) != key
    assert selfcheck.cache_key("gemm_hopper", {**IDENTITY, "device": "NVIDIA H100"}) != key
    assert selfcheck.cache_key("gemm_hopper", {**IDENTITY, "driver": 12040}) != key
    assert selfcheck.cache_key("gemm_hopper", dict(IDENTITY)) == key


def test_a_hanging_check_times_out_into_a_failed_verdict():
    cmd = [sys.executable, "-c", "import time; time.sleep(30)"]
    verdict = selfcheck.run_in_subprocess("gemm_hopper", 0, 1.0, cmd=cmd)
    assert not verdict.ok and "did not finish within 1 s" in verdict.reason


def test_a_crashing_check_is_a_failed_verdict_naming_the_error():
    cmd = [sys.executable, "-c", "raise SystemExit('CUDA_ERROR_ILLEGAL_ADDRESS')"]
    verdict = selfcheck.run_in_subprocess("gemm_hopper", 0, 30.0, cmd=cmd)
    assert not verdict.ok and "CUDA_ERROR_ILLEGAL_ADDRESS" in verdict.reason


def test_the_verdict_line_of_the_subprocess_is_parsed():
    line = selfcheck.RESULT_PREFIX + json.dumps(
        {"kernel": "gemm_hopper", "ok": True, "reason": "", "checks": ["a"], "seconds": 0.5}
    )
    cmd = [sys.executable, "-c", f"print('noise'); print({line!r})"]
    verdict = selfcheck.run_in_subprocess("gemm_hopper", 0, 30.0, cmd=cmd)
    assert verdict.ok and verdict.checks == ("a",)


def test_run_here_turns_an_exception_into_a_verdict(monkeypatch):
    def boom(index):
        raise selfcheck.SelfCheckFailed("300x520x200 nn cluster 2: 7 elements off")

    monkeypatch.setattr(gemm_hopper, "self_check", boom)
    verdict = selfcheck.run_here("gemm_hopper", 0)
    assert not verdict.ok
    assert verdict.reason == "SelfCheckFailed: 300x520x200 nn cluster 2: 7 elements off"


def test_the_fallback_warning_is_given_once_per_kernel_and_replacement(fake_device):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            selfcheck.fallback_warning("gemm_hopper", "timed out", "gemm_bf16")
    assert [str(w.message) for w in caught] == [
        "gemm_hopper failed its self-check on this GPU (timed out); gemm_bf16 runs instead"
    ]


# --- the GEMM dispatch ---------------------------------------------------------------------
class FakeCuda:
    """Enough of a CUDA tensor for the dispatch: shape, strides, dtype, pointer."""

    is_cuda = True
    device = torch.device("cuda", 0)

    def __init__(self, shape, strides=None, dtype=torch.bfloat16, ptr=1 << 20):
        self.shape, self.dtype, self._ptr = torch.Size(shape), dtype, ptr
        self._strides = strides or (shape[1], 1)
        self.ndim = len(shape)

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def data_ptr(self):
        return self._ptr


@pytest.fixture
def hopper(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    verdicts = {"gemm_hopper": True, "gemm_wgmma": True}

    def verify(name, index, runner=None):
        return selfcheck.Verdict(name, verdicts[name], "" if verdicts[name] else "timed out")

    monkeypatch.setattr(selfcheck, "verify", verify)
    return verdicts


def test_the_persistent_kernel_takes_any_tma_readable_shape(hopper):
    a, b = FakeCuda((4000, 4000)), FakeCuda((4000, 4000))
    assert gemm_bf16.gemm_plan(a, b) == gemm_bf16.GemmPlan("gemm_hopper")
    w_t = FakeCuda((4096, 4224), strides=(1, 4096))  # the transpose of a (4224, 4096) W
    assert gemm_bf16.gemm_plan(FakeCuda((4096, 4096)), w_t).kernel == "gemm_hopper"


def test_a_failed_self_check_falls_back_and_says_why(hopper):
    hopper["gemm_hopper"] = False
    plan = gemm_bf16.gemm_plan(FakeCuda((4096, 4096)), FakeCuda((4096, 4096)))
    assert plan.kernel == "gemm_wgmma"
    assert plan.failed_self_check == (("gemm_hopper", "timed out"),)
    assert "gemm_hopper: failed its self-check on this GPU (timed out)" in plan.reason
    odd = gemm_bf16.gemm_plan(FakeCuda((4000, 4000)), FakeCuda((4000, 4000)))
    assert odd.kernel == "gemm_bf16" and "multiples of 128, 256, 64" in odd.reason
    hopper["gemm_wgmma"] = False
    both = gemm_bf16.gemm_plan(FakeCuda((4096, 4096)), FakeCuda((4096, 4096)))
    assert both.kernel == "gemm_bf16" and len(both.failed_self_check) == 2


def test_shapes_tma_cannot_read_go_to_mma_sync_with_the_reason(hopper):
    plan = gemm_bf16.gemm_plan(FakeCuda((100, 30), strides=(30, 1)), FakeCuda((30, 64)))
    assert plan.kernel == "gemm_bf16"
    assert "neither row-major nor transposed with 16-byte aligned rows" in plan.reason
    narrow = gemm_bf16.gemm_plan(FakeCuda((128, 64)), FakeCuda((64, 100), strides=(104, 1)))
    assert narrow.kernel == "gemm_bf16" and "N = 100 is not a multiple of 8" in narrow.reason


def test_other_devices_use_mma_sync_without_any_self_check(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(selfcheck, "verify", lambda *a, **k: pytest.fail("self-check on sm_80"))
    assert gemm_bf16.gemm_plan(FakeCuda((256, 256)), FakeCuda((256, 256))).kernel == "gemm_bf16"
    cpu = torch.zeros(4, 4, dtype=torch.bfloat16)
    assert gemm_bf16.gemm_plan(cpu, cpu) == gemm_bf16.GemmPlan("gemm_bf16")


def test_operand_layouts_as_tma_sees_them():
    base = torch.zeros(64, 72, dtype=torch.bfloat16)
    assert gemm_hopper.operand_layout(base) == "n"
    assert gemm_hopper.operand_layout(base.T) == "t"
    assert gemm_hopper.operand_layout(base[:, :64]) == "n"  # a view with ld 72: rows aligned
    assert gemm_hopper.operand_layout(torch.zeros(8, 30, dtype=torch.bfloat16)) is None
    assert gemm_hopper.operand_layout(base[:, 1:]) is None  # base address not 16-byte aligned
    assert gemm_wgmma.applies(base, base.T) is not None  # the first kernel needs row-major


def test_persistent_grid_fills_the_sms_in_whole_clusters():
    assert gemm_hopper.grid_size(4096, 4096, 132, 2) == 132  # 256 tile pairs on 66 clusters
    assert gemm_hopper.grid_size(1024, 1024, 132, 2) == 32  # 4 pair-rows x 4 tile columns
    assert gemm_hopper.grid_size(8192, 8192, 132, 2) == 132  # 66 clusters of 2
    assert gemm_hopper.grid_size(128, 256, 132, 1) == 1
    assert gemm_hopper.grid_size(300, 520, 132, 2, max_ctas=2) == 2
    assert gemm_hopper.grid_size(300, 520, 132, 2) == 12  # 2 pair-rows x 3 columns, 2 CTAs each
    assert gemm_hopper.default_cluster(128) == 1 and gemm_hopper.default_cluster(129) == 2

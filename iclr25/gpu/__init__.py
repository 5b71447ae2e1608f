"""GPU layer: device selection and lazy CuPy access.

CuPy is imported here and only here, lazily; its absence is the normal case on a
CPU-only machine. Every kernel lives in ``iclr25/gpu/kernels/<name>/`` (see
:mod:`iclr25.gpu.registry`) with a numpy/torch reference implementation.
"""

from __future__ import annotations

import functools
import glob
import os
from dataclasses import asdict, dataclass

from iclr25.errors import DeviceError, UsageError

DEVICE_CHOICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class DeviceChoice:
    """The device a command runs on, and why it was chosen."""

    kind: str  # "cpu" or "cuda"
    reason: str
    name: str | None = None  # e.g. "NVIDIA H200" when kind == "cuda"
    backend: str | None = None  # "cupy", "torch" or None: what found the device

    def as_dict(self) -> dict:
        return asdict(self)


def _driver_present() -> bool:
    """Cheap check that an NVIDIA driver is loaded, without importing torch or cupy."""
    return os.path.exists("/proc/driver/nvidia/version") or bool(glob.glob("/dev/nvidia[0-9]*"))


@functools.lru_cache(maxsize=1)
def get_cupy():
    """Return the ``cupy`` module if it is installed and sees a CUDA device, else None."""
    if not _driver_present():
        return None
    try:
        import cupy  # noqa: PLC0415 - the one lazy import of cupy in the project

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        return cupy
    except Exception:  # ImportError, CUDARuntimeError, missing libraries: all mean "no cupy"
        return None


def _torch_cuda_name() -> str | None:
    try:
        import torch  # noqa: PLC0415

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:
        return None
    return None


@functools.lru_cache(maxsize=1)
def _probe_cuda() -> tuple[bool, str, str | None, str | None]:
    """(available, reason, device name, backend), computed once per process."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False, "CUDA_VISIBLE_DEVICES hides every GPU", None, None
    if not _driver_present():
        return False, "no NVIDIA driver or device found", None, None
    cupy = get_cupy()
    if cupy is not None:
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return True, "CUDA device found by CuPy", name, "cupy"
    name = _torch_cuda_name()
    if name is not None:
        return (
            True,
            "CUDA device found by torch (CuPy not installed: kernels use torch)",
            name,
            "torch",
        )
    return False, "an NVIDIA driver is present but neither CuPy nor torch can use it", None, None


def select_device(preference: str = "auto") -> DeviceChoice:
    """Resolve ``--device auto|cpu|cuda`` to a :class:`DeviceChoice` with its reason.

    Raises :class:`DeviceError` (exit 2) for ``cuda`` when no CUDA device is usable.
    """
    if preference not in DEVICE_CHOICES:
        raise UsageError(
            f"unknown device {preference!r}", f"use one of: {', '.join(DEVICE_CHOICES)}"
        )
    if preference == "cpu":
        return DeviceChoice("cpu", "requested with --device cpu")
    available, reason, name, backend = _probe_cuda()
    if available:
        return DeviceChoice("cuda", reason, name, backend)
    if preference == "cuda":
        raise DeviceError(
            f"--device cuda was requested but no CUDA device is usable ({reason})",
            "run with --device cpu (or --device auto), or install the gpu extra on a CUDA machine",
        )
    return DeviceChoice("cpu", f"auto: {reason}")


def cuda_available() -> bool:
    return _probe_cuda()[0]

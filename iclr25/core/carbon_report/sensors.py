"""Energy sensors for live tracking: NVML for GPUs, RAPL for CPUs, documented estimates.

GPUs (nvidia-ml-py): only the GPUs named by ``CUDA_VISIBLE_DEVICES`` (indices are taken in
NVML's PCI-bus order, which is CUDA's order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID``; ``GPU-``
UUID prefixes match exactly; ``MIG-`` instances cannot be metered separately and are
skipped with a warning). Energy comes from NVML's cumulative counter
(``nvmlDeviceGetTotalEnergyConsumption``, mJ, Volta and later); where it is not supported
the polled power (``nvmlDeviceGetPowerUsage``) is integrated with the trapezoid rule.

CPU: RAPL package counters under ``/sys/class/powercap/intel-rapl:N/energy_uj`` (whole
packages, as CodeCarbon measures; wrap-around handled with ``max_energy_range_uj``). Since
2020 these files are usually readable by root only; then the CPU energy is an *estimate*:
``cpu_tdp_w / logical CPUs`` per CPU-second the command used (user + system time of the
child and its waited-for descendants) — a busy core is charged its share of the package TDP.

RAM: always an estimate: ``ram_w_per_gb`` (0.375 W/GB, i.e. 3 W per 8 GB, CodeCarbon's
long-standing model) times the command's peak resident memory, for its duration.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

DEFAULT_CPU_TDP_W = 85.0  # CodeCarbon's fallback when a CPU model's TDP is unknown
RAM_W_PER_GB = 0.375  # 3 W per 8 GB (CodeCarbon)


def visible_gpu_selectors(environ=os.environ) -> list[str] | None:
    """CUDA_VISIBLE_DEVICES as a list of selectors; None = all GPUs; [] = none.

    Like CUDA, parsing stops at the first entry that is not an index or a UUID."""
    value = environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    selectors = []
    for item in (x.strip() for x in value.split(",")):
        if item.isdigit() or item.startswith(("GPU-", "MIG-")):
            selectors.append(item)
        else:
            break
    return selectors


@dataclasses.dataclass
class GpuDevice:
    label: str  # the selector it was chosen by (CUDA index order), or its NVML index
    index: int  # NVML index
    name: str
    uuid: str
    handle: object
    has_counter: bool


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlGpus:
    """The visible GPUs through NVML (``nvml`` is the pynvml module or a stand-in)."""

    def __init__(self, nvml, environ=os.environ) -> None:
        self.nvml = nvml
        self.devices: list[GpuDevice] = []
        self.notes: list[str] = []
        nvml.nvmlInit()
        count = nvml.nvmlDeviceGetCount()
        all_devices = [self._device(i) for i in range(count)]
        selectors = visible_gpu_selectors(environ)
        if selectors is None:
            self.devices = all_devices
            return
        for position, sel in enumerate(selectors):
            found = self._select(sel, all_devices)
            if found is not None:
                self.devices.append(dataclasses.replace(found, label=str(position)))

    def _device(self, index: int) -> GpuDevice:
        nvml = self.nvml
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        try:
            nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
            has_counter = True
        except nvml.NVMLError:
            has_counter = False
        name = _text(nvml.nvmlDeviceGetName(handle))
        uuid = _text(nvml.nvmlDeviceGetUUID(handle))
        return GpuDevice(str(index), index, name, uuid, handle, has_counter)

    def _select(self, sel: str, devices: list[GpuDevice]) -> GpuDevice | None:
        if sel.isdigit():
            if int(sel) < len(devices):
                return devices[int(sel)]
            self.notes.append(f"CUDA_VISIBLE_DEVICES names GPU {sel}, which NVML does not see")
            return None
        if sel.startswith("MIG-"):
            self.notes.append(f"{sel}: MIG instances cannot be metered on their own; not measured")
            return None
        matches = [d for d in devices if d.uuid.startswith(sel)]
        if len(matches) != 1:
            self.notes.append(f"CUDA_VISIBLE_DEVICES entry {sel} matches {len(matches)} GPUs")
            return None
        return matches[0]

    def energy_mj(self) -> list[float | None]:
        """Cumulative energy counters (mJ), None where unsupported."""
        read = self.nvml.nvmlDeviceGetTotalEnergyConsumption
        return [float(read(d.handle)) if d.has_counter else None for d in self.devices]

    def power_w(self) -> list[float]:
        """Current board power of each device (W); NaN where the read fails."""
        out = []
        for d in self.devices:
            try:
                out.append(self.nvml.nvmlDeviceGetPowerUsage(d.handle) / 1000.0)
            except self.nvml.NVMLError:
                out.append(float("nan"))
        return out

    def close(self) -> None:
        try:
            self.nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down is best effort
            pass


def open_nvml(environ=os.environ, nvml=None) -> tuple[NvmlGpus | None, str]:
    """(the visible GPUs, or None, and why) — never raises on a machine without GPUs."""
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            return None, "nvidia-ml-py is not installed"
    try:
        gpus = NvmlGpus(nvml, environ)
    except nvml.NVMLError as exc:
        return None, f"NVML unavailable ({_text(exc)})"
    if not gpus.devices:
        gpus.close()
        return None, "no visible GPU"
    return gpus, "NVML"


class Rapl:
    """CPU package energy counters (µJ) under a powercap root, when readable."""

    def __init__(self, root: Path = Path("/sys/class/powercap")) -> None:
        self.domains: list[tuple[Path, int]] = []  # (energy_uj path, wrap range)
        self.reason = ""
        root = Path(root)
        candidates = sorted(p for p in root.glob("intel-rapl:*") if p.name.count(":") == 1)
        if not candidates:
            self.reason = f"no RAPL domains under {root}"
        for domain in candidates:
            try:
                (domain / "energy_uj").read_text()
                wrap = int((domain / "max_energy_range_uj").read_text().strip())
            except (OSError, ValueError) as exc:
                self.reason = f"{domain}/energy_uj is not readable ({type(exc).__name__})"
                self.domains = []
                break
            self.domains.append((domain / "energy_uj", wrap))

    @property
    def available(self) -> bool:
        return bool(self.domains)

    def read_uj(self) -> list[int]:
        return [int(path.read_text().strip()) for path, _ in self.domains]

    def delta_j(self, start: list[int], end: list[int]) -> float:
        """Joules between two readings, across a counter wrap-around."""
        total = 0
        for (_, wrap), a, b in zip(self.domains, start, end, strict=True):
            total += b - a if b >= a else b + wrap - a
        return total / 1e6


def cpu_estimate_j(cpu_seconds: float, cpu_tdp_w: float, logical_cpus: int) -> float:
    """Estimated CPU energy: each busy CPU-second is charged TDP / logical CPUs."""
    return cpu_seconds * cpu_tdp_w / max(logical_cpus, 1)


def ram_estimate_j(peak_rss_gb: float, duration_s: float, w_per_gb: float = RAM_W_PER_GB) -> float:
    return peak_rss_gb * w_per_gb * duration_s


def cpu_model_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


def ram_total_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    return float("nan")

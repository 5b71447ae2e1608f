"""Dense 16-bit tensor-core peaks (TFLOP/s, fp32 accumulation) by device name.

Figures are the vendor's dense numbers (the headline figures with 2:4 sparsity are twice
these; ThunderKittens' notes: H100 SXM dense bf16 ~ 989 TFLOP/s, not 1,979). GeForce cards
run fp16/bf16 with fp32 accumulation at half their fp16-accumulate rate; that is the figure
listed. Devices without bf16 tensor cores (V100, T4) have no bf16 entry. Unknown devices
give None; ``gpu-bench --peak-tflops`` supplies a figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class DevicePeak:
    pattern: str  # regex searched in the lower-cased device name
    label: str
    bf16_tflops: float | None  # dense bf16, fp32 accumulate
    fp16_tflops: float  # dense fp16, fp32 accumulate


#: Most specific first: the first pattern that matches wins.
PEAKS: tuple[DevicePeak, ...] = (
    DevicePeak(r"gb200", "GB200 (per GPU)", 2500.0, 2500.0),
    DevicePeak(r"b200", "B200", 2250.0, 2250.0),
    DevicePeak(r"h200 nvl", "H200 NVL", 835.5, 835.5),
    DevicePeak(r"gh200|h200", "H200 / GH200 SXM", 989.4, 989.4),
    DevicePeak(r"h100 nvl", "H100 NVL", 835.5, 835.5),
    DevicePeak(r"h100 pcie|h800 pcie", "H100 PCIe", 756.5, 756.5),
    DevicePeak(r"h100|h800", "H100 SXM", 989.4, 989.4),
    DevicePeak(r"a100|a800", "A100", 312.0, 312.0),
    DevicePeak(r"l40s", "L40S", 362.05, 362.05),
    DevicePeak(r"l40\b", "L40", 181.05, 181.05),
    DevicePeak(r"\bl4\b", "L4", 121.0, 121.0),
    DevicePeak(r"\ba10\b", "A10", 125.0, 125.0),
    DevicePeak(r"rtx a6000", "RTX A6000", 154.8, 154.8),
    DevicePeak(r"rtx 4090", "GeForce RTX 4090", 165.2, 165.2),
    DevicePeak(r"rtx 3090", "GeForce RTX 3090", 71.0, 71.0),
    DevicePeak(r"v100", "V100", None, 125.0),
    DevicePeak(r"\bt4\b", "T4", None, 65.0),
)


def find_peak(device_name: str | None) -> DevicePeak | None:
    if not device_name:
        return None
    name = device_name.lower()
    return next((p for p in PEAKS if re.search(p.pattern, name)), None)


def dense_peak_tflops(device_name: str | None, dtype: str = "bf16") -> float | None:
    """The dense peak for ``dtype`` ("bf16" or "fp16") on ``device_name``, or None."""
    peak = find_peak(device_name)
    if peak is None:
        return None
    return peak.bf16_tflops if dtype == "bf16" else peak.fp16_tflops


def percent_of_peak(tflops: float | None, peak: float | None) -> float | None:
    if tflops is None or not peak:
        return None
    return 100.0 * tflops / peak

"""Shared helpers for the carbon-report tests: log writers and a plain reference integrator."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

T0 = 1714564800  # 2024-05-01 12:00:00 UTC


def smi_stamp(t: float) -> str:
    """nvidia-smi style local timestamp (ms) for epoch seconds t."""
    ms = int(round(t * 1000))
    stamp = datetime.fromtimestamp(ms // 1000, tz=UTC).strftime("%Y/%m/%d %H:%M:%S")
    return f"{stamp}.{ms % 1000:03d}"


def write_smi(path: Path, rows, name: str | None = None, units: bool = True) -> Path:
    """rows: iterable of (t_epoch_s, gpu, power_w or raw text)."""
    header = "timestamp, index, " + ("name, " if name else "") + "power.draw [W]"
    lines = [header]
    for t, g, p in rows:
        value = p if isinstance(p, str) else (f"{p:.3f} W" if units else f"{p:.3f}")
        lines.append(f"{smi_stamp(t)}, {g}, " + (f"{name}, " if name else "") + value)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_plain(path: Path, t, gpu, power) -> Path:
    lines = ["timestamp,gpu,power_w"]
    lines += [f"{float(ti)!r},{g},{float(p)!r}" for ti, g, p in zip(t, gpu, power, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


def reference_energy_j(t, gpu, power, max_gap_s: float = math.inf) -> dict:
    """Plain per-GPU trapezoid: samples in file order, drops non-increasing timestamps,
    skips intervals longer than max_gap_s. Returns {gpu: joules}."""
    last: dict = {}
    energy: dict = {}
    for ti, g, p in zip(t, gpu, power, strict=True):
        if not (p == p) or p < 0:
            continue
        energy.setdefault(g, 0.0)
        if g in last:
            t_prev, p_prev = last[g]
            if ti <= t_prev:
                continue
            if ti - t_prev <= max_gap_s:
                energy[g] += 0.5 * (p + p_prev) * (ti - t_prev)
        last[g] = (ti, p)
    return energy


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def helpers():
    """The helpers above, as a fixture (test modules cannot import conftest by name)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        T0=T0,
        smi_stamp=smi_stamp,
        write_smi=write_smi,
        write_plain=write_plain,
        reference_energy_j=reference_energy_j,
    )

"""Synthetic GPU power logs shaped like the training traces of Morrison et al. (ICLR 2025).

The paper's traces: above 600 W of an H100's 700 W while computing, ~100 W during
checkpointing (all GPUs of a node together), sharp ramps between the two. This module
draws such a trace — compute plateau with per-GPU offsets and noise, synchronous
checkpoint dips with linear ramps, short data-loading stalls — sampled at jittered times
shared by the GPUs (as ``nvidia-smi -lms`` prints them), optionally with logger outages,
and writes it as ``nvidia-smi --query-gpu=timestamp,index,name,power.draw --format=csv``.
Used for the bundled example log, the tests and the benchmark; seeded and reproducible.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

SMI_HEADER = "timestamp, index, name, power.draw [W]\n"
SMI_HEADER_NO_NAME = "timestamp, index, power.draw [W]\n"


@dataclasses.dataclass(frozen=True)
class TraceConfig:
    gpus: int = 8
    duration_s: float = 3600.0
    interval_s: float = 0.1  # mean sampling period
    jitter: float = 0.2  # each period is interval_s * U(1 - jitter, 1 + jitter)
    compute_w: float = 640.0  # mean power while computing (paper: above 600 W)
    gpu_spread_w: float = 15.0  # per-GPU offset of the compute level (uniform +-)
    noise_w: float = 12.0  # i.i.d. sample noise (std)
    idle_w: float = 110.0  # power while checkpointing (paper: ~100 W)
    checkpoint_every_s: float = 600.0
    checkpoint_s: float = 45.0
    ramp_s: float = 2.0  # linear ramp down into and up out of a checkpoint
    stall_every_s: float = 97.0  # short data-loading stalls
    stall_s: float = 2.5
    stall_w: float = 300.0
    start_epoch_s: float = 1714564800.0  # 2024-05-01 12:00:00 UTC
    gaps: tuple[tuple[float, float], ...] = ()  # (start_s, length_s) logger outages
    seed: int = 0


def _level(t: np.ndarray, every: float, length: float, ramp: float) -> np.ndarray:
    """1 inside the periodic window (with linear ramps), 0 outside; t in s."""
    phase = np.mod(t, every) - (every - length)  # window at the end of each period
    up = np.clip(phase / ramp, 0.0, 1.0) if ramp > 0 else (phase >= 0).astype(float)
    down = (
        np.clip((length - phase) / ramp, 0.0, 1.0) if ramp > 0 else (phase < length).astype(float)
    )
    return np.minimum(up, down)


def clean_power(cfg: TraceConfig, t: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Noise-free power (n, gpus) at times t (n,) s since the start."""
    ckpt = _level(t, cfg.checkpoint_every_s, cfg.checkpoint_s, cfg.ramp_s)[:, None]
    stall = _level(t, cfg.stall_every_s, cfg.stall_s, 0.5)[:, None]
    compute = cfg.compute_w + offsets[None, :]
    busy = compute - stall * (compute - cfg.stall_w)
    return busy - ckpt * (busy - cfg.idle_w)


def sample_times(
    cfg: TraceConfig, rng: np.random.Generator, start_s: float, count: int
) -> np.ndarray:
    steps = cfg.interval_s * rng.uniform(1 - cfg.jitter, 1 + cfg.jitter, count)
    t = start_s + np.cumsum(steps)
    for gap_start, gap_len in cfg.gaps:
        t = np.where(t >= gap_start, t + gap_len, t)
    return t


def _format_chunk(cfg, times, power, name) -> str:
    stamps = (np.round((cfg.start_epoch_s + times) * 1000).astype("int64")).astype("datetime64[ms]")
    text = np.char.replace(np.char.replace(stamps.astype(str), "-", "/"), "T", " ")
    watts = np.char.mod("%.2f", np.round(power, 2))  # (n, gpus)
    lines = []
    middle = [f", {g}, {name}, " if name else f", {g}, " for g in range(cfg.gpus)]
    for i, stamp in enumerate(text.tolist()):
        row = watts[i]
        lines.extend(f"{stamp}{middle[g]}{row[g]} W\n" for g in range(cfg.gpus))
    return "".join(lines)


def write_nvidia_smi_log(
    path: Path,
    cfg: TraceConfig,
    name: str | None = "NVIDIA H100 80GB HBM3",
    rows: int | None = None,
    chunk: int = 100_000,
) -> int:
    """Write the trace as nvidia-smi CSV; ``rows`` (if given) overrides ``duration_s``.

    Returns the number of data rows written."""
    rng = np.random.default_rng(cfg.seed)
    offsets = rng.uniform(-cfg.gpu_spread_w, cfg.gpu_spread_w, cfg.gpus)
    n_times = (rows // cfg.gpus) if rows else int(cfg.duration_s / cfg.interval_s)
    written, t_last = 0, 0.0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(SMI_HEADER if name else SMI_HEADER_NO_NAME)
        for lo in range(0, n_times, chunk):
            count = min(chunk, n_times - lo)
            times = sample_times(cfg, rng, t_last, count)
            t_last = float(times[-1])
            power = clean_power(cfg, times, offsets) + rng.normal(
                0.0, cfg.noise_w, (count, cfg.gpus)
            )
            fh.write(_format_chunk(cfg, times, np.maximum(power, 0.0), name))
            written += count * cfg.gpus
    return written

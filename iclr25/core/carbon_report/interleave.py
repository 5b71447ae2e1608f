"""Which GPU each row of a power log belongs to, when the log has no GPU id column.

``nvidia-smi --query-gpu=timestamp,power.draw --format=csv -l 1`` on a box with K GPUs
prints K lines per sample, GPU 0 first; without ``index`` / ``uuid`` / ``pci.bus_id`` the
only trace of K is the layout of the timestamps. Reading such a log as one GPU gives about
1/K of the energy (the other GPUs' lines look like repeated timestamps), so the layout is
read from the first rows of the file (:func:`detect`):

1. **shared timestamps**: consecutive rows share a timestamp in runs of one length K
   (the first and last run may be cut): K GPUs, row ``i`` is GPU ``(i + offset) mod K``;
2. **a repeating per-sample pattern**: timestamps all distinct, but K rows close together
   (each GPU queried a few ms apart, in any order) then a sampling period: every K-th step
   is more than :data:`PATTERN_RATIO` times longer than every other step;
3. otherwise, with distinct increasing timestamps: one GPU;
4. anything else (runs of different lengths, timestamps going backwards without a
   pattern) is ambiguous and refused — ``--gpus N`` or ``--gpu-column NAME`` says it.

The layout found is checked on every later row (a row of GPU k must lie within a quarter of
the sampling period of its sample's first row — or, for a pattern, within half the
shortest period): a log whose GPU lines stop following
the layout (a GPU's line missing, another appended) is an error naming the line, never a
silent mis-attribution. Repeated header lines and blank lines take no GPU slot.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from iclr25.errors import InputError

PROBE_ROWS = 4096  # rows of the file the layout is read from
MAX_GPUS = 64  # the most GPUs one log is searched for (a node has at most 16 today)
PATTERN_RATIO = 4.0  # sample period / within-sample skew for the pattern of case 2
FIX = "pass --gpus N (GPUs per file) or --gpu-column NAME (the column naming the GPU)"


@dataclasses.dataclass(frozen=True)
class Layout:
    """How sample rows map to GPUs: row ``i`` (0-based among sample rows) is GPU
    ``(i + offset) mod gpus``; ``skew_s`` is the largest distance from its sample's first
    row a row may have (None: not checked)."""

    gpus: int
    offset: int = 0
    skew_s: float | None = None
    how: str = "one GPU"

    def gpu_of(self, slots: np.ndarray) -> np.ndarray:
        return (slots + self.offset) % self.gpus


def _runs(t: np.ndarray) -> np.ndarray:
    """Lengths of the runs of equal consecutive values of ``t`` (n,)."""
    starts = np.flatnonzero(np.concatenate([[True], t[1:] != t[:-1]]))
    return np.diff(np.append(starts, len(t)))


def _shared(t: np.ndarray) -> Layout | str | None:
    """Case 1: a layout, a reason it is ambiguous, or None (no shared timestamps)."""
    runs = _runs(t)
    k = int(runs.max())
    if k == 1:
        return None
    inner = runs[1:-1] if len(runs) >= 3 else runs
    steps = np.diff(t[np.cumsum(runs) - 1])  # between consecutive samples
    if (inner != k).any() or runs[0] > k or runs[-1] > k or (steps <= 0).any():
        sizes = sorted({int(r) for r in inner})
        return (
            f"runs of {sizes[0]} to {sizes[-1]} rows share a timestamp"
            if len(sizes) > 1
            else "samples repeat or go back in time"
        )
    if k > MAX_GPUS:
        return f"{k} rows share each timestamp (more than {MAX_GPUS} GPUs)"
    skew = 0.25 * float(np.median(steps)) if len(steps) else 0.0  # jitter tolerated later
    return Layout(k, (k - int(runs[0])) % k, skew, f"{k} GPUs: {k} rows per timestamp")


def _pattern(t: np.ndarray) -> Layout | None:
    """Case 2: K rows a few ms apart, then a sampling period, repeated (K >= 2)."""
    step = np.abs(np.diff(t))  # (n - 1,)
    n = len(step)
    for k in range(2, min(MAX_GPUS, (n + 1) // 3) + 1):
        phase = int(np.argmax(step)) % k  # the longest step is a between-sample one
        between = np.zeros(n, dtype=bool)
        between[phase::k] = True
        within = step[~between]
        if len(within) == 0 or (np.diff(t)[between] <= 0).any():
            continue
        if step[between].min() > PATTERN_RATIO * within.max():
            skew = float(step[between].min()) / 2
            offset = (k - 1 - phase) % k  # row `phase` ends the first sample
            how = f"{k} GPUs: a repeating pattern of {k} rows per sample"
            return Layout(k, offset, skew, how)
    return None


def detect(t_s: np.ndarray, where: str) -> Layout:
    """The layout of a log without a GPU id column from its first sample rows' times
    (NaN for rows without a time, which are left out). InputError when ambiguous."""
    t = np.asarray(t_s, dtype=np.float64)[:PROBE_ROWS]
    t = t[np.isfinite(t)]
    if len(t) < 2:
        return Layout(1, how="one GPU (too few rows to see more)")
    shared = _shared(t)
    if isinstance(shared, Layout):
        return shared
    if shared is None:
        pattern = _pattern(t)
        if pattern is not None:
            return pattern
        if (np.diff(t) > 0).all():
            return Layout(1, how="one GPU (distinct, increasing timestamps)")
        shared = "timestamps go back in time between consecutive rows"
    raise InputError(
        f"{where}: no GPU id column, and the rows' timestamps do not show how many GPUs the "
        f"log interleaves ({shared})",
        FIX,
    )


def given(gpus: int, t_s: np.ndarray) -> Layout:
    """The layout for ``--gpus N``: the detected one when it agrees with N (its offset and
    check), else row ``i`` is GPU ``i mod N`` unchecked."""
    if gpus == 1:
        return Layout(1, how="one GPU (--gpus 1)")
    try:
        found = detect(t_s, "")
    except InputError:
        found = None
    if found is not None and found.gpus == gpus:
        return dataclasses.replace(found, how=f"{found.how} (--gpus {gpus})")
    return Layout(gpus, 0, None, f"{gpus} GPUs in turn, row i is GPU i mod {gpus} (--gpus)")


def check(layout: Layout, slots: np.ndarray, t: np.ndarray, carry: tuple[int, float] | None):
    """Rows (among ``slots``, (n,) sample slots, times ``t`` (n,)) that break the layout,
    and the (slot, time) of the last sample start to carry into the next batch.

    ``carry``: the slot and time of the current sample's first row from the previous batch."""
    k = layout.gpus
    start_slot = slots - layout.gpu_of(slots)  # (n,) slot of each row's sample start
    is_start = start_slot == slots
    idx = np.where(is_start, np.arange(len(slots)), -1)
    last = np.maximum.accumulate(idx) if len(idx) else idx  # latest start row at or before
    t_start = np.where(last >= 0, t[np.maximum(last, 0)], np.nan)
    if carry is not None:
        from_carry = (last < 0) & (start_slot == carry[0])
        t_start = np.where(from_carry, carry[1], t_start)
    known = np.isfinite(t_start) & np.isfinite(t)
    bad = known & (np.abs(t - t_start) > layout.skew_s)
    starts = np.flatnonzero(is_start & np.isfinite(t))
    new_carry = (int(slots[starts[-1]]), float(t[starts[-1]])) if len(starts) else carry
    if k == 1:
        bad[:] = False
    return np.flatnonzero(bad), new_carry

"""Power profile of GPU logs (Morrison et al., ICLR 2025, Sec. on power fluctuations).

The paper's finding: during training a GPU draws above 600 W of its 700 W maximum while
computing and ~100 W while checkpointing, so power swings between ~15% and ~85% of the
maximum — sharp changes that matter for grid planning. This module measures that from the
sampling intervals the integrator produces, streaming (constant memory per GPU):

- time and energy at each share of TDP: fine histograms in steps of 0.1% of TDP (up to
  150%, one bin above), weighted by interval duration and by interval energy; 5% bins,
  time below ``low_share`` (15%) and above ``high_share`` (85%), and time-weighted power
  percentiles are read from them (resolution 0.1% of TDP, 0.7 W on an H100).
- dips: a dip is a maximal run of consecutive sampling intervals whose mean power is below
  ``dip_threshold`` × TDP, lasting at least ``dip_min_s``; a gap ends a dip. Reported:
  count, durations, energy used inside dips and the deficit against the GPU's baseline
  (time-weighted median power of intervals above the threshold) — the load the grid saw
  disappear.
- ramp rates: (p_end - p_start) / dt per interval, W/s; time-weighted percentiles of |ramp|
  from 1 W/s bins up to 20 kW/s (one bin above), exact maximum rise and fall.
- a binned series of the logged total power (``bin_s``, 1 s by default, doubled whenever it
  would exceed 2^21 bins): interval energy is assigned to the bin of the interval midpoint,
  and bin power is energy / covered GPU-seconds × GPUs, so uneven sampling does not bias it.
  The plot and the ramp rates of the aggregate (what a grid operator sees) come from it.

Paper symbols: TDP (maximum power draw, 700 W for H100) -> ``tdp_w``; the 15% / 85%
bounds -> ``low_share`` / ``high_share``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

SHARE_RES = 1000  # fine bins per 100% of TDP
SHARE_BINS = 1500  # fine bins up to 150% of TDP; index SHARE_BINS collects the rest
RAMP_RES_W_PER_S = 1.0
RAMP_BINS = 20_000  # up to 20 kW/s; index RAMP_BINS collects the rest
MAX_SERIES_BINS = 1 << 21
MAX_DIPS_KEPT = 20_000  # dips kept with their times (counts and sums stay exact beyond)
PERCENTILES = (5, 25, 50, 75, 95, 99)


@dataclasses.dataclass(frozen=True)
class ProfileConfig:
    dip_threshold: float = 0.5  # share of TDP; the paper's dips reach ~15%, compute ~85%
    dip_min_s: float = 5.0  # shorter dips are noise at sub-second sampling
    low_share: float = 0.15  # the paper's lower bound of the power swings
    high_share: float = 0.85  # the paper's upper bound
    bin_s: float = 1.0  # resolution of the aggregate series (grows for long logs)


def _grow(array: np.ndarray, n: int, fill: float) -> np.ndarray:
    if array.shape[0] >= n:
        return array
    extra = np.full((n - array.shape[0], *array.shape[1:]), fill, dtype=array.dtype)
    return np.concatenate([array, extra])


class ProfileAccumulator:
    """Histograms, dips, ramps and the binned series of one log file, per dense GPU id."""

    def __init__(self, config: ProfileConfig) -> None:
        self.config = config
        self.tdp_w = np.zeros(0)
        self.hist_time = np.zeros((0, SHARE_BINS + 1))
        self.hist_energy = np.zeros((0, SHARE_BINS + 1))
        self.ramp_hist = np.zeros((0, RAMP_BINS + 1))
        self.ramp_max_up = np.zeros(0)
        self.ramp_max_down = np.zeros(0)
        self.in_dip = np.zeros(0, dtype=bool)
        self.open_dip = np.zeros((0, 3))  # (start_s, duration_s, energy_j) of an open dip
        self.dip_count = np.zeros(0, dtype=np.int64)
        self.dip_s = np.zeros(0)
        self.dip_energy_j = np.zeros(0)
        self.dips: list[tuple[int, float, float, float]] = []  # (gpu, start_s, dur_s, J)
        self.bin_s = float(config.bin_s)
        self.series_energy_j = np.zeros(0)
        self.series_cover_s = np.zeros(0)

    def add_gpus(self, tdp_w: list[float]) -> None:
        """Register GPUs (dense ids continue from the current count) with their TDPs."""
        n = len(self.tdp_w) + len(tdp_w)
        self.tdp_w = np.concatenate([self.tdp_w, np.asarray(tdp_w, dtype=np.float64)])
        self.hist_time = _grow(self.hist_time, n, 0.0)
        self.hist_energy = _grow(self.hist_energy, n, 0.0)
        self.ramp_hist = _grow(self.ramp_hist, n, 0.0)
        self.ramp_max_up = _grow(self.ramp_max_up, n, -np.inf)
        self.ramp_max_down = _grow(self.ramp_max_down, n, np.inf)
        self.in_dip = _grow(self.in_dip, n, False)
        self.open_dip = _grow(self.open_dip, n, 0.0)
        self.dip_count = _grow(self.dip_count, n, 0)
        self.dip_s = _grow(self.dip_s, n, 0.0)
        self.dip_energy_j = _grow(self.dip_energy_j, n, 0.0)

    # -- one block of intervals ------------------------------------------------------
    def add(self, cols, t_end, dt, step, p_mid, energy_j, ok) -> None:
        """Intervals of a block, all arrays (m, k) for GPUs ``cols`` (k,): each interval
        ends at ``t_end``, lasts ``dt``, changes power by ``step`` (overwritten here) and
        has mean power ``p_mid``; ``ok`` marks intervals that count (no gap, a previous
        sample exists)."""
        all_ok = bool(ok.all())  # the common case: no gap and not the first block
        time_w = dt if all_ok else np.where(ok, dt, 0.0)
        self._add_shares(cols, p_mid if all_ok else np.where(ok, p_mid, 0.0), time_w, energy_j)
        self._add_ramps(cols, time_w, step, ok, all_ok)
        below = p_mid < self.config.dip_threshold * self.tdp_w[cols]
        if not all_ok:
            below &= ok
        for j in np.flatnonzero(below.any(axis=0) | self.in_dip[cols]):
            t_start = t_end[:, j] - dt[:, j]
            self._add_dips(int(cols[j]), below[:, j], t_start, dt[:, j], energy_j[:, j])
        self._add_series(t_end, dt, time_w, energy_j, ok, all_ok)

    def _flat_index(self, cols, index, width: int) -> np.ndarray:
        """Bin index (m, k) of GPU columns ``cols`` -> index into (n_gpus * width,), flat."""
        if len(cols) > 1 or cols[0]:
            index += (cols * width)[None, :]
        return index.ravel()

    def _bincount_2d(self, flat, weights, width: int) -> np.ndarray:
        """Per-GPU histograms: (n_gpus, width) sums of ``weights`` at ``flat``."""
        size = len(self.tdp_w) * width
        counts = np.bincount(flat, weights=weights.ravel(), minlength=size)
        return counts.reshape(len(self.tdp_w), width)

    def _add_shares(self, cols, p_mid, time_w, energy_j) -> None:
        scaled = p_mid * (SHARE_RES / self.tdp_w[cols])  # (m, k) in fine bins
        np.minimum(scaled, SHARE_BINS, out=scaled)
        flat = self._flat_index(cols, scaled.astype(np.intp), SHARE_BINS + 1)
        self.hist_time += self._bincount_2d(flat, time_w, SHARE_BINS + 1)
        self.hist_energy += self._bincount_2d(flat, energy_j, SHARE_BINS + 1)

    def _add_ramps(self, cols, time_w, step, ok, all_ok: bool) -> None:
        ramp = step  # (m, k) W, then W/s in place
        if all_ok:
            ramp /= time_w
        else:
            ramp = np.where(ok, ramp / np.where(ok, time_w, 1.0), 0.0)
        if ok.any():
            up = ramp.max(axis=0) if all_ok else np.where(ok, ramp, -np.inf).max(axis=0)
            down = ramp.min(axis=0) if all_ok else np.where(ok, ramp, np.inf).min(axis=0)
            self.ramp_max_up[cols] = np.maximum(self.ramp_max_up[cols], up)
            self.ramp_max_down[cols] = np.minimum(self.ramp_max_down[cols], down)
        magnitude = np.abs(ramp, out=ramp)
        if RAMP_RES_W_PER_S != 1.0:
            magnitude /= RAMP_RES_W_PER_S
        np.minimum(magnitude, RAMP_BINS, out=magnitude)
        flat = self._flat_index(cols, magnitude.astype(np.intp), RAMP_BINS + 1)
        self.ramp_hist += self._bincount_2d(flat, time_w, RAMP_BINS + 1)

    def _close_dips(self, gpu: int, starts, durations, energies) -> None:
        """Record finished dips of one GPU that last at least ``dip_min_s``."""
        keep = np.asarray(durations) >= self.config.dip_min_s
        if not keep.any():
            return
        starts, durations = np.asarray(starts)[keep], np.asarray(durations)[keep]
        energies = np.asarray(energies)[keep]
        self.dip_count[gpu] += len(durations)
        self.dip_s[gpu] += durations.sum()
        self.dip_energy_j[gpu] += energies.sum()
        room = MAX_DIPS_KEPT - len(self.dips)
        if room > 0:
            kept = zip(
                starts[:room].tolist(),
                durations[:room].tolist(),
                energies[:room].tolist(),
                strict=True,
            )
            self.dips.extend((gpu, s, d, e) for s, d, e in kept)

    def _add_dips(self, gpu: int, below, t_start, dt, energy_j) -> None:
        """Runs of below-threshold intervals of one GPU, continuing an open dip."""
        rows = np.flatnonzero(below)
        continues = len(rows) > 0 and rows[0] == 0
        if self.in_dip[gpu] and not continues:
            self._close_dips(gpu, *self.open_dip[gpu, :, None])
            self.in_dip[gpu] = False
        if len(rows) == 0:
            return
        breaks = np.flatnonzero(np.diff(rows) > 1)
        first = np.concatenate([[0], breaks + 1])  # positions in rows where runs start
        durations = np.add.reduceat(dt[rows], first)
        energies = np.add.reduceat(energy_j[rows], first)
        starts = t_start[rows[first]]
        if self.in_dip[gpu]:  # the open dip continues into this block's first run
            starts[0] = self.open_dip[gpu, 0]
            durations[0] += self.open_dip[gpu, 1]
            energies[0] += self.open_dip[gpu, 2]
        still_open = bool(rows[-1] == len(below) - 1)
        closed = len(first) - int(still_open)
        self._close_dips(gpu, starts[:closed], durations[:closed], energies[:closed])
        self.in_dip[gpu] = still_open
        if still_open:
            self.open_dip[gpu] = (starts[-1], durations[-1], energies[-1])

    def _add_series(self, t_end, dt, time_w, energy_j, ok, all_ok: bool) -> None:
        if not all_ok and not ok.any():
            return
        top = float(np.nanmax(t_end[-1]))  # times increase down each column
        while top / self.bin_s >= MAX_SERIES_BINS:
            self._coarsen()
        mid = t_end - 0.5 * dt  # (m, k) interval midpoints, increasing down each column
        if self.bin_s != 1.0:
            mid /= self.bin_s
        if not all_ok:
            mid = np.where(ok, np.maximum(mid, 0.0), 0.0)
        elif np.nanmin(mid[0]) < 0:
            np.maximum(mid, 0.0, out=mid)
        index = mid.astype(np.intp).ravel()
        size = max(len(self.series_energy_j), int(top / self.bin_s) + 1)
        self.series_energy_j = _grow(self.series_energy_j, size, 0.0)
        self.series_cover_s = _grow(self.series_cover_s, size, 0.0)
        self.series_energy_j += np.bincount(index, energy_j.ravel(), minlength=size)
        self.series_cover_s += np.bincount(index, time_w.ravel(), minlength=size)

    def _coarsen(self) -> None:
        """Double the bin width, merging pairs of bins."""
        for name in ("series_energy_j", "series_cover_s"):
            values = getattr(self, name)
            if len(values) % 2:
                values = np.append(values, 0.0)
            setattr(self, name, values.reshape(-1, 2).sum(axis=1))  # (n/2,) pairs merged
        self.bin_s *= 2.0

    def finish(self) -> None:
        """Close dips still open at the end of the log."""
        for gpu in np.flatnonzero(self.in_dip):
            self._close_dips(int(gpu), *self.open_dip[gpu, :, None])
        self.in_dip[:] = False


# ---------------------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------------------
def _weighted_percentiles(hist: np.ndarray, centres: np.ndarray) -> dict[str, float]:
    total = hist.sum()
    if total <= 0:
        return {f"p{q}": float("nan") for q in PERCENTILES}
    cdf = np.cumsum(hist) / total
    picks = np.searchsorted(cdf, np.asarray(PERCENTILES) / 100.0)
    picks = np.minimum(picks, len(centres) - 1)
    return {f"p{q}": float(centres[i]) for q, i in zip(PERCENTILES, picks, strict=True)}


def share_table(hist_time: np.ndarray, hist_energy: np.ndarray) -> list[dict]:
    """Fractions of time and energy in 5%-of-TDP bins (0-100%), then one bin above 100%."""
    step = SHARE_RES // 20
    time_total, energy_total = max(hist_time.sum(), 1e-300), max(hist_energy.sum(), 1e-300)
    rows = []
    for k in range(21):
        lo, hi = k * step, ((k + 1) * step if k < 20 else SHARE_BINS + 1)
        rows.append(
            {
                "share_from": k / 20,
                "share_to": (k + 1) / 20 if k < 20 else None,
                "time_frac": float(hist_time[lo:hi].sum() / time_total),
                "energy_frac": float(hist_energy[lo:hi].sum() / energy_total),
            }
        )
    return rows


def share_summary(hist_time: np.ndarray, hist_energy: np.ndarray, config: ProfileConfig) -> dict:
    total = hist_time.sum()
    low = int(round(config.low_share * SHARE_RES))
    high = int(round(config.high_share * SHARE_RES))
    centres = (np.arange(SHARE_BINS + 1) + 0.5) / SHARE_RES
    frac = (lambda x: float(x / total)) if total > 0 else (lambda x: float("nan"))
    return {
        "share_of_tdp": share_table(hist_time, hist_energy),
        "time_below_low_frac": frac(hist_time[:low].sum()),
        "time_above_high_frac": frac(hist_time[high:].sum()),
        "share_percentiles": _weighted_percentiles(hist_time, centres),
    }


def ramp_summary(ramp_hist: np.ndarray, max_up: float, max_down: float) -> dict:
    centres = (np.arange(RAMP_BINS + 1) + 0.5) * RAMP_RES_W_PER_S
    pct = _weighted_percentiles(ramp_hist, centres)
    return {
        "abs_ramp_w_per_s": {k: pct[k] for k in ("p50", "p95", "p99")},
        "max_rise_w_per_s": float(max_up) if np.isfinite(max_up) else float("nan"),
        "max_fall_w_per_s": float(-max_down) if np.isfinite(max_down) else float("nan"),
    }


def baseline_power_w(hist_time: np.ndarray, tdp_w: float, threshold: float) -> float:
    """Time-weighted median power of intervals at or above the dip threshold."""
    start = int(np.ceil(threshold * SHARE_RES))
    above = hist_time[start:]
    if above.sum() <= 0:
        return float("nan")
    centres = (np.arange(start, SHARE_BINS + 1) + 0.5) / SHARE_RES
    return _weighted_percentiles(above, centres)["p50"] * tdp_w

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
    """Histograms, dips, ramps and the binned series of one log file, per dense GPU id.

    Histograms are stored bin-major, (bins, GPUs), so that a block's ``np.bincount`` only
    spans the bins it reaches; ``hist_time`` & co. are their (GPUs, bins) views."""

    def __init__(self, config: ProfileConfig) -> None:
        self.config = config
        self.tdp_w = np.zeros(0)
        self._hists = {  # (bins, GPUs) each
            "time": np.zeros((SHARE_BINS + 1, 0)),
            "energy": np.zeros((SHARE_BINS + 1, 0)),
            "ramp": np.zeros((RAMP_BINS + 1, 0)),
        }
        self.ramp_max_up = np.zeros(0)
        self.ramp_max_down = np.zeros(0)
        self.in_dip = np.zeros(0, dtype=bool)
        self.open_dip = np.zeros((0, 3))  # (start_s, duration_s, energy_j) of an open dip
        self.dip_count = np.zeros(0, dtype=np.int64)
        self.dip_s = np.zeros(0)
        self.dip_energy_j = np.zeros(0)
        self.dips: list[tuple[int, float, float, float]] = []  # (gpu, start_s, dur_s, J)
        self.bin_s = float(config.bin_s)
        self._series = np.zeros((2, 0))  # (energy J, covered GPU-s) per bin, with spare room
        self._series_len = 0  # bins in use

    hist_time = property(lambda self: self._hists["time"].T)  # (GPUs, share bins)
    hist_energy = property(lambda self: self._hists["energy"].T)  # (GPUs, share bins)
    ramp_hist = property(lambda self: self._hists["ramp"].T)  # (GPUs, ramp bins)
    series_energy_j = property(lambda self: self._series[0, : self._series_len])
    series_cover_s = property(lambda self: self._series[1, : self._series_len])

    def add_gpus(self, tdp_w: list[float]) -> None:
        """Register GPUs (dense ids continue from the current count) with their TDPs."""
        n = len(self.tdp_w) + len(tdp_w)
        self.tdp_w = np.concatenate([self.tdp_w, np.asarray(tdp_w, dtype=np.float64)])
        for key, hist in self._hists.items():
            self._hists[key] = np.ascontiguousarray(_grow(hist.T, n, 0.0).T)
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
        if below.any() or self.in_dip[cols].any():
            self._add_dips(cols, below, t_end, dt, energy_j)
        self._add_series(t_end, dt, time_w, energy_j, ok, all_ok)

    def _histogram(self, key: str, cols, index, weights) -> None:
        """Add ``weights`` (m, k) at bins ``index`` (m, k, intp, overwritten) of GPUs
        ``cols`` (k,) to the (bins, GPUs) histogram ``key``."""
        hist = self._hists[key]
        index *= hist.shape[1]
        index += cols[None, :]  # flat position in the bin-major histogram
        counts = np.bincount(index.ravel(), weights=weights.ravel())
        hist.reshape(-1)[: len(counts)] += counts

    def _add_shares(self, cols, p_mid, time_w, energy_j) -> None:
        scaled = p_mid * (SHARE_RES / self.tdp_w[cols])  # (m, k) in fine bins
        np.minimum(scaled, SHARE_BINS, out=scaled)
        index = scaled.astype(np.intp)
        self._histogram("time", cols, index.copy(), time_w)
        self._histogram("energy", cols, index, energy_j)

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
        self._histogram("ramp", cols, magnitude.astype(np.intp), time_w)

    def _close_dips(self, gpus, starts, durations, energies) -> None:
        """Record finished dips (arrays, in order) that last at least ``dip_min_s``."""
        keep = durations >= self.config.dip_min_s
        if not keep.any():
            return
        gpus, starts, durations, energies = (a[keep] for a in (gpus, starts, durations, energies))
        np.add.at(self.dip_count, gpus, 1)
        np.add.at(self.dip_s, gpus, durations)
        np.add.at(self.dip_energy_j, gpus, energies)
        room = MAX_DIPS_KEPT - len(self.dips)
        if room > 0:
            kept = (a[:room].tolist() for a in (gpus, starts, durations, energies))
            self.dips.extend(zip(*kept, strict=True))

    def _add_dips(self, cols, below, t_end, dt, energy_j) -> None:
        """Runs of below-threshold intervals in a block (m, k), all GPUs at once; a run
        touching the block's start continues the GPU's open dip, one touching its end
        stays open."""
        m = below.shape[0]
        flat = below.T.ravel()  # (k * m,) GPU after GPU, each in time order
        first_row = np.zeros_like(flat)
        first_row[::m] = True
        last_row = np.zeros_like(flat)
        last_row[m - 1 :: m] = True
        run_start = np.flatnonzero(flat & (first_row | ~np.roll(flat, 1)))
        run_end = np.flatnonzero(flat & (last_row | ~np.roll(flat, -1)))
        col = run_start // m  # position in cols of each run
        masked = np.where(flat, dt.T.ravel(), 0.0)  # zeros between runs add nothing
        durations = np.add.reduceat(masked, run_start) if len(run_start) else masked[:0]
        masked = np.where(flat, energy_j.T.ravel(), 0.0)
        energies = np.add.reduceat(masked, run_start) if len(run_start) else masked[:0]
        row = run_start % m
        starts = t_end[row, col] - dt[row, col]
        was_open = self.in_dip[cols]
        continues = np.zeros(len(cols), dtype=bool)
        continues[col[row == 0]] = True
        merge = np.flatnonzero(was_open[col] & (row == 0))  # runs continuing an open dip
        open_values = self.open_dip[cols[col[merge]]]  # (runs, 3)
        starts[merge] = open_values[:, 0]
        durations[merge] += open_values[:, 1]
        energies[merge] += open_values[:, 2]
        ended = np.flatnonzero(was_open & ~continues)  # open dips this block does not extend
        stays = run_end % m == m - 1
        gpus = np.concatenate([cols[ended], cols[col[~stays]]])
        order = np.argsort(np.concatenate([ended, col[~stays]]), kind="stable")
        self._close_dips(
            gpus[order],
            np.concatenate([self.open_dip[cols[ended], 0], starts[~stays]])[order],
            np.concatenate([self.open_dip[cols[ended], 1], durations[~stays]])[order],
            np.concatenate([self.open_dip[cols[ended], 2], energies[~stays]])[order],
        )
        self.in_dip[cols] = False
        open_cols = cols[col[stays]]
        self.in_dip[open_cols] = True
        self.open_dip[open_cols] = np.stack(
            [starts[stays], durations[stays], energies[stays]], axis=1
        )

    def _add_series(self, t_end, dt, time_w, energy_j, ok, all_ok: bool) -> None:
        if not all_ok and not ok.any():
            return
        top = float(np.nanmax(t_end[-1]))  # times increase down each column
        while top / self.bin_s >= MAX_SERIES_BINS:
            self._coarsen()
        mid = t_end - 0.5 * dt  # (m, k) interval midpoints
        if not all_ok:  # intervals that do not count weigh 0: put them in a used bin
            mid = np.where(ok, mid, mid[ok].min())
        np.maximum(mid, 0.0, out=mid)
        if self.bin_s != 1.0:
            mid /= self.bin_s
        index = mid.astype(np.intp)  # (m, k)
        if all_ok:  # midpoints increase down each column: the ends bound them
            lo, hi = int(index[0].min()), int(index[-1].max())
        else:
            lo, hi = int(index.min()), int(index.max())
        index = index.ravel()
        self._series_len = max(self._series_len, int(top / self.bin_s) + 1, hi + 1)
        if self._series.shape[1] < self._series_len:  # grow by half again: few copies
            room = max(self._series_len, self._series.shape[1] * 3 // 2)
            self._series = _grow(self._series.T, room, 0.0).T.copy()
        index -= lo
        span = hi - lo + 1
        self._series[0, lo : hi + 1] += np.bincount(index, energy_j.ravel(), minlength=span)
        self._series[1, lo : hi + 1] += np.bincount(index, time_w.ravel(), minlength=span)

    def _coarsen(self) -> None:
        """Double the bin width, merging pairs of bins."""
        values = self._series[:, : self._series_len]
        if self._series_len % 2:
            values = np.concatenate([values, np.zeros((2, 1))], axis=1)
        self._series = values.reshape(2, -1, 2).sum(axis=2)  # (2, n/2): pairs merged
        self._series_len = self._series.shape[1]
        self.bin_s *= 2.0

    def finish(self) -> None:
        """Close dips still open at the end of the log."""
        gpus = np.flatnonzero(self.in_dip)
        self._close_dips(gpus, *self.open_dip[gpus].T)
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

"""Energy of GPU power logs: trapezoid integration per GPU, streaming, with gap handling.

For one GPU with samples (t_i, p_i) in time order, the energy is the trapezoid sum

    E = sum_i (p_i + p_{i+1}) / 2 · (t_{i+1} - t_i)          [J, then / 3.6e6 -> kWh]

which is exact for power that varies linearly between samples and needs no regular
sampling. An interval longer than ``max_gap_s`` is a gap: it is not integrated (no silent
bridging over a logger outage), but counted, timed and reported with the energy bridging
it would have added. Samples with the same timestamp as an earlier one (duplicates) or an
earlier timestamp (out of order) are dropped and counted; ``strict`` makes them errors.

Streaming: rows arrive in batches from :mod:`power_log`. Each GPU keeps its last sample
(time, power) between batches, so an interval spanning a batch boundary is integrated
like any other. Two paths produce identical intervals:

- regular: ``nvidia-smi`` prints GPUs 0..K-1 in turn, so a batch reshapes to (m, K) with
  one column per GPU and no sorting (leftover rows of an incomplete group are carried to
  the next batch); used when every row is valid and times increase in every column;
- general: a stable sort by GPU id, then per GPU the drop rules above.

The intervals of each block go to :class:`profile.ProfileAccumulator` as well.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from iclr25.core.carbon_report.power_log import Problems, SampleBatch
from iclr25.core.carbon_report.profile import ProfileAccumulator
from iclr25.errors import InputError

J_PER_KWH = 3.6e6
MAX_GAPS_KEPT = 1000


@dataclasses.dataclass(frozen=True)
class IntegrationConfig:
    max_gap_s: float = 60.0  # a longer interval is reported as a gap and not integrated
    strict: bool = False  # duplicate / out-of-order timestamps are errors, not skips


class FileIntegrator:
    """Per-GPU trapezoid integration of one log file, batch by batch."""

    def __init__(
        self,
        config: IntegrationConfig,
        profile: ProfileAccumulator,
        where: Callable[[int], str] = str,
        problems: Problems | None = None,
    ) -> None:
        self.config = config
        self.profile = profile
        self.where = where  # data row index -> "file line N" for errors
        self.problems = problems if problems is not None else Problems()  # dropped samples
        self.k = 0
        for name in ("energy_j", "covered_s", "gap_s", "gap_bridged_j", "max_gap_s"):
            setattr(self, name, np.zeros(0))
        for name in ("n_samples", "gap_count", "duplicates", "out_of_order"):
            setattr(self, name, np.zeros(0, dtype=np.int64))
        self.last_t, self.last_p = np.zeros(0), np.zeros(0)
        self.first_t = np.zeros(0)
        self.gaps: list[tuple[int, float, float]] = []  # (gpu, start_s, duration_s)
        self._carry: tuple[np.ndarray, ...] | None = None  # rows of an incomplete group
        self._carry_row0 = 0  # data row index of the first carried row

    def add_gpus(self, tdp_w: list[float]) -> None:
        """Register new GPUs (dense ids continue from the current count)."""
        n = self.k + len(tdp_w)
        for name in ("energy_j", "covered_s", "gap_s", "gap_bridged_j", "max_gap_s"):
            setattr(self, name, np.concatenate([getattr(self, name), np.zeros(len(tdp_w))]))
        for name in ("n_samples", "gap_count", "duplicates", "out_of_order"):
            grown = np.concatenate([getattr(self, name), np.zeros(len(tdp_w), np.int64)])
            setattr(self, name, grown)
        nans = np.full(len(tdp_w), np.nan)
        self.last_t = np.concatenate([self.last_t, nans])
        self.last_p = np.concatenate([self.last_p, nans])
        self.first_t = np.concatenate([self.first_t, nans])
        self.profile.add_gpus(tdp_w)
        self.k = n

    # -- batches ---------------------------------------------------------------------
    def add(self, batch: SampleBatch) -> None:
        t, gpu, power, row0 = batch.t_s, batch.gpu, batch.power_w, batch.row0
        if self._carry is not None:  # the last rows of the previous batch come first
            t, gpu, power = (
                np.concatenate([c, x]) for c, x in zip(self._carry, (t, gpu, power), strict=True)
            )
            row0, self._carry = self._carry_row0, None
        if not self._add_regular(t, gpu, power, row0):
            self._add_general(t, gpu, power, row0)

    def _add_regular(self, t, gpu, power, row0: int) -> bool:
        k = self.k
        m = len(t) // k if k else 0
        if m == 0 or (gpu < 0).any():
            return False
        groups = gpu[: m * k].reshape(m, k)  # (m, k): row i of group, column = GPU id
        if not (groups == np.arange(k)).all():
            return False
        times = t[: m * k].reshape(m, k)
        first_step = times[0] - self.last_t
        if (first_step <= 0).any() or (m > 1 and (times[1:] <= times[:-1]).any()):
            return False
        self._integrate(np.arange(k), times, power[: m * k].reshape(m, k))
        if m * k < len(t):
            self._carry = (t[m * k :], gpu[m * k :], power[m * k :])
            self._carry_row0 = row0 + m * k
        return True

    def _add_general(self, t, gpu, power, row0: int) -> None:
        valid = np.flatnonzero(gpu >= 0)
        order = valid[np.argsort(gpu[valid], kind="stable")]
        ids = gpu[order]
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(ids)) + 1, [len(ids)]])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if hi <= lo:
                continue
            sel = order[lo:hi]
            g = int(ids[lo])
            times, watts = self._drop_unordered(g, t[sel], power[sel], row0 + sel)
            if len(times):
                self._integrate(np.array([g]), times[:, None], watts[:, None])

    def _drop_unordered(self, g: int, times, watts, rows):
        """Keep samples later than every earlier sample of GPU ``g``; count the others."""
        previous_max = np.fmax.accumulate(np.concatenate([[self.last_t[g]], times]))[:-1]
        keep = ~(times <= previous_max)
        if keep.all():
            return times, watts
        dropped = np.flatnonzero(~keep)
        duplicate = times[dropped] == previous_max[dropped]
        if self.config.strict:
            what = "duplicate timestamp" if duplicate[0] else "timestamp earlier than the previous"
            raise InputError(
                f"{self.where(int(rows[dropped[0]]))}: {what} for GPU sample",
                "sort the log by time and remove duplicates, or drop --strict to skip them",
            )
        self.duplicates[g] += int(duplicate.sum())
        self.out_of_order[g] += int((~duplicate).sum())
        for kind, rows_of_kind in (
            ("duplicate_timestamps", rows[dropped[duplicate]]),
            ("out_of_order", rows[dropped[~duplicate]]),
        ):
            where = [self.where(int(r)) for r in rows_of_kind[:5]]
            self.problems.add(kind, len(rows_of_kind), where)
        return times[keep], watts[keep]

    # -- one block: (m, k) samples of GPUs cols ----------------------------------------
    def _integrate(self, cols: np.ndarray, times: np.ndarray, watts: np.ndarray) -> None:
        dt = np.empty_like(times)  # (m, k) interval ending at each sample
        dt[0] = times[0] - self.last_t[cols]
        np.subtract(times[1:], times[:-1], out=dt[1:])
        step = np.empty_like(watts)  # (m, k) change of power over each interval
        step[0] = watts[0] - self.last_p[cols]
        np.subtract(watts[1:], watts[:-1], out=step[1:])
        ok = dt <= self.config.max_gap_s  # False for NaN: no previous sample yet
        p_mid = watts - 0.5 * step  # mean of the interval's end points
        if ok.all():
            energy_j = p_mid * dt
            self.covered_s[cols] += dt.sum(axis=0)
        else:
            energy_j = np.where(ok, p_mid * dt, 0.0)
            self.covered_s[cols] += np.where(ok, dt, 0.0).sum(axis=0)
            gap = dt > self.config.max_gap_s
            if gap.any():
                self._record_gaps(cols, gap, times, dt, p_mid)
        self.energy_j[cols] += energy_j.sum(axis=0)
        self.profile.add(cols, times, dt, step, p_mid, energy_j, ok)
        self.first_t[cols] = np.where(np.isnan(self.first_t[cols]), times[0], self.first_t[cols])
        self.last_t[cols] = times[-1]
        self.last_p[cols] = watts[-1]
        self.n_samples[cols] += times.shape[0]

    def _record_gaps(self, cols, gap, times, dt, p_mid) -> None:
        self.gap_count[cols] += gap.sum(axis=0)
        self.gap_s[cols] += np.where(gap, dt, 0.0).sum(axis=0)
        self.gap_bridged_j[cols] += np.where(gap, p_mid * dt, 0.0).sum(axis=0)
        self.max_gap_s[cols] = np.maximum(self.max_gap_s[cols], np.where(gap, dt, 0.0).max(axis=0))
        for r, c in zip(*np.nonzero(gap), strict=True):
            if len(self.gaps) >= MAX_GAPS_KEPT:
                break
            self.gaps.append((int(cols[c]), float(times[r, c] - dt[r, c]), float(dt[r, c])))

    def finish(self) -> None:
        if self._carry is not None:
            carry, self._carry = self._carry, None
            self._add_general(*carry, self._carry_row0)
        self.profile.finish()

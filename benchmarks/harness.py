"""What every benchmark goes through: one timing method, targets stated in code, verdicts.

A benchmark module (``bench_<name>.py``) declares its targets before anything runs::

    NAME = "icl-order"
    TARGETS = {
        "time_saved_cluster_vs_exhaustive": Target(">=", 0.92, "the paper's lower figure"),
    }

    def run(report: Report) -> None:
        sides = report.time("search", {"cluster": ours, "exhaustive": peer})
        report.check("time_saved_cluster_vs_exhaustive", 1 - sides.ratio("cluster", "exhaustive"))

and :func:`Report.check` turns each measured value into a verdict: ``met``, ``not met``,
``not comparable`` (the two sides solved different problems: reported, never a met
target) or ``not measured`` (a declared target the run did not reach, e.g. a peer that is
not installed; the reason is recorded). Timing goes through
:func:`iclr25.timing.compare_interleaved`: warm-up, interleaved rounds with rotated order,
the same statistic for both sides (median and min wall time, median process CPU time).

``python -m benchmarks`` writes each report to ``benchmarks/results/<NAME>.json`` with its
provenance (:mod:`iclr25.provenance`); ``make docs`` renders the docs' figures from there.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iclr25 import timing
from iclr25.provenance import provenance

VERDICTS = ("met", "not met", "not comparable", "not measured")
SCHEMA = "iclr25-benchmark/1"


@dataclass(frozen=True)
class Target:
    op: str  # ">=" or "<="
    value: float
    why: str = ""  # where the number comes from (the paper, the peer's claim, an issue)

    def __post_init__(self) -> None:
        if self.op not in (">=", "<="):
            raise ValueError(f"target op must be '>=' or '<=', got {self.op!r}")

    def met_by(self, measured: float) -> bool:
        return measured >= self.value if self.op == ">=" else measured <= self.value

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}"


@dataclass
class Timed:
    """The interleaved timings of one comparison, by side name."""

    sides: dict[str, timing.SideTiming]
    statistic: str = "median_s"

    def seconds(self, side: str) -> float:
        return getattr(self.sides[side], self.statistic)

    def ratio(self, numerator: str, denominator: str) -> float:
        """``seconds(numerator) / seconds(denominator)``: a speed-up of the denominator
        when the numerator is the peer."""
        return self.seconds(numerator) / self.seconds(denominator)

    def ratio_interval(
        self, numerator: str, denominator: str, seed: int = 0, clock: str = "wall"
    ) -> tuple[float, float]:
        """Bootstrap 95 % interval of the median per-round ratio numerator / denominator of
        ``clock`` ("wall" or "cpu") times (the rounds are interleaved, so each round's two
        calls are a pair)."""
        attr = {"wall": "wall_samples_s", "cpu": "cpu_samples_s"}[clock]
        a = np.asarray(getattr(self.sides[numerator], attr))
        b = np.asarray(getattr(self.sides[denominator], attr))
        ratios = a / b  # (rounds,)
        rng = np.random.default_rng(seed)
        medians = np.median(rng.choice(ratios, size=(2000, ratios.size)), axis=1)
        return float(np.quantile(medians, 0.025)), float(np.quantile(medians, 0.975))

    def cpu_ratio(self, numerator: str, denominator: str) -> float:
        """The same ratio of the per-call CPU medians (steadier on a shared machine)."""
        return self.sides[numerator].cpu_median_s / self.sides[denominator].cpu_median_s

    def as_dict(self) -> dict:
        return {"statistic": self.statistic, **{k: v.as_dict() for k, v in self.sides.items()}}


@dataclass
class Check:
    name: str
    target: Target
    measured: float | None
    verdict: str
    interval: tuple[float, float] | None = None
    note: str = ""

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "op": self.target.op,
            "target": self.target.value,
            "why": self.target.why,
            "measured": self.measured,
            "interval": list(self.interval) if self.interval else None,
            "verdict": self.verdict,
            "note": self.note,
        }


@dataclass
class Report:
    """Collects one benchmark run: timings, target checks and free-form figures."""

    name: str
    targets: Mapping[str, Target]
    quick: bool = False
    seeds: list[int] = field(default_factory=lambda: [0])
    timing_config: timing.TimingConfig = field(
        default_factory=lambda: timing.TimingConfig(warmup=1, repeats=5)
    )
    figures: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Timed] = field(default_factory=dict)
    checks: dict[str, Check] = field(default_factory=dict)

    # -- timing -----------------------------------------------------------------------
    def time(
        self,
        label: str,
        sides: Mapping[str, timing.Side],
        *,
        config: timing.TimingConfig | None = None,
        clock: timing.Clock | None = None,
        min_time_s: float = 0.0,
        statistic: str = "median_s",
    ) -> Timed:
        """Time ``sides`` interleaved (:func:`iclr25.timing.compare_interleaved`), keep
        the timings under ``label`` and return them."""
        if label in self.timings:
            raise ValueError(f"timing {label!r} recorded twice")
        config = config or self.timing_config
        if config.repeats < 5 and not self.quick:
            raise ValueError("a full benchmark run times each side at least 5 times")
        sides_t = timing.compare_interleaved(sides, config, clock, min_time_s=min_time_s)
        timed = Timed(sides_t, statistic)
        self.timings[label] = timed
        return timed

    # -- targets ----------------------------------------------------------------------
    def check(
        self,
        name: str,
        measured: float | None,
        *,
        comparable: bool = True,
        interval: tuple[float, float] | None = None,
        note: str = "",
    ) -> Check:
        """Record the measured value of the declared target ``name`` and its verdict.

        ``comparable=False``: the two sides solved different problems; the value is
        reported as ``not comparable`` whatever it is (``note`` says why). ``measured``
        None or NaN: ``not measured`` (``note`` says why). With an ``interval``, a target
        is met only when the whole interval is on the right side of it."""
        if name not in self.targets:
            raise KeyError(f"{name!r} is not a declared target of {self.name}")
        if name in self.checks:
            raise ValueError(f"target {name!r} checked twice")
        target = self.targets[name]
        value = None if measured is None or math.isnan(measured) else float(measured)
        if not comparable:
            verdict = "not comparable"
        elif value is None:
            verdict = "not measured"
        else:
            edge = value
            if interval is not None:
                edge = interval[0] if target.op == ">=" else interval[1]
            verdict = "met" if target.met_by(edge) else "not met"
        check = Check(name, target, value, verdict, interval, note)
        self.checks[name] = check
        return check

    def figure(self, key: str, value: Any) -> None:
        """A measured figure that is not a target (kept in the results file)."""
        self.figures[key] = value

    # -- output -----------------------------------------------------------------------
    def finish(self) -> None:
        """Every declared target not checked by the run is recorded as ``not measured``."""
        for name in self.targets:
            if name not in self.checks:
                self.check(name, None, note="the run did not measure it")

    def as_dict(self, argv: list[str] | None = None, seconds: float | None = None) -> dict:
        from iclr25.output import to_jsonable

        return to_jsonable(
            {
                "schema": SCHEMA,
                "name": self.name,
                "quick": self.quick,
                "provenance": provenance(argv, self.seeds),
                "seconds": seconds,
                "timing_protocol": {
                    "warmup": self.timing_config.warmup,
                    "repeats": self.timing_config.repeats,
                    "order": "interleaved, rotated every round",
                    "statistics": ["median_s", "min_s", "cpu_median_s"],
                },
                "targets": [c.as_dict() for c in self.checks.values()],
                "timings": {k: t.as_dict() for k, t in self.timings.items()},
                "figures": self.figures,
            }
        )


def mean_interval(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): a Student-t interval over seeds (a point when n = 1)."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, mean, mean
    from scipy import stats

    half = stats.t.ppf(0.5 + level / 2, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean, mean - half, mean + half

"""carbon-report: `power` on a large nvidia-smi log against pandas, and `track`'s overhead.

1. **Speed.** A 10^7-row log (8 GPUs, ``timestamp, index, power.draw [W]``, the synthetic
   training trace of :mod:`iclr25.core.carbon_report.synthetic`; 10^6 rows with
   ``--quick``) is written to a temporary folder. Ours: :func:`analyse_power` (energy, gaps
   and the whole power profile). Peer: what a user writes — ``pandas.read_csv``
   (``skipinitialspace``), ``to_datetime`` with the format, strip `` W``, ``numpy.trapezoid``
   per GPU. Both run in this process, timed by ``report.time`` (interleaved, warm-up, same
   statistic); the energies must agree to 1e-9 relative, or the ratio is not comparable.
2. **Memory.** Each side once more in a fresh subprocess (alternately), whose peak RSS
   (``VmHWM``; a child's ``ru_maxrss`` starts at its parent's peak on Linux) is its own.
3. **track.** The same CPU-bound child run bare and under :func:`track_command` (sampling
   every 0.1 s), interleaved by ``report.time``: the ratio of the median wall times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import Report, Target
from iclr25.timing import TimingConfig

NAME = "carbon-report"
TARGETS = {
    "power_speedup_vs_pandas": Target(
        ">=", 3.0, "the straightforward pandas script is what users run on such logs"
    ),
    "power_peak_memory_vs_pandas": Target(
        "<=", 0.25, "a streaming reader must not hold the log: a quarter of pandas' peak"
    ),
    "track_wall_overhead": Target("<=", 1.05, "measuring a job must not slow it by over 5%"),
}

PEAK = """
import json, sys
def peak_mb():
    with open("/proc/self/status") as fh:
        return next(int(x.split()[1]) for x in fh if x.startswith("VmHWM")) / 1024
"""
OURS = (
    PEAK
    + """
from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
analyse_power([sys.argv[1]], PowerConfig())
print(json.dumps({"rss_mb": peak_mb()}))
"""
)
PANDAS = (
    PEAK
    + """
from benchmarks.bench_carbon_report import pandas_energy_j
pandas_energy_j(sys.argv[1])
print(json.dumps({"rss_mb": peak_mb()}))
"""
)
CHILD = "s = 0\nfor i in range({n}):\n    s += i * i\n"


def pandas_energy_j(path) -> float:
    """The peer: energy of an nvidia-smi log with pandas and numpy, per GPU."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(path, skipinitialspace=True)
    stamps = pd.to_datetime(df["timestamp"], format="%Y/%m/%d %H:%M:%S.%f")
    seconds = (stamps - stamps.iloc[0]).dt.total_seconds().to_numpy()
    watts = df["power.draw [W]"].str.removesuffix(" W").astype(float).to_numpy()
    gpu = df["index"].to_numpy()
    return sum(float(np.trapezoid(watts[gpu == g], seconds[gpu == g])) for g in np.unique(gpu))


def _peak_mb(code: str, path: Path) -> float:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])["rss_mb"]


def bench_power(report: Report, path: Path, config: TimingConfig) -> None:
    from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power

    energy: dict[str, float] = {}

    def ours() -> None:
        energy["ours"] = analyse_power([path], PowerConfig()).results["measured_energy_kwh"] * 3.6e6

    def peer() -> None:
        energy["pandas"] = pandas_energy_j(path)

    timed = report.time("power", {"ours": ours, "pandas": peer}, config=config)
    rel = abs(energy["ours"] - energy["pandas"]) / abs(energy["pandas"])
    report.figure("power_energy_rel_diff", rel)
    report.figure(
        "power_cpu_speedup_vs_pandas",
        timed.sides["pandas"].cpu_median_s / timed.sides["ours"].cpu_median_s,
    )
    report.check(
        "power_speedup_vs_pandas",
        timed.ratio("pandas", "ours"),
        comparable=rel <= 1e-9,
        note="same log, same energy (to 1e-9); ours also computes the power profile"
        if rel <= 1e-9
        else f"energies differ by {rel:.2e} relative",
    )
    peaks: dict[str, list[float]] = {"ours": [], "pandas": []}
    for _ in range(1 if report.quick else 2):  # alternately, fresh processes
        peaks["ours"].append(_peak_mb(OURS, path))
        peaks["pandas"].append(_peak_mb(PANDAS, path))
    report.figure("power_peak_rss_mb", {k: max(v) for k, v in peaks.items()})
    report.check(
        "power_peak_memory_vs_pandas",
        max(peaks["ours"]) / max(peaks["pandas"]),
        note="peak RSS of a fresh process per side, the larger of its runs",
    )


def bench_track(report: Report, config: TimingConfig, iterations: int) -> None:
    from iclr25.core.carbon_report.track import TrackConfig, summarize, track_command

    cmd = [sys.executable, "-c", CHILD.format(n=iterations)]
    summary: dict = {}
    track_config = TrackConfig(interval_s=0.1)

    def tracked() -> None:
        with open(os.devnull, "w") as log:
            summary["last"] = summarize(track_command(cmd, track_config, log), track_config)

    def bare() -> None:
        subprocess.run(cmd, check=True)

    timed = report.time("track", {"tracked": tracked, "bare": bare}, config=config)
    report.figure(
        "track_cpu_ratio",  # process CPU (the child's and the tracker's) / the bare child's
        timed.sides["tracked"].cpu_median_s / timed.sides["bare"].cpu_median_s,
    )
    report.figure("track_sampler_cpu_frac", summary["last"]["sampler_cpu_frac"])
    report.figure("track_gpu_method", summary["last"]["methods"]["gpu"])
    report.check(
        "track_wall_overhead",
        timed.ratio("tracked", "bare"),
        note="median wall time of the same CPU-bound child, tracked and bare",
    )


def run(report: Report) -> None:
    from iclr25.core.carbon_report.synthetic import TraceConfig, write_nvidia_smi_log

    rows = 1_000_000 if report.quick else 10_000_000
    config = TimingConfig(warmup=1, repeats=2 if report.quick else 5)
    with tempfile.TemporaryDirectory(prefix="carbon-bench-") as tmp:
        path = Path(tmp) / "nvidia_smi.csv"
        written = write_nvidia_smi_log(path, TraceConfig(gpus=8, interval_s=0.1), None, rows)
        report.figure("power_log", {"rows": written, "mb": path.stat().st_size / 2**20})
        bench_power(report, path, config)
    bench_track(report, config, 3_000_000 if report.quick else 12_000_000)
    report.figure("load_average", os.getloadavg())
    report.figure("cpus", os.cpu_count())

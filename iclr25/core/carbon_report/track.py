"""``carbon-report track``: run a command and measure its energy live.

The command runs as a child with the same stdin/stdout/stderr and environment. A sampler
thread reads the visible GPUs' power every ``interval_s`` (a first sample at the start, a
last one after the child exits), streams them to the power log (``timestamp,gpu,power_w``,
the plain format ``carbon-report power`` reads) and integrates them; GPU energy is the NVML
energy counter's difference where supported, else that integral. CPU and RAM energy come
from :mod:`sensors` (RAPL, or estimates that are labelled as such).

Signals: SIGTERM and SIGHUP are forwarded to the child. SIGINT is forwarded unless it came
from the controlling terminal — then the terminal already delivered it to the child, which
shares our process group, and a second one could cut its clean-up short. Either way the
child decides when to stop; its exit status is returned (128 + signal when it was killed
by one) and the measurements up to that point are written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from iclr25 import __version__
from iclr25.core.carbon_report import sensors
from iclr25.core.carbon_report.integrate import J_PER_KWH
from iclr25.core.carbon_report.manifest import GpuOverrides, resolve_gpu
from iclr25.core.carbon_report.presets import find_gpu_model_key
from iclr25.errors import InputError

LOG_HEADER = "timestamp,gpu,power_w\n"


@dataclasses.dataclass(frozen=True)
class TrackConfig:
    interval_s: float = 0.5  # power sampling period (the paper logs at sub-second rates)
    cpu_tdp_w: float = sensors.DEFAULT_CPU_TDP_W  # used only when RAPL is unreadable
    ram_w_per_gb: float = sensors.RAM_W_PER_GB
    powercap_root: Path = Path("/sys/class/powercap")
    project_name: str = "iclr25"
    # GPU model (default: the name NVML reports) and embodied constants for the accounting
    hardware: GpuOverrides = dataclasses.field(default_factory=GpuOverrides)


def iso_utc(t: float) -> str:
    return dt.datetime.fromtimestamp(t, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class PowerSampler(threading.Thread):
    """Polls GPU power, writes the log rows and integrates each GPU's power (trapezoid)."""

    def __init__(self, gpus: sensors.NvmlGpus | None, interval_s: float, log_file=None) -> None:
        super().__init__(name="carbon-report-sampler", daemon=True)
        self.gpus = gpus
        self.interval_s = interval_s
        self.log_file = log_file
        n = len(gpus.devices) if gpus else 0
        self.energy_j = [0.0] * n
        self.samples = 0
        self.busy_s = 0.0  # time spent sampling (the overhead)
        self._last: tuple[float, list[float]] | None = None
        self._stop_event = threading.Event()

    def sample(self) -> None:
        t0 = time.perf_counter()
        now = time.time()
        power = self.gpus.power_w() if self.gpus else []
        if self.log_file is not None and power:
            stamp = iso_utc(now)
            labels = [d.label for d in self.gpus.devices]
            rows = zip(labels, power, strict=True)
            self.log_file.write("".join(f"{stamp},{g},{p:.3f}\n" for g, p in rows if p == p))
        if self._last is not None:
            t_prev, p_prev = self._last
            for i, (a, b) in enumerate(zip(p_prev, power, strict=True)):
                if a == a and b == b:
                    self.energy_j[i] += 0.5 * (a + b) * (now - t_prev)
        self._last = (now, power)
        self.samples += 1
        self.busy_s += time.perf_counter() - t0

    def run(self) -> None:
        while not self._stop_event.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        self.sample()  # the last sample closes the integral at the child's exit


class _Forwarder:
    """Forward termination signals to the child while it runs (see the module docstring)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.received: list[int] = []
        self._old: dict = {}

    def _terminal_delivered(self) -> bool:
        try:
            return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
        except OSError:
            return False

    def __call__(self, signum, frame) -> None:
        self.received.append(signum)
        if signum == signal.SIGINT and self._terminal_delivered():
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signum)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for s, handler in self._old.items():
            signal.signal(s, handler)


def _start(cmd: list[str], stdout_to_stderr: bool) -> subprocess.Popen:
    if not cmd:
        raise InputError("no command to track", "put it after --, e.g. track -- python train.py")
    try:
        return subprocess.Popen(cmd, stdout=sys.stderr.fileno() if stdout_to_stderr else None)
    except FileNotFoundError:
        raise InputError(f"command not found: {cmd[0]}", "check the command after --") from None
    except PermissionError:
        raise InputError(f"command is not executable: {cmd[0]}", "check its permissions") from None


def _children_usage() -> tuple[float, float]:
    """(CPU seconds, peak RSS in GB) of waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20  # ru_maxrss in KiB


@dataclasses.dataclass
class Measurement:
    command: list[str]
    exit_code: int
    signals: list[int]
    start_s: float
    duration_s: float
    gpus: list[dict]
    gpu_method: str
    cpu_energy_j: float
    cpu_method: str
    cpu_estimated: bool
    ram_energy_j: float
    ram_peak_gb: float
    cpu_seconds: float
    samples: int
    sampler_busy_s: float
    notes: list[str]


def track_command(
    cmd: list[str],
    config: TrackConfig,
    log_file=None,
    nvml=None,
    environ=None,
    stdout_to_stderr: bool = False,
) -> Measurement:
    """Run ``cmd`` to completion (or interruption) and measure it. ``stdout_to_stderr``
    sends the child's stdout to our stderr (so that ``--json`` keeps stdout clean)."""
    environ = os.environ if environ is None else environ
    gpus, gpu_reason = sensors.open_nvml(environ, nvml)
    rapl = sensors.Rapl(config.powercap_root)
    notes = list(gpus.notes) if gpus else []
    if log_file is not None:
        log_file.write(LOG_HEADER)
    cpu0, _ = _children_usage()
    sampler = PowerSampler(gpus, config.interval_s, log_file)
    counters0 = gpus.energy_mj() if gpus else []
    rapl0 = rapl.read_uj() if rapl.available else []
    start = time.time()
    sampler.sample()
    try:
        proc = _start(cmd, stdout_to_stderr)
        sampler.start()
        with _Forwarder(proc) as forwarder:
            returncode = proc.wait()
    finally:
        if sampler.is_alive():
            sampler.stop()
    end = time.time()
    counters1 = gpus.energy_mj() if gpus else []
    rapl1 = rapl.read_uj() if rapl.available else []
    cpu1, peak_gb = _children_usage()
    gpu_rows = _gpu_rows(gpus, sampler, counters0, counters1, end - start)
    if gpus:
        gpus.close()
    cpu_s = cpu1 - cpu0
    cpu_j, cpu_method, estimated = _cpu_energy(rapl, rapl0, rapl1, cpu_s, config)
    exit_code = returncode if returncode >= 0 else 128 - returncode
    return Measurement(
        command=list(cmd),
        exit_code=exit_code,
        signals=forwarder.received,
        start_s=start,
        duration_s=end - start,
        gpus=gpu_rows,
        gpu_method=_gpu_method(gpus, gpu_reason, gpu_rows),
        cpu_energy_j=cpu_j,
        cpu_method=cpu_method,
        cpu_estimated=estimated,
        ram_energy_j=sensors.ram_estimate_j(peak_gb, end - start, config.ram_w_per_gb),
        ram_peak_gb=peak_gb,
        cpu_seconds=cpu_s,
        samples=sampler.samples,
        sampler_busy_s=sampler.busy_s,
        notes=notes,
    )


def _cpu_energy(rapl, start, end, cpu_s: float, config: TrackConfig) -> tuple[float, str, bool]:
    """(joules, method, estimated): RAPL counters, else the documented estimate."""
    if rapl.available:
        return rapl.delta_j(start, end), "RAPL package counters", False
    logical = os.cpu_count() or 1
    method = (
        f"estimate: {cpu_s:.2f} CPU-s x {config.cpu_tdp_w:g} W TDP / {logical} logical CPUs "
        f"(RAPL unreadable: {rapl.reason})"
    )
    return sensors.cpu_estimate_j(cpu_s, config.cpu_tdp_w, logical), method, True


def account(results: dict, site, config: TrackConfig) -> dict:
    """Carbon and water of a measurement's IT energy at ``site``, with the embodied share
    of the measured GPUs for the run's duration (the model NVML names, or --gpu-model)."""
    from iclr25.core.carbon_report.accounting import RunSpec, account_run

    names = {r["name"] for r in results["gpus"]}
    name = config.hardware.gpu_model or (names.pop() if len(names) == 1 else None)
    fields = {"gpu_model": name} if name and find_gpu_model_key(name) else {}
    gpu = resolve_gpu(fields, config.hardware, "--gpu-model")
    count = len(results["gpus"])
    spec = RunSpec(
        "tracked command",
        "development",
        results["it_energy_kwh"],
        "measured",
        site,
        gpus=count or None,
        gpu_hours=count * results["duration_s"] / 3600.0 if count else None,
        gpu=gpu if count else None,
    )
    acc = account_run(spec)
    keys = ("energy_kwh", "co2e_kg", "water_l", "total_co2e_kg", "total_water_l")
    return {**{k: acc[k] for k in keys}, "accounting": acc}


def _gpu_rows(gpus, sampler, counters0, counters1, duration_s) -> list[dict]:
    rows = []
    for i, device in enumerate(gpus.devices if gpus else []):
        counted = counters0[i] is not None and counters1[i] is not None
        energy_j = (counters1[i] - counters0[i]) / 1000.0 if counted else sampler.energy_j[i]
        rows.append(
            {
                "gpu": device.label,
                "nvml_index": device.index,
                "name": device.name,
                "uuid": device.uuid,
                "energy_kwh": energy_j / J_PER_KWH,
                "avg_power_w": energy_j / duration_s if duration_s > 0 else math.nan,
                "method": "NVML energy counter" if counted else "NVML power polling (trapezoid)",
            }
        )
    return rows


def _gpu_method(gpus, reason: str, rows: list[dict]) -> str:
    if not gpus:
        return f"none: {reason}"
    return ", ".join(sorted({r["method"] for r in rows}))


def summarize(m: Measurement, config: TrackConfig) -> dict:
    """The JSON results of a measurement (without accounting)."""
    gpu_j = sum(r["energy_kwh"] for r in m.gpus) * J_PER_KWH
    total_j = gpu_j + m.cpu_energy_j + m.ram_energy_j
    return {
        "command": m.command,
        "exit_code": m.exit_code,
        "interrupted": bool(m.signals),
        "signals": [signal.Signals(s).name for s in m.signals],
        "duration_s": m.duration_s,
        "gpus": m.gpus,
        "gpu_energy_kwh": gpu_j / J_PER_KWH,
        "cpu_energy_kwh": m.cpu_energy_j / J_PER_KWH,
        "ram_energy_kwh": m.ram_energy_j / J_PER_KWH,
        "it_energy_kwh": total_j / J_PER_KWH,
        "estimated": {"gpu": False, "cpu": m.cpu_estimated, "ram": True},
        "methods": {
            "gpu": m.gpu_method,
            "cpu": m.cpu_method,
            "ram": f"estimate: {config.ram_w_per_gb:g} W/GB x peak RSS {m.ram_peak_gb:.3f} GB",
        },
        "samples": m.samples,
        "interval_s": config.interval_s,
        "sampler_cpu_frac": m.sampler_busy_s / m.duration_s if m.duration_s > 0 else math.nan,
    }


def emissions_row(m: Measurement, results: dict, config: TrackConfig) -> dict:
    """One CodeCarbon ``emissions.csv`` row for the measurement.

    As CodeCarbon writes them, the energies include the PUE (the ``pue`` column: the site's,
    or 1 without a site), and ``emissions`` is their CO2e."""
    duration = m.duration_s
    mean_w = (lambda kwh: kwh * J_PER_KWH / duration) if duration > 0 else (lambda kwh: math.nan)
    accounting = results.get("accounting") or {}
    constants = accounting.get("constants") or {}
    pue = constants.get("pue", 1.0)
    names = [r["name"] for r in m.gpus]
    co2e = accounting.get("co2e_kg")
    return {
        "timestamp": iso_utc(m.start_s + duration)[:19],
        "project_name": config.project_name,
        "run_id": str(uuid.uuid4()),
        "experiment_id": "",
        "duration": duration,
        "emissions": co2e,
        "emissions_rate": co2e / duration if co2e is not None and duration > 0 else None,
        "cpu_power": mean_w(results["cpu_energy_kwh"]),
        "gpu_power": mean_w(results["gpu_energy_kwh"]),
        "ram_power": mean_w(results["ram_energy_kwh"]),
        "cpu_energy": results["cpu_energy_kwh"] * pue,
        "gpu_energy": results["gpu_energy_kwh"] * pue,
        "ram_energy": results["ram_energy_kwh"] * pue,
        "energy_consumed": results["it_energy_kwh"] * pue,
        "water_consumed": accounting.get("water_l"),
        "os": platform.platform(),
        "python_version": platform.python_version(),
        "codecarbon_version": f"iclr25-{__version__}",
        "cpu_count": os.cpu_count(),
        "cpu_model": sensors.cpu_model_name(),
        "gpu_count": len(m.gpus),
        "gpu_model": f"{len(names)} x {names[0]}" if names else "",
        "ram_total_size": sensors.ram_total_gb(),
        "tracking_mode": "process",
        "ram_used_gb": m.ram_peak_gb,
        "on_cloud": "N",
        "pue": pue,
        "wue": constants.get("wue_onsite_l_per_kwh"),
    }

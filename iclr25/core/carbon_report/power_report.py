"""``carbon-report power``: energy and power profile of GPU logs, and optional accounting.

Each file is one node (the paper logs one node and extrapolates to all of them): with
``nodes`` given, measured energy and GPU-hours are scaled by ``nodes / files``. GPU energy
is a lower bound on the job's energy (CPUs, memory, network are not in the logs), as in the
paper. The TDP that the profile is relative to comes from ``tdp_w``, else ``gpu_model``,
else the model name in the log (nvidia-smi ``name`` column), else the H100 SXM's 700 W
with a warning.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from iclr25.core.carbon_report import profile as prof
from iclr25.core.carbon_report.accounting import RunSpec, account_run
from iclr25.core.carbon_report.codecarbon_csv import CodeCarbonFile, read_codecarbon
from iclr25.core.carbon_report.integrate import J_PER_KWH, FileIntegrator, IntegrationConfig
from iclr25.core.carbon_report.manifest import GpuOverrides, resolve_gpu
from iclr25.core.carbon_report.power_log import (
    BLOCK_BYTES,
    KIND_TEXT,
    PowerLogReader,
    detect_format,
)
from iclr25.core.carbon_report.presets import Site, find_gpu_model_key, gpu_model
from iclr25.core.carbon_report.streaming import prefetch
from iclr25.errors import InputError

DEFAULT_GPU = "h100-sxm"


@dataclasses.dataclass(frozen=True)
class PowerConfig:
    max_gap_s: float = 60.0  # longer sampling intervals are gaps (reported, not bridged)
    strict: bool = False  # the first bad row is an error instead of a counted skip
    nodes: int | None = None  # total nodes the files represent (scale = nodes / files)
    # GPU model (overrides the one named in the log), TDP (overrides every TDP) and the
    # embodied constants used by the accounting
    hardware: GpuOverrides = dataclasses.field(default_factory=GpuOverrides)
    profile: prof.ProfileConfig = dataclasses.field(default_factory=prof.ProfileConfig)
    block_bytes: int = BLOCK_BYTES  # CSV block size (arrow holds ~32 blocks: memory bound)
    # logs without a GPU id column: GPUs per file (None: read from the timestamps' layout)
    gpus: int | None = None
    gpu_column: str | None = None  # the column naming each row's GPU (None: index, uuid ...)


@dataclasses.dataclass
class FileResult:
    path: Path
    format: str
    labels: list[str]
    models: list[str | None]
    origin_s: float
    integrator: FileIntegrator | None = None
    reader: PowerLogReader | None = None
    codecarbon: CodeCarbonFile | None = None
    layout: str = ""  # how each row's GPU was known


@dataclasses.dataclass
class PowerAnalysis:
    results: dict
    warnings: list[str]
    series_t_s: np.ndarray  # start of each bin, seconds since the earliest file origin
    series_power_w: np.ndarray  # logged total power per bin (NaN: not covered)
    dips: list[tuple[float, float]]  # (start_s, duration_s) on the same clock
    tdp_total_w: float


class _TdpResolver:
    def __init__(self, config: PowerConfig, warnings: list[str]) -> None:
        self.config = config
        self.warnings = warnings
        if config.hardware.gpu_model is not None:
            gpu_model(config.hardware.gpu_model)  # unknown names fail early, listing valid ones

    def __call__(self, log_name: str | None) -> tuple[float, str | None]:
        hardware = self.config.hardware
        name = hardware.gpu_model or log_name
        key = find_gpu_model_key(name) if name else None
        if hardware.tdp_w is not None:
            return float(hardware.tdp_w), key
        if key is not None:
            return gpu_model(key).tdp_w, key
        default = gpu_model(DEFAULT_GPU)
        what = f"GPU model {log_name!r} is not a preset" if log_name else "no GPU model in the log"
        message = (
            f"{what}: profile shares use {default.tdp_w:g} W ({DEFAULT_GPU}) as TDP; "
            "pass --gpu-model or --tdp-w"
        )
        if message not in self.warnings:
            self.warnings.append(message)
        return default.tdp_w, None


def _read_file(path, fmt, config, tdp_for, on_progress) -> FileResult:
    reader = PowerLogReader(
        path,
        fmt,
        strict=config.strict,
        block_bytes=config.block_bytes,
        gpus=config.gpus,
        gpu_column=config.gpu_column,
    )
    names = reader.read_gpu_names()
    profile = prof.ProfileAccumulator(config.profile)
    integ = FileIntegrator(
        IntegrationConfig(config.max_gap_s, config.strict), profile, reader.where, reader.problems
    )
    models: list[str | None] = []
    for batch in prefetch(reader.batches()):
        new = reader.gpu_labels[integ.k :]
        if new:
            resolved = [tdp_for(names.get(label)) for label in new]
            models += [key for _, key in resolved]
            integ.add_gpus([tdp for tdp, _ in resolved])
        integ.add(batch)
        on_progress(len(batch.t_s))
    integ.finish()
    if integ.k == 0 or integ.n_samples.sum() == 0:
        raise InputError(f"{path}: no usable power samples", "check the file's rows and units")
    layout = reader.layout.how if reader.layout else f"GPU id column {reader._columns['gpu']!r}"
    if config.gpus and reader.layout is None and integ.k != config.gpus:
        raise InputError(
            f"{path}: its {layout} names {integ.k} GPUs, --gpus says {config.gpus}",
            "drop --gpus (the column names the GPUs) or give the right count",
        )
    return FileResult(
        path,
        fmt,
        list(reader.gpu_labels),
        models,
        float(reader.origin_s or 0),
        integ,
        reader,
        layout=layout,
    )


def read_logs(
    paths: list[Path], config: PowerConfig, on_progress=None, warnings=None
) -> list[FileResult]:
    on_progress = on_progress or (lambda n: None)
    warnings = warnings if warnings is not None else []
    tdp_for = _TdpResolver(config, warnings)
    files = []
    for path in map(Path, paths):
        fmt = detect_format(path)
        if fmt == "codecarbon":
            cc = read_codecarbon(path)
            models = [
                find_gpu_model_key(r["gpu_model"]) if r["gpu_model"] else None for r in cc.runs
            ]
            layout = f"CodeCarbon {cc.release} columns"
            files.append(FileResult(path, fmt, [], models, 0.0, codecarbon=cc, layout=layout))
        else:
            files.append(_read_file(path, fmt, config, tdp_for, on_progress))
    return files


# ---------------------------------------------------------------------------------------
# per-GPU figures
# ---------------------------------------------------------------------------------------
def _dip_summary(count, dip_s, energy_j, deficit_j, durations, covered_s) -> dict:
    durations = np.asarray(durations, dtype=np.float64)
    return {
        "count": int(count),
        "total_duration_s": float(dip_s),
        "time_frac": float(dip_s / covered_s) if covered_s > 0 else math.nan,
        "energy_kwh": float(energy_j / J_PER_KWH),
        "deficit_kwh": float(deficit_j / J_PER_KWH),
        "duration_s": {
            "min": float(durations.min()) if len(durations) else math.nan,
            "median": float(np.median(durations)) if len(durations) else math.nan,
            "max": float(durations.max()) if len(durations) else math.nan,
        },
    }


def _gpu_profile(acc: prof.ProfileAccumulator, g: int, covered_s: float, cfg) -> tuple[dict, float]:
    tdp = float(acc.tdp_w[g])
    shares = prof.share_summary(acc.hist_time[g], acc.hist_energy[g], cfg)
    baseline = prof.baseline_power_w(acc.hist_time[g], tdp, cfg.dip_threshold)
    deficit_j = max(baseline * acc.dip_s[g] - acc.dip_energy_j[g], 0.0) if acc.dip_count[g] else 0.0
    durations = [d for gpu, _, d, _ in acc.dips if gpu == g]
    out = {
        **shares,
        "power_percentiles_w": {k: v * tdp for k, v in shares["share_percentiles"].items()},
        "baseline_power_w": baseline,
        "dips": _dip_summary(
            acc.dip_count[g], acc.dip_s[g], acc.dip_energy_j[g], deficit_j, durations, covered_s
        ),
        "ramps": prof.ramp_summary(acc.ramp_hist[g], acc.ramp_max_up[g], acc.ramp_max_down[g]),
    }
    return out, deficit_j


def _gpu_rows(files: list[FileResult], cfg: prof.ProfileConfig) -> list[dict]:
    rows = []
    for node, f in enumerate(files):
        if f.codecarbon is not None:
            continue  # runs, not GPUs: see _codecarbon_runs
        integ, acc = f.integrator, f.integrator.profile
        for g, label in enumerate(f.labels):
            covered = float(integ.covered_s[g])
            profile, deficit_j = _gpu_profile(acc, g, covered, cfg)
            rows.append(
                {
                    "gpu": label,
                    "node": node,
                    "file": str(f.path),
                    "source": f.format,
                    "gpu_model": f.models[g],
                    "tdp_w": float(acc.tdp_w[g]),
                    "samples": int(integ.n_samples[g]),
                    "start_s": f.origin_s + float(integ.first_t[g]),
                    "duration_s": float(integ.last_t[g] - integ.first_t[g]),
                    "covered_s": covered,
                    "energy_kwh": float(integ.energy_j[g] / J_PER_KWH),
                    "avg_power_w": float(integ.energy_j[g] / covered) if covered > 0 else math.nan,
                    "gaps": int(integ.gap_count[g]),
                    "gap_s": float(integ.gap_s[g]),
                    "duplicates": int(integ.duplicates[g]),
                    "out_of_order": int(integ.out_of_order[g]),
                    "profile": profile,
                    "_deficit_j": deficit_j,
                }
            )
    return rows


def _codecarbon_runs(files: list[FileResult]) -> list[dict]:
    """One entry per CodeCarbon run: its energies (IT, kWh), GPUs and GPU-hours."""
    out = []
    for node, f in enumerate(files):
        if f.codecarbon is None:
            continue
        for run, model in zip(f.codecarbon.runs, f.models, strict=True):
            duration, count = run["duration_s"], run["gpu_count"]
            out.append(
                {
                    **{k: v for k, v in run.items() if k != "line"},
                    "node": node,
                    "file": str(f.path),
                    "line": run["line"],
                    "gpu_model_key": model,
                    "gpu_hours": duration * count / 3600.0,
                    "avg_power_w": run["energy_kwh"] * J_PER_KWH / duration
                    if duration > 0
                    else math.nan,
                }
            )
    return out


def _part_sum(rows: list[dict], key: str) -> float | None:
    """Sum of ``key`` over the runs that know it (None when none does)."""
    known = [r[key] for r in rows if r.get(key) is not None]
    return float(sum(known)) if known else None


# ---------------------------------------------------------------------------------------
# across GPUs and files
# ---------------------------------------------------------------------------------------
def _overall_profile(
    files: list[FileResult], rows: list[dict], cfg: prof.ProfileConfig
) -> dict | None:
    logs = [f for f in files if f.integrator is not None]
    if not logs:
        return None
    accs = [f.integrator.profile for f in logs]
    hist_time = sum(a.hist_time.sum(axis=0) for a in accs)
    hist_energy = sum(a.hist_energy.sum(axis=0) for a in accs)
    shares = prof.share_summary(hist_time, hist_energy, cfg)
    tdps = np.concatenate([a.tdp_w for a in accs])
    if np.all(tdps == tdps[0]):
        shares["power_percentiles_w"] = {
            k: v * tdps[0] for k, v in shares["share_percentiles"].items()
        }
    covered = sum(float(f.integrator.covered_s.sum()) for f in logs)
    durations = [d for a in accs for _, _, d, _ in a.dips]
    dips = _dip_summary(
        sum(int(a.dip_count.sum()) for a in accs),
        sum(float(a.dip_s.sum()) for a in accs),
        sum(float(a.dip_energy_j.sum()) for a in accs),
        sum(r.get("_deficit_j", 0.0) for r in rows),
        durations,
        covered,
    )
    ramp_hist = sum(a.ramp_hist.sum(axis=0) for a in accs)
    ramps = prof.ramp_summary(
        ramp_hist, max(a.ramp_max_up.max() for a in accs), min(a.ramp_max_down.min() for a in accs)
    )
    settings = {
        k: getattr(cfg, k) for k in ("low_share", "high_share", "dip_threshold", "dip_min_s")
    }
    return {**shares, "dips": dips, "ramps": ramps, **settings}


def _file_series(f: FileResult, bin_s: float) -> tuple[int, np.ndarray]:
    """(first bin index on the common clock, power per bin) of one file at ``bin_s``."""
    acc = f.integrator.profile
    energy, cover = acc.series_energy_j, acc.series_cover_s
    factor = int(round(bin_s / acc.bin_s))
    if factor > 1:  # coarsen to the common width
        pad = (-len(energy)) % factor
        energy = np.append(energy, np.zeros(pad)).reshape(-1, factor).sum(axis=1)
        cover = np.append(cover, np.zeros(pad)).reshape(-1, factor).sum(axis=1)
    k = f.integrator.k
    enough = cover >= 0.5 * k * bin_s
    power = np.where(enough, energy / np.where(enough, cover, 1.0) * k, np.nan)
    return int(round(f.origin_s / bin_s)), power


def aggregate_series(files: list[FileResult]) -> tuple[float, float, np.ndarray]:
    """(origin_s, bin_s, power per bin) of the summed logged power of all files."""
    logs = [f for f in files if f.integrator is not None]
    bin_s = max(f.integrator.profile.bin_s for f in logs)
    parts = [_file_series(f, bin_s) for f in logs]
    start = min(p[0] for p in parts)
    size = max(p[0] - start + len(p[1]) for p in parts)
    total, missing = np.zeros(size), np.zeros(size, dtype=bool)
    for first, power in parts:
        lo = first - start
        total[lo : lo + len(power)] += np.nan_to_num(power)
        missing[lo : lo + len(power)] |= np.isnan(power)
    total[missing] = np.nan
    return start * bin_s, bin_s, total


def _aggregate_summary(power: np.ndarray, bin_s: float, scale: float) -> dict:
    ramps = np.diff(power) / bin_s
    ramps = ramps[np.isfinite(ramps)]
    finite = power[np.isfinite(power)]
    out = {
        "bin_s": bin_s,
        "peak_power_w": float(finite.max()) if len(finite) else math.nan,
        "min_power_w": float(finite.min()) if len(finite) else math.nan,
        "max_rise_w_per_s": float(ramps.max()) if len(ramps) else math.nan,
        "max_fall_w_per_s": float(-ramps.min()) if len(ramps) else math.nan,
        "abs_ramp_p99_w_per_s": float(np.percentile(np.abs(ramps), 99)) if len(ramps) else math.nan,
    }
    out["extrapolated"] = {k: v * scale for k, v in out.items() if k != "bin_s"}
    return out


def _file_summaries(files: list[FileResult]) -> tuple[list[dict], dict[str, int]]:
    out, skipped = [], {"duplicate_timestamps": 0, "out_of_order": 0}
    for node, f in enumerate(files):
        entry = {"path": str(f.path), "node": node, "format": f.format, "gpus": len(f.labels)}
        entry["gpu_layout"] = f.layout
        if f.codecarbon is not None:
            cc = f.codecarbon
            entry.update(
                gpus=max((r["gpu_count"] for r in cc.runs), default=0),
                release=cc.release,
                runs=len(cc.runs),
                extra_columns=cc.extra_columns,
                skipped=dict(cc.problems),
                first_lines=dict(cc.first_lines),
            )
        if f.reader is not None:
            problems = f.reader.problems
            entry.update(
                rows=f.reader.rows_read,
                samples=int(f.integrator.n_samples.sum()),
                duplicates=int(f.integrator.duplicates.sum()),
                out_of_order=int(f.integrator.out_of_order.sum()),
                skipped=dict(problems.counts),
                first_lines=dict(problems.first),
            )
            for kind, n in problems.counts.items():
                skipped[kind] = skipped.get(kind, 0) + n
        out.append(entry)
    return out, skipped


def _gap_summary(files: list[FileResult], max_gap_s: float) -> dict:
    logs = [f for f in files if f.integrator is not None]
    first = [
        {"node": node, "gpu": f.labels[g], "start_s": f.origin_s + start, "duration_s": dur}
        for node, f in enumerate(files)
        if f.integrator is not None
        for g, start, dur in f.integrator.gaps[:10]
    ][:10]
    return {
        "count": sum(int(f.integrator.gap_count.sum()) for f in logs),
        "total_s": sum(float(f.integrator.gap_s.sum()) for f in logs),
        "max_s": max((float(f.integrator.max_gap_s.max()) for f in logs), default=0.0),
        "energy_if_bridged_kwh": sum(float(f.integrator.gap_bridged_j.sum()) for f in logs)
        / J_PER_KWH,
        "max_gap_setting_s": max_gap_s,
        "first": first,
    }


def _warnings_for(skipped: dict[str, int], gaps: dict, file_info: list[dict]) -> list[str]:
    notes = []
    for kind, count in skipped.items():
        if not count:
            continue
        firsts = (f.get("first_lines", {}).get(kind) for f in file_info)
        where = next((lines[0] for lines in firsts if lines), None)
        done = "converted to W" if kind == "converted_units" else "skipped"
        note = f"{count} {KIND_TEXT.get(kind, kind)}: {done}"
        note += f" (first at {where})" if where else ""
        if kind == "out_of_order":
            note += "; sort the log by time to keep them"
        notes.append(note)
    if gaps["count"]:
        notes.append(
            f"{gaps['count']} sampling interval(s) longer than --max-gap "
            f"{gaps['max_gap_setting_s']:g} s not bridged ({gaps['total_s']:.1f} GPU-s in all, "
            f"the longest {gaps['max_s']:.1f} s; bridging would add "
            f"{gaps['energy_if_bridged_kwh']:.4g} kWh); pass --max-gap "
            f"{math.ceil(gaps['max_s'])} (or inf) to bridge them"
        )
    return notes


def analyse_power(
    paths: list[Path],
    config: PowerConfig,
    site: Site | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> PowerAnalysis:
    """Read every log, integrate energy, profile power and (with ``site``) account for it."""
    warnings: list[str] = []
    files = read_logs(paths, config, on_progress, warnings)
    rows = _gpu_rows(files, config.profile)
    runs = _codecarbon_runs(files)
    scale = config.nodes / len(files) if config.nodes else 1.0
    file_info, skipped = _file_summaries(files)
    gaps = _gap_summary(files, config.max_gap_s)
    results = {
        **_energy_totals(files, rows, runs, scale),
        "nodes": config.nodes,
        "scale": scale,
        "files": file_info,
        "skipped": skipped,
        "gaps": gaps,
        "profile": _overall_profile(files, rows, config.profile),
        "gpus": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
        "runs": runs,
    }
    series_t, series_p, dips, tdp_total = np.zeros(0), np.zeros(0), [], 0.0
    if results["profile"] is not None:
        origin, bin_s, series_p = aggregate_series(files)
        results["profile"]["aggregate"] = _aggregate_summary(series_p, bin_s, scale)
        series_t = origin + bin_s * np.arange(len(series_p))
        dips = [
            (f.origin_s + s, d)
            for f in files
            if f.integrator
            for _, s, d, _ in f.integrator.profile.dips
        ]
        tdp_total = sum(float(f.integrator.profile.tdp_w.sum()) for f in files if f.integrator)
    if site is not None:
        accounting = _account(results, files, config, site)
        for key in ("co2e_kg", "water_l", "total_co2e_kg", "total_water_l"):
            results[key] = accounting[key]
        results["accounting"] = accounting
        if not accounting["embodied_counted"]:
            warnings.append(
                "no preset GPU model in the logs: embodied CO2e and water not counted; "
                "pass --gpu-model (or the --embodied-* constants, --tdp-w and --lifetime-years)"
            )
    warnings += _warnings_for(skipped, gaps, file_info) + _source_notes(files)
    return PowerAnalysis(results, warnings, series_t, series_p, dips, tdp_total)


def _energy_totals(files, rows: list[dict], runs: list[dict], scale: float) -> dict:
    """Energy (all parts), its GPU / CPU / RAM parts, GPUs and GPU-hours, × ``scale``.

    Power logs give GPU energy only; CodeCarbon runs give CPU, GPU and RAM energy (IT)."""
    log_kwh = sum(r["energy_kwh"] for r in rows)
    measured_kwh = log_kwh + sum(r["energy_kwh"] for r in runs)
    cc_gpu = _part_sum(runs, "gpu_energy_kwh")
    gpu_kwh = log_kwh + (cc_gpu or 0.0) if rows or cc_gpu is not None else None
    gpu_s = sum(r["covered_s"] for r in rows) + 3600.0 * sum(r["gpu_hours"] for r in runs)
    per_file = [
        max((r["gpu_count"] for r in f.codecarbon.runs), default=0) for f in files if f.codecarbon
    ]
    return {
        "energy_kwh": measured_kwh * scale,
        "measured_energy_kwh": measured_kwh,
        "gpu_energy_kwh": gpu_kwh * scale if gpu_kwh is not None else None,
        "cpu_energy_kwh": _scaled(_part_sum(runs, "cpu_energy_kwh"), scale),
        "ram_energy_kwh": _scaled(_part_sum(runs, "ram_energy_kwh"), scale),
        "gpu_count": len(rows) + sum(per_file),
        "gpu_hours": gpu_s / 3600.0 * scale,
        "avg_power_w": (gpu_kwh or 0.0) * J_PER_KWH / gpu_s if gpu_s > 0 else math.nan,
    }


def _scaled(value: float | None, scale: float) -> float | None:
    return value * scale if value is not None else None


def _source_notes(files: list[FileResult]) -> list[str]:
    """Warnings on how each file was read: GPUs inferred from the layout, CodeCarbon rows
    skipped, PUE divided out of CodeCarbon's energies."""
    notes = []
    for f in files:
        reader = f.reader
        if reader is not None and reader.layout is not None and reader.layout.gpus > 1:
            notes.append(
                f"{f.path}: no GPU id column; {reader.layout.how}, so row i is GPU "
                f"(i + {reader.layout.offset}) mod {reader.layout.gpus}; "
                "pass --gpus or --gpu-column to say otherwise"
            )
        if f.codecarbon is None:
            continue
        notes += f.codecarbon.notes()
        pues = sorted({r["pue"] for r in f.codecarbon.runs if r["pue"] != 1.0})
        if pues:
            notes.append(
                f"{f.path}: CodeCarbon's energies include its pue column "
                f"({', '.join(f'{p:g}' for p in pues)}): divided out to IT energy, so the "
                "site's PUE is applied once"
            )
    return notes


def _account(results: dict, files: list[FileResult], config: PowerConfig, site: Site) -> dict:
    models = {m for f in files for m in f.models if m}
    name = config.hardware.gpu_model or (models.pop() if len(models) == 1 else None)
    gpu = resolve_gpu({"gpu_model": name} if name else {}, config.hardware, "--gpu-model")
    spec = RunSpec(
        name="power logs",
        stage="final",
        it_energy_kwh=results["energy_kwh"],
        energy_basis="measured GPU energy (power logs"
        + (", extrapolated to --nodes)" if config.nodes else ")"),
        site=site,
        gpus=int(round(results["gpu_count"] * results["scale"])),
        gpu_hours=results["gpu_hours"],
        gpu=gpu,
    )
    return account_run(spec)

"""``diffusion-probe rhm`` and ``threshold`` end to end: tasks, threshold, summary, verdict.

Plain functions over :mod:`probe` and :mod:`density_evolution`, importable from a notebook::

    from iclr25.core.diffusion_probe.pipeline import run_rhm
    results = run_rhm(ProbeConfig(depths=(3, 4)), seed=0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from iclr25.core.diffusion_probe import density_evolution as de
from iclr25.core.diffusion_probe.probe import (
    ProbeConfig,
    check_memory,
    config_to_dict,
    instance_grammar,
    probe_task,
    summarise,
    verdict,
)
from iclr25.core.diffusion_probe.rhm import RHMSpec
from iclr25.parallel import Execution, Outcome, Task, derive_seed, run_tasks

#: density evolution for --quick runs: the same method at a fifth of the cost
QUICK_DE = de.DEConfig(population=5000, levels=40, precision=0.01, seeds=1)
#: density evolution of a full `rhm` run (one DE seed; `threshold` gives the spread)
FULL_DE = de.DEConfig(seeds=1)


def probe_tasks(config: ProbeConfig, seed: int) -> list[Task]:
    """One task per (rule instance, depth); instance seeds derive from the run seed."""
    raw = config_to_dict(config)
    instances = 1 if config.rules is not None else config.seeds
    return [
        Task(
            probe_task, {"config": raw, "depth": depth}, derive_seed(seed, "rules", j), f"L={depth}"
        )
        for j in range(instances)
        for depth in config.depths
    ]


def run_rhm(
    config: ProbeConfig,
    seed: int,
    *,
    execution: Execution | None = None,
    de_config: de.DEConfig | None = FULL_DE,
    on_done: Callable[[int], None] | None = None,
) -> tuple[dict, Outcome]:
    """The probe's ``results`` (see the command's help) and how its tasks ran."""
    for depth in config.depths:
        check_memory(instance_grammar(config, derive_seed(seed, "rules", 0), depth), config.samples)
    outcome = run_tasks(
        probe_tasks(config, seed), execution, command="diffusion-probe rhm", on_done=on_done
    )
    classes = instance_grammar(config, derive_seed(seed, "rules", 0), config.depths[0]).classes
    summary = summarise(config, outcome.results, classes)
    threshold = None
    if de_config is not None and config.rules is None:
        spec = RHMSpec(config.spec.v, config.spec.m, config.spec.s, 1)
        threshold = de.threshold(spec, config.noise, de_config, seed)
    thr = None if threshold is None else threshold["threshold"]
    results = {
        "noise": config.noise,
        "levels": list(config.levels),
        "threshold": thr,
        "threshold_detail": threshold,
        **summary,
        "verdict": verdict(summary["per_depth"], summary["controls"], thr),
        "seeds": 1 if config.rules is not None else config.seeds,
        "samples": config.samples if config.data is None else len(config.data),
    }
    return results, outcome


def run_threshold(spec: RHMSpec, noise: str, config: de.DEConfig, seed: int, on_step=None) -> dict:
    """``threshold``, ``threshold_spread``, ``per_seed`` and ``overlap_by_depth`` (the DE
    overlap after 1..levels levels just below and just above the threshold)."""
    out = de.threshold(spec, noise, config, seed, on_step)
    thr = out["threshold"]
    out["overlap_by_depth"] = None
    if thr is not None:
        below, above = max(0.0, thr - 0.05), min(1.0, thr + 0.05)
        out["overlap_by_depth"] = {
            "levels": [below, above],
            "overlap": [
                de.overlap_by_depth(spec, noise, lv, config.levels, config.population, seed)
                for lv in (below, above)
            ],
        }
    return out


def quick_config(config: ProbeConfig) -> ProbeConfig:
    """--quick: depths 3, 4, 1,000 samples, 2 seeds (a smoke run, not evidence)."""
    return replace(config, depths=(3, 4), samples=1000, seeds=2)


def headline(results: dict) -> str:
    """One line for `iclr25 demo` and the docs: peaks by depth and the verdict."""
    peaks = ", ".join(
        f"L={d['depth']}: {d['peak_chi_norm']:.2f}@{d['peak_level']:.2f}"
        for d in results["per_depth"]
        if d["peak_chi_norm"] is not None
    )
    v = results["verdict"]
    if v["observed"]:
        state = "OBSERVED"
    else:
        parts = v["failed"] + [f"{u} untested" for u in v["untested"]]
        state = "NOT OBSERVED: " + ", ".join(parts)
    return f"χ̃ peak {peaks}; {state}"


def parse_levels(text: str) -> tuple[float, ...]:
    """``0.1:0.9:0.05`` (inclusive range) or ``0.2,0.5,0.8``; all in [0, 1]."""
    from iclr25.errors import UsageError

    fix = "use start:stop:step (e.g. 0.1:0.9:0.05) or a list (0.2,0.5) within [0, 1]"
    try:
        if ":" in text:
            start, stop, step = (float(x) for x in text.split(":"))
            if step <= 0 or stop < start:
                raise ValueError
            count = int(np.floor((stop - start) / step + 1e-9)) + 1
            levels = tuple(round(start + i * step, 10) for i in range(count))
        else:
            levels = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"malformed levels {text!r}", fix) from None
    if not levels or any(not 0.0 <= x <= 1.0 for x in levels):
        raise UsageError(f"levels {text!r} fall outside [0, 1]", fix)
    return levels

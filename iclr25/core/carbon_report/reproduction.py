"""Reproducing the paper's printed per-row figures from its printed per-row inputs.

Every row of ``iclr25/data/carbon_report/morrison2025.json`` gives the inputs the paper prints
for it (energy and site for a training run; GPU-hours and per-GPU embodied figures for
manufacturing; energy per 2,400 requests and the model's training CO2e for inference) and
the outputs it prints. Each output is computed with this package's own formulas
(:func:`accounting.operational`, :func:`accounting.embodied`,
:func:`inference.footprint_per_request`) — never solved from a total — and compared with
the printed figure *within its rounding*:

- a printed figure ``p`` with ``d`` decimals stands for the interval ``p ± 0.5·10^-d``
  (``"30"`` is 29.5 ... 30.5; ``"1.05e9"`` is 1.045e9 ... 1.055e9);
- the inputs are rounded the same way, so each output is computed at every corner of the
  inputs' intervals (the formulas are monotone in each input): the computed interval;
- a figure **agrees** when the two intervals overlap, and the relative error of the
  computed value at the printed inputs is reported either way.

Rows whose inputs are not available are listed, with the reason, as not reproducible.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable

from iclr25.core.carbon_report.accounting import embodied, operational
from iclr25.core.carbon_report.presets import GpuModel, datacenter
from iclr25.paths import package_file

Interval = tuple[float, float]


@functools.lru_cache(maxsize=1)
def paper_rows() -> dict:
    path = package_file("iclr25.data", "carbon_report", "morrison2025.json")
    return json.loads(path.read_text(encoding="utf-8"))


def printed_interval(text: str, exact: bool = False) -> tuple[float, Interval]:
    """(value, interval) of a figure as printed: ``"0.533"`` -> 0.533 ± 0.0005."""
    clean = text.replace(",", "").strip().lower()
    mantissa, _, exponent = clean.partition("e")
    value = float(clean)
    if exact:
        return value, (value, value)
    decimals = len(mantissa.partition(".")[2])
    half = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    return value, (value - half, value + half)


def _corners(fn: Callable[..., float], intervals: dict[str, Interval]) -> Interval:
    """(min, max) of ``fn(**inputs)`` over the corners of the inputs' intervals."""
    keys = list(intervals)
    values = [fn(**dict(zip(keys, c, strict=True))) for c in itertools.product(*intervals.values())]
    return min(values), max(values)


def _inputs(row: dict, keys: tuple[str, ...]) -> tuple[dict, dict]:
    """(values at the printed inputs, their intervals) of the numeric inputs ``keys``."""
    exact = set(row.get("exact", ()))
    mids, ivals = {}, {}
    for key in keys:
        text = row["inputs"][key]
        if isinstance(text, list):  # printed parts of one input (summed)
            parts = [printed_interval(t, key in exact) for t in text]
            mids[key] = sum(p[0] for p in parts)
            ivals[key] = (sum(p[1][0] for p in parts), sum(p[1][1] for p in parts))
        else:
            mids[key], ivals[key] = printed_interval(text, key in exact)
    return mids, ivals


def compare(quantity: str, printed: str, fn: Callable[..., float], mids: dict, ivals: dict):
    """One printed output against ``fn`` of the inputs: both intervals, error, verdict."""
    p_value, (p_lo, p_hi) = printed_interval(printed)
    computed = fn(**mids)
    lo, hi = _corners(fn, ivals)
    return {
        "quantity": quantity,
        "printed": printed,
        "printed_interval": [p_lo, p_hi],
        "computed": computed,
        "computed_interval": [lo, hi],
        "rel_error": (computed - p_value) / p_value if p_value else math.nan,
        "agrees": bool(lo <= p_hi and p_lo <= hi),
    }


# ---------------------------------------------------------------------------------------
# the rows
# ---------------------------------------------------------------------------------------
def training_row(row: dict) -> dict:
    """Table 2: CO2e (t) and water (kL) of a run's energy at its site."""
    site = datacenter(row["site"])
    includes = bool(row["inputs"].get("energy_includes_pue", False))
    mids, ivals = _inputs(row, ("energy_mwh",))

    def op(energy_mwh: float) -> dict:
        it_kwh = energy_mwh * 1000 / (site.pue if includes else 1.0)
        return operational(it_kwh, site)

    figures = {
        "co2e_t": lambda energy_mwh: op(energy_mwh)["co2e_kg"] / 1000,
        "water_kl": lambda energy_mwh: op(energy_mwh)["water_l"] / 1000,
    }
    return _row(row, "training", figures, mids, ivals, site=site.name)


def manufacturing_row(row: dict) -> dict:
    """Section 4.1: embodied CO2e (t) and water (kL) of all GPU-hours."""
    keys = (
        "gpu_hours",
        "embodied_co2e_kg_per_server",
        "gpus_per_server",
        "embodied_water_l_per_gpu",
        "lifetime_years",
    )
    mids, ivals = _inputs(row, keys)

    def emb(gpu_hours, embodied_co2e_kg_per_server, gpus_per_server, **rest) -> tuple:
        gpu = GpuModel(
            "paper",
            700.0,
            embodied_co2e_kg_per_server / gpus_per_server,
            rest["embodied_water_l_per_gpu"],
            rest["lifetime_years"],
        )
        return embodied(gpu_hours, gpu)

    figures = {
        "co2e_t": lambda **kw: emb(**kw)[0] / 1000,
        "water_kl": lambda **kw: emb(**kw)[1] / 1000,
    }
    return _row(row, "manufacturing", figures, mids, ivals)


def stage_sum_row(row: dict) -> dict:
    """The headline: the sum of the printed stage figures."""
    out = {"name": row["name"], "table": row["table"], "kind": "sum", "inputs": row["inputs"]}
    quantities = []
    for quantity, parts in row["inputs"].items():
        mids, ivals = _inputs({"inputs": {quantity: parts}}, (quantity,))
        total = lambda q=quantity, **kw: kw[q]  # noqa: E731 - the summed input itself
        quantities.append(compare(quantity, row["printed"][quantity], total, mids, ivals))
    out["quantities"] = quantities
    out["agrees"] = all(q["agrees"] for q in quantities)
    return out


def inference_row(row: dict) -> dict:
    """Table 3: CO2e (g) and water (L) of 2,400 requests, and the break-even count."""
    from iclr25.core.carbon_report.inference import footprint_per_request

    site = datacenter(row["site"])
    includes = bool(row["inputs"].get("energy_includes_pue", False))
    mids, ivals = _inputs(row, ("energy_kwh", "requests", "training_co2e_t"))

    def per_request(energy_kwh: float, requests: float) -> dict:
        return footprint_per_request(energy_kwh / requests, includes, site)

    figures = {
        "co2e_g": lambda energy_kwh, requests, training_co2e_t: (
            1000 * requests * per_request(energy_kwh, requests)["co2e_kg"]
        ),
        "water_l": lambda energy_kwh, requests, training_co2e_t: (
            requests * per_request(energy_kwh, requests)["water_l"]
        ),
        "breakeven_requests": lambda energy_kwh, requests, training_co2e_t: (
            training_co2e_t * 1000 / per_request(energy_kwh, requests)["co2e_kg"]
        ),
    }
    return _row(row, "inference", figures, mids, ivals, site=site.name)


def _row(row: dict, kind: str, figures: dict, mids: dict, ivals: dict, **extra) -> dict:
    quantities = [
        compare(q, row["printed"][q], fn, mids, ivals)
        for q, fn in figures.items()
        if q in row["printed"]
    ]
    return {
        "name": row["name"],
        "table": row["table"],
        "kind": kind,
        **extra,
        "inputs": row["inputs"],
        "quantities": quantities,
        "agrees": all(q["agrees"] for q in quantities),
    }


def reproduce() -> dict:
    """Every reproducible row, the not-reproducible ones, and the tally (the study's verdict:
    pass when every printed figure with available inputs agrees within its rounding)."""
    data = paper_rows()
    rows = [training_row(r) for r in data["training"]]
    rows.append(manufacturing_row(data["manufacturing"]))
    rows.append(stage_sum_row(data["stage_sum"]))
    rows += [inference_row(r) for r in data["inference"]]
    figures = [q for r in rows for q in r["quantities"]]
    agree = sum(q["agrees"] for q in figures)
    return {
        "hypothesis": "this package's formulas and the paper's constants give the paper's "
        "printed per-row outputs from the paper's printed per-row inputs",
        "pass_condition": "every printed figure whose inputs are available lies within the "
        "rounding of the printed value (computed and printed intervals overlap)",
        "paper": data["paper"],
        "where_read": data["where_read"],
        "rows": rows,
        "not_reproducible": data["not_reproducible"],
        "figures": len(figures),
        "figures_agreeing": agree,
        "rows_agreeing": sum(r["agrees"] for r in rows),
        "disagreeing": [
            {"row": r["name"], **{k: q[k] for k in ("quantity", "printed", "computed")}}
            for r in rows
            for q in r["quantities"]
            if not q["agrees"]
        ],
        "verdict": "met" if agree == len(figures) else "not met",
    }


def headline(results: dict) -> str:
    """One line for the demo and the docs: how many printed figures reproduce."""
    text = (
        f"{results['figures_agreeing']} of {results['figures']} printed figures reproduced "
        f"within rounding ({results['rows_agreeing']} of {len(results['rows'])} rows)"
    )
    if results["disagreeing"]:
        worst = max(
            results["disagreeing"],
            key=lambda d: abs(d["computed"] / float(d["printed"].replace(",", "")) - 1),
        )
        text += (
            f"; not reproduced: {len(results['disagreeing'])}, the furthest "
            f"{worst['row']} {worst['quantity']} (printed {worst['printed']}, "
            f"computed {worst['computed']:.4g})"
        )
    return text

"""Renderers of the docs' measured sections, one module per command (``SECTIONS``).

A module ``docs/sections/<command>.py`` defines::

    SECTIONS = {"search": render_search}   # <!-- generated: <command>.search -->

    def render_search(sources):
        doc = sources.load("benchmarks/results/icl-order.json")
        return md_table(...)

and uses the formatting helpers below, so every page writes numbers the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def num(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` significant digits (``—`` for None / NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and (abs(value) >= 10**digits or abs(value) < 1e-3):
        return f"{value:.{digits - 1}e}" if abs(value) < 1e-3 else f"{value:,.0f}"
    return f"{value:.{digits}g}"


def interval(mean: Any, low: Any = None, high: Any = None, digits: int = 3) -> str:
    """``0.412 [0.380, 0.444]`` (or the mean alone without bounds)."""
    if low is None or high is None:
        return num(mean, digits)
    return f"{num(mean, digits)} [{num(low, digits)}, {num(high, digits)}]"


def pct(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{100 * value:.{digits}f}%"


def md_table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    """A Markdown table; cells that are not strings go through :func:`num`."""
    cells = [[c if isinstance(c, str) else num(c) for c in row] for row in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def targets_table(doc: dict) -> str:
    """The targets of a benchmark result file, with their verdicts."""
    rows = []
    for t in doc["targets"]:
        measured = num(t["measured"])
        if t.get("interval"):
            measured = interval(t["measured"], *t["interval"])
        verdict = f"**{t['verdict']}**" if t["verdict"] != "met" else "met"
        rows.append([f"`{t['name']}`", measured, f"{t['op']} {t['target']:g}", verdict, t["why"]])
    return md_table(rows, ["target", "measured", "wanted", "verdict", "why this target"])


def cli_timing_table(doc: dict) -> str:
    """The commands of a ``scripts/time_*_cli.py`` result file (``scripts/cli_timing.py``)
    against their wall-clock targets, one row per command."""
    rows = []
    for c in doc["commands"].values():
        rows.append([f"`{' '.join(c['command'])}`", num(c["wall_median_s"]),
                     ", ".join(num(w) for w in c["wall_s"]), num(c["cpu_median_s"]),
                     ", ".join(num(load, 2) for load in c["load_before"]),
                     f"≤ {num(c['target_s'])} s",
                     "met" if c["target_met"] else "**not met**"])  # fmt: skip
    headers = ["command", "wall median s", "wall s", "CPU median s", "load before",
               "target (every run)", "verdict"]  # fmt: skip
    return md_table(rows, headers)

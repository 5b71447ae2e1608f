"""Studies: the CLI runs whose documents the docs quote (``python -m experiments``).

A study is one ``iclr25`` command line (usually a command's comparison with its controls,
at the size the docs report). Each ``experiments/<command>.py`` module lists its studies::

    STUDIES = {
        "diffusion-at-compare": Study(
            args=("diffusion-at", "compare", "--seeds", "5"),
            about="AT against replay-only and noise controls, 8gaussians, 5 seeds",
        ),
    }

``python -m experiments run NAME`` runs it through the real console entry point with
``--json --quiet`` and writes ``experiments/results/NAME.json``: the command's JSON document
(its ``results`` carry the study's hypothesis, pass conditions and verdict, computed by the
command itself) under ``document``, with the provenance of the run. ``make docs`` renders
the docs' figures from these files.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SCHEMA = "iclr25-study/1"


@dataclass(frozen=True)
class Study:
    args: tuple[str, ...]  # after `iclr25`, without the common options --json/--quiet
    about: str  # one line: what it measures
    seed: int = 0
    timeout_s: float = 4 * 3600.0


def studies() -> dict[str, Study]:
    found: dict[str, Study] = {}
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"experiments.{info.name}")
        for name, study in getattr(module, "STUDIES", {}).items():
            if name in found:
                raise ValueError(f"study {name!r} defined twice")
            found[name] = study
    return found

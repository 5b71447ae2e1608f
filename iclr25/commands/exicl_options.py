"""Options, input helpers and tables of `iclr25 exicl` (kept out of the command module)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt

__all__ = ["NoCacheOpt", "SchedulerOpt", "WorkersOpt"]


class Layout(enum.StrEnum):
    wall = "wall"
    box = "box"


DemosOpt = Annotated[
    Path | None,
    typer.Option(
        "--demos",
        help="Demonstrations: .npz (states [N, T, 2] as (x, y), optional actions, lengths) or "
        ".parquet (episode, t, state/action columns). Without it: the built-in --layout.",
    ),
]
EnvOpt = Annotated[
    Path | None,
    typer.Option("--env", help='Spec .json: {"type": "grid2d" | "point2d", ...} (docs/exicl.md).'),
]
LayoutOpt = Annotated[
    Layout,
    typer.Option(
        "--layout",
        help="Built-in layout when --demos is not given: wall (ambiguous) or box "
        "(almost identifiable), drawn fresh from --seed.",
    ),
]
PriorOpt = Annotated[
    Path | None,
    typer.Option(
        "--prior",
        help="A prior from `exicl train-prior`; default: the bundled prior of a built-in "
        "layout, else one is trained first.",
    ),
]
SaveOpt = Annotated[Path, typer.Option("--save", help="Where to write the prior (.safetensors).")]
NominalOpt = Annotated[
    Path | None,
    typer.Option("--nominal", help="Non-expert trajectories for the prior (formats as --demos)."),
]
MasksOpt = Annotated[
    Path,
    typer.Option("--masks", help=".npz with `masks` bool [K, height, width], True = infeasible."),
]
KOpt = Annotated[int, typer.Option("--k", help="Constraints to learn (K).")]
DiversityOpt = Annotated[
    float, typer.Option("--diversity", help="δ_d, InfoNCE diversity weight (0 = control).")
]
SparsityOpt = Annotated[float, typer.Option("--sparsity", help="δ_s, weight of E[1 − φ].")]
RoundsOpt = Annotated[int, typer.Option("--rounds", help="Exploration rounds per constraint.")]
SamplesOpt = Annotated[int, typer.Option("--samples", help="Guided samples per round.")]
ToleranceOpt = Annotated[
    float,
    typer.Option("--tolerance", help="A demo is optimal if ≤ (1 + tolerance) × the shortest path."),
]
HorizonOpt = Annotated[int, typer.Option("--horizon", help="States per trajectory of the prior.")]
TrainStepsOpt = Annotated[int, typer.Option("--train-steps", help="Optimiser steps of the prior.")]
TrajectoriesOpt = Annotated[
    int, typer.Option("--trajectories", help="Generated nominal trajectories (without --nominal).")
]
StateColsOpt = Annotated[str, typer.Option("--state-columns", help="Parquet state columns.")]
ActionColsOpt = Annotated[str, typer.Option("--action-columns", help="Parquet action columns.")]
QuickOpt = Annotated[bool, typer.Option("--quick", help="2 seeds and a smaller budget.")]
SeedsOpt = Annotated[int | None, typer.Option("--seeds", help="Seeds (default 5; quick: 2).")]

CONSTRAINT_KEYS = (
    "constraints [{exact_feasible, gdv_feasible, gdv_witnesses, accepted, return_gap, "
    "relative_gap, expert_violations, verdict_certain, infeasible_cells, iou_with_true, "
    "lambda}]"
)
TRAIN_KEYS = (
    "JSON results: saved_to, spec_digest, final_loss, loss_curve, legal_move_rate, "
    "train_trajectories."
)
RECOVER_KEYS = (
    f"JSON results: layout, {CONSTRAINT_KEYS}, n_exact_feasible, exact_feasible_share, "
    "n_distinct_feasible, mean_pairwise_iou, cost_variance, verifier_agreement, "
    "relevant_cells, trivial."
)
VERIFY_KEYS = (
    "JSON results: constraints [{exact_feasible, return_gap, relative_gap, expert_violations, "
    "verdict_certain, infeasible_cells, iou_with_true}], n_exact_feasible, n_distinct_feasible, "
    "mean_pairwise_iou, relevant_cells."
)
EXPERIMENT_KEYS = (
    "JSON results: verdict, summary, hypothesis, control, baseline, conditions {P1, P2, P3, "
    "P4: {value, ci95, threshold, passed, text}}, methods {layout: {exicl | control | maxent: "
    "{metric: {per_seed, mean, ci95}}}}, seeds."
)
CALIBRATE_KEYS = (
    "JSON results: precision, recall, agreement, exact_feasible, gdv_feasible, candidates, "
    "by_kind {perturbed, random: {precision, recall, agreement, exact_feasible, "
    "gdv_feasible}} (positive = feasible)."
)
CandidatesOpt = Annotated[
    int, typer.Option("--candidates", help="Masks to judge (half perturbed truth, half random).")
]


# ---------------------------------------------------------------------------------------
# Configs and inputs
# ---------------------------------------------------------------------------------------
def prior_config(horizon: int, train_steps: int, trajectories: int):
    from iclr25.core.exicl.prior import PriorConfig
    from iclr25.runner import require

    require(2 <= horizon <= 128, f"--horizon {horizon} is out of range", "use 2 … 128")
    require(train_steps >= 1, f"--train-steps {train_steps} is below 1", "use ≥ 1")
    require(trajectories >= 1, f"--trajectories {trajectories} is below 1", "use ≥ 1")
    return PriorConfig(horizon=horizon, train_steps=train_steps, trajectories=trajectories)


def exicl_config(k, diversity, sparsity, rounds, samples, tolerance):
    from iclr25.core.exicl.exicl import ExiclConfig

    config = ExiclConfig(k=k, diversity=diversity, sparsity=sparsity, rounds=rounds,
                         samples=samples, tolerance=tolerance)  # fmt: skip
    config.validate()
    return config


def check_save(path: Path, overwrite: bool) -> None:
    from iclr25.errors import InputError

    if path.exists() and not overwrite:
        raise InputError(f"--save {path} exists", "pass --overwrite or choose another path")
    if not path.parent.is_dir():
        raise InputError(f"--save {path}: no folder {path.parent}", "create it first")


def read_nominal(path: Path | None, problem, horizon: int):
    """(N, horizon, 2) padded nominal trajectories from --nominal, or None."""
    if path is None:
        return None
    from iclr25.core.exicl.demos import load_demos
    from iclr25.errors import InputError

    nominal = load_demos(path, problem.spec, "--nominal")
    if int(nominal.lengths.max()) > horizon:
        raise InputError(
            f"--nominal {path}: an episode has {int(nominal.lengths.max())} states",
            f"use --horizon ≥ {int(nominal.lengths.max())}",
        )
    return nominal.padded(horizon)


def bundled_prior_path(layout: str) -> Path:
    from iclr25.paths import package_file

    return package_file("iclr25.data", "exicl", f"{layout}_prior.safetensors")


def obtain_prior(run, path: Path | None, problem, horizon: int):
    """--prior, else the bundled prior of a built-in layout, else train one (warned)."""
    from iclr25.core.exicl.pipeline import fit_prior
    from iclr25.core.exicl.prior import PriorConfig, load_prior
    from iclr25.errors import InputError

    if path is None and problem.name != "custom":
        path = bundled_prior_path(problem.name)
    if path is not None:
        prior = load_prior(path, problem.spec)
        if prior.config.horizon < int(problem.demos.lengths.max()):
            raise InputError(
                f"--prior {path}: horizon {prior.config.horizon} is below the longest demo",
                "train a prior with a longer --horizon",
            )
        return prior
    run.warn("no --prior: training one first (2,000 generated trajectories)")
    with run.progress("prior", total=PriorConfig().train_steps) as advance, run.timer("train_s"):
        prior, _ = fit_prior(problem, PriorConfig(horizon=horizon), run.seed, None, advance)
    return prior


def verify_device(run) -> str:
    """``cuda`` when the device is CUDA and CuPy sees it (the kernel), else ``cpu``."""
    if run.device.kind != "cuda":
        return "cpu"
    from iclr25.gpu import get_cupy

    if get_cupy() is None:
        run.warn("CuPy does not see the GPU: exact verification runs on the CPU (scipy)")
        return "cpu"
    return "cuda"


def read_masks(path: Path):
    import numpy as np

    from iclr25.errors import InputError

    if not path.is_file():
        raise InputError(f"--masks {path}: no such file", "give an .npz with `masks`")
    try:
        with np.load(path, allow_pickle=False) as data:
            masks = np.asarray(data["masks"])
    except KeyError:
        raise InputError(f"--masks {path}: no `masks` array", "save masks (K, H, W)") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"--masks {path}: not a readable .npz ({exc})", "fix the file") from None
    if masks.ndim != 3 or masks.dtype != bool or len(masks) == 0:
        raise InputError(
            f"--masks {path}: masks is {masks.dtype} {masks.shape}",
            "save bool (K ≥ 1, height, width), indexed [k, y, x]",
        )
    return masks


def save_constraints(run, problem, masks, phi) -> None:
    import io

    import numpy as np

    from iclr25 import atomic
    from iclr25.core.exicl.plots import constraints_figure

    buf = io.BytesIO()
    np.savez(buf, masks=masks, phi=phi)
    atomic.write_bytes(run.artifact_path("constraints.npz"), buf.getvalue())
    run.save_plot(constraints_figure(problem, masks, phi), "constraints")


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------
def render_prior(console, results) -> None:
    from iclr25.output import render_mapping

    shown = {k: v for k, v in results.items() if k != "loss_curve"}
    render_mapping(console, shown, title="exicl train-prior")


def _constraint_table(rows, title: str):
    from iclr25.output import rows_table

    headers = {
        "exact_feasible": "exact",
        "gdv_feasible": "GDV",
        "return_gap": "return gap",
        "expert_violations": "expert viol.",
        "infeasible_cells": "cells",
        "iou_with_true": "IoU true",
        "lambda": "λ",
    }
    shown = [{"k": i, **{h: r.get(key) for key, h in headers.items()}} for i, r in enumerate(rows)]
    return rows_table(shown, ["k", *headers.values()], title=title)


def render_recover(console, results) -> None:
    from iclr25.core.exicl.experiment import recover_headline

    console.print(_constraint_table(results["constraints"], f"exicl recover: {results['layout']}"))
    console.print(recover_headline(results))


def render_verify(console, results) -> None:
    console.print(_constraint_table(results["constraints"], "exicl verify (exact)"))
    console.print(
        f"{results['n_exact_feasible']} exactly feasible, "
        f"{results['n_distinct_feasible']} distinct (IoU < 0.5 over "
        f"{results['relevant_cells']} relevant cells)"
    )


def render_experiment(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "condition": name,
            "value": c["value"],
            "ci95": c["ci95"],
            "threshold": c["threshold"],
            "passed": c["passed"],
            "what": c["text"],
        }  # fmt: skip
        for name, c in results["conditions"].items()
    ]
    console.print(rows_table(rows, title="exicl experiment: pass conditions (fixed in code)"))
    console.print(results["summary"])


def render_calibrate(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "candidates": "all",
            **{
                k: results[k]
                for k in ("precision", "recall", "agreement", "exact_feasible", "gdv_feasible")
            },
        }
    ]
    rows += [{"candidates": kind, **r} for kind, r in results["by_kind"].items()]
    console.print(rows_table(rows, title="exicl calibrate: GDV against the exact verdict"))

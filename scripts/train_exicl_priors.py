"""Train the bundled exicl priors (one per built-in layout family) and ship them.

    .venv/bin/python scripts/train_exicl_priors.py [--check]

Deterministic (CPU, one thread, seed 0): for ``wall`` and ``box``, 2,000 nominal
trajectories from the family's start / goal regions (the hidden constraint is never
used), the default :class:`PriorConfig`, then the two acceptance figures of the issue on
fresh layouts: the legal-move rate of 256 unguided samples (target ≥ 0.90) and the median
ratio of reward-guided paths to the unconstrained shortest path (target ≤ 1.15; a
sample's path is the shortest legal one inside its tube — the cells its states and move
midpoints round to, up to its first visit of the goal cell, the rest being padding —
:func:`iclr25.core.exicl.sampler.tube_path`). Writes
``iclr25/data/exicl/<layout>_prior.safetensors`` and ``iclr25/data/exicl/priors.json``
(figures, sha256, seconds). With --check it writes nothing and compares a fresh training
with the shipped weights. The ``box`` family's nominal detours stay near the trip
(:mod:`iclr25.core.exicl.nominal`).

Under ``torchrun --nproc-per-node N scripts/train_exicl_priors.py`` the training runs
data-parallel (gloo, :mod:`iclr25.distributed_torch`): every process draws the same global
batch of ``PriorConfig.batch`` trajectories from the same generator and computes the
loss on its rows, so the update and the logged loss are the one-process ones (to float32
summation order); rank 0 alone evaluates, prints and writes. ``--train-steps``,
``--trajectories``, ``--out-dir`` and ``--loss-log`` (every step's batch loss, JSON) exist
for tests and trial runs; the shipped priors use the defaults.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from iclr25 import atomic
from iclr25.core.exicl import grid
from iclr25.core.exicl.layouts import make_layout
from iclr25.core.exicl.pipeline import Problem, fit_prior
from iclr25.core.exicl.prior import PriorConfig, load_prior, save_prior
from iclr25.core.exicl.sampler import Guidance, sample, tube_path
from iclr25.core.exicl.verifier import verify
from iclr25.paths import package_file
from iclr25.provenance import provenance

LAYOUTS = ("wall", "box")
GUIDE_SCALE = 0.2


def guided_ratio(prior, seed: int, layout: str) -> float | None:
    """Median length ratio of reward-guided samples to the unconstrained shortest path.

    A sample whose tube holds no legal path (:func:`tube_path` gives None; an under-trained
    prior, e.g. a tiny test run) counts as infinitely long; None when that makes the median
    infinite (more than half of the samples decode to nothing)."""
    lay = make_layout(layout, 1000 + seed)
    spec = lay.spec
    shortest = verify(spec, lay.demos, np.zeros((1, spec.height, spec.width), bool)).shortest[0]
    traj = sample(prior, lay.demos.starts, lay.demos.goals, seed, Guidance(scale=GUIDE_SCALE))
    paths = [tube_path(spec, t, spec.walls) for t in traj]
    lengths = [np.inf if p is None else grid.path_length(spec, p) for p in paths]
    median = float(np.median(np.asarray(lengths) / shortest))
    return median if np.isfinite(median) else None


def train(layout: str, config: PriorConfig, group, losses: list[float]):
    """Train one layout's prior (under torchrun: this rank's part; rank 0 evaluates)."""
    from iclr25.distributed_torch import DataParallel

    lay = make_layout(layout, 0)
    problem = Problem(lay.spec, lay.demos, None, lay.regions, layout, lay.nominal)
    parallel = DataParallel(group, config.batch) if group.active else None
    t0 = time.perf_counter()
    prior, report = fit_prior(problem, config, 0, None, None, parallel, losses.append)
    report["train_s"] = time.perf_counter() - t0
    if group.is_main:
        report["guided_over_shortest"] = guided_ratio(prior, 0, layout)
    if group.active:
        report["distributed"] = group.as_dict()
    return prior, lay.spec, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped weights")
    parser.add_argument("--only", choices=LAYOUTS, help="one layout family")
    parser.add_argument("--train-steps", type=int, help="optimiser steps (default: PriorConfig)")
    parser.add_argument("--trajectories", type=int, help="nominal trajectories (default: ditto)")
    parser.add_argument("--out-dir", type=Path, help="write here instead of the package data")
    parser.add_argument("--loss-log", type=Path, help="every step's batch loss as JSON")
    parser.add_argument(
        "--evaluate",
        action="store_true",
        help="no training: re-measure the shipped priors' guided-path ratio into priors.json",
    )
    args = parser.parse_args(argv)
    if args.evaluate:
        return evaluate(args)
    torch.set_num_threads(1)  # bit-for-bit reproducible reductions
    from iclr25.distributed_torch import process_group

    with process_group("cpu") as group:
        return run(args, group)


def evaluate(args) -> int:
    """Re-measure ``guided_over_shortest`` of the shipped priors (after a change to how
    samples are decoded), recorded with the provenance of this run beside the training's."""
    out_dir = args.out_dir or package_file("iclr25.data", "exicl")
    summary_path = out_dir / "priors.json"
    summary = json.loads(summary_path.read_text())
    for layout in [args.only] if args.only else LAYOUTS:
        spec = make_layout(layout, 0).spec
        prior = load_prior(out_dir / f"{layout}_prior.safetensors", spec)
        summary[layout]["guided_over_shortest"] = guided_ratio(prior, 0, layout)
        print(layout, "guided_over_shortest", summary[layout]["guided_over_shortest"])
    summary["evaluated"] = provenance(
        ["python", "scripts/train_exicl_priors.py", *sys.argv[1:]], [0]
    )
    atomic.write_json(summary_path, summary)
    return 0


def run(args, group) -> int:
    config = PriorConfig()
    if args.train_steps is not None:
        config = replace(config, train_steps=args.train_steps)
    if args.trajectories is not None:
        config = replace(config, trajectories=args.trajectories)
    out_dir = args.out_dir or package_file("iclr25.data", "exicl")
    summary_path = out_dir / "priors.json"
    worst, losses = 0.0, {}
    for layout in [args.only] if args.only else LAYOUTS:
        losses[layout] = []
        prior, spec, report = train(layout, config, group, losses[layout])
        if not group.is_main:
            continue
        path = out_dir / f"{layout}_prior.safetensors"
        print(layout, {k: v for k, v in report.items() if k not in ("loss_curve", "config")})
        if args.check:
            shipped = load_prior(path, spec).model.state_dict()
            fresh = prior.model.state_dict()
            worst = max(worst, *(float((shipped[k] - v).abs().max()) for k, v in fresh.items()))
            continue
        save_prior(prior, path, spec)
        report.pop("loss_curve")
        report["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
        summary[layout] = report
        summary["provenance"] = provenance(
            ["python", "scripts/train_exicl_priors.py", *sys.argv[1:]], [0]
        )
        atomic.write_json(summary_path, summary)
        print(f"wrote {path}")
    if not group.is_main:
        return 0
    if args.loss_log is not None:
        atomic.write_json(args.loss_log, {"losses": losses})
    if args.check:
        print(f"largest weight difference from the shipped files: {worst:.3e}")
        return 0 if worst < 1e-4 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

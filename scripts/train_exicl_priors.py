"""Train the bundled exicl priors (one per built-in layout family) and ship them.

    .venv/bin/python scripts/train_exicl_priors.py [--check]

Deterministic (CPU, one thread, seed 0): for ``wall`` and ``box``, 2,000 nominal
trajectories from the family's start / goal regions (the hidden constraint is never
used), the default :class:`PriorConfig`, then the two acceptance figures of the issue on
fresh layouts: the legal-move rate of 256 unguided samples (target ≥ 0.90) and the median
ratio of reward-guided paths (rounded, gaps filled) to the unconstrained shortest path
(target ≤ 1.15). Writes ``iclr25/data/exicl/<layout>_prior.safetensors`` and
``iclr25/data/exicl/priors.json`` (figures, sha256, seconds). With --check it writes
nothing and compares a fresh training with the shipped weights.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np
import torch

from iclr25 import atomic
from iclr25.core.exicl import grid
from iclr25.core.exicl.layouts import make_layout
from iclr25.core.exicl.pipeline import Problem, fit_prior
from iclr25.core.exicl.prior import PriorConfig, load_prior, save_prior
from iclr25.core.exicl.sampler import Guidance, fill_path, sample, to_cells
from iclr25.core.exicl.verifier import verify
from iclr25.paths import package_file
from iclr25.provenance import provenance

LAYOUTS = ("wall", "box")
GUIDE_SCALE = 0.2


def guided_ratio(prior, seed: int, layout: str) -> float:
    """Median length ratio of reward-guided samples to the unconstrained shortest path."""
    lay = make_layout(layout, 1000 + seed)
    spec = lay.spec
    shortest = verify(spec, lay.demos, np.zeros((1, spec.height, spec.width), bool)).shortest[0]
    traj = sample(prior, lay.demos.starts, lay.demos.goals, seed, Guidance(scale=GUIDE_SCALE))
    lengths = [grid.path_length(spec, fill_path(c)) for c in to_cells(traj, 16, 16)]
    return float(np.median(np.asarray(lengths) / shortest))


def train(layout: str):
    lay = make_layout(layout, 0)
    problem = Problem(lay.spec, lay.demos, None, lay.regions, layout)
    t0 = time.perf_counter()
    prior, report = fit_prior(problem, PriorConfig(), seed=0)
    report["train_s"] = time.perf_counter() - t0
    report["guided_over_shortest"] = guided_ratio(prior, 0, layout)
    return prior, lay.spec, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped weights")
    parser.add_argument("--only", choices=LAYOUTS, help="one layout family")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # bit-for-bit reproducible reductions
    summary_path = package_file("iclr25.data", "exicl", "priors.json")
    worst = 0.0
    for layout in [args.only] if args.only else LAYOUTS:
        prior, spec, report = train(layout)
        path = package_file("iclr25.data", "exicl", f"{layout}_prior.safetensors")
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
    if args.check:
        print(f"largest weight difference from the shipped files: {worst:.3e}")
        return 0 if worst < 1e-4 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

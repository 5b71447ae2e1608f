"""What the ``exicl`` subcommands run: input checks, prior training, recovery, verification.

Every input check runs before any training (:func:`check_inputs`): the demonstrations fit
the horizon, some state constraint explains them exactly (else the episode and its gap are
named), and whether they are already optimal without one (``trivial``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from iclr25.core.exicl import metrics
from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.exicl import ExiclConfig, explore
from iclr25.core.exicl.nominal import nominal_trajectories, regions_from_demos
from iclr25.core.exicl.prior import Prior, PriorConfig, train_prior
from iclr25.core.exicl.sampler import legal_move_rate, sample
from iclr25.core.exicl.spec import GridSpec, Spec
from iclr25.core.exicl.verifier import check_explainable, relevant_region, verify
from iclr25.errors import InputError


@dataclass
class Problem:
    """A spec, its demonstrations, and (built-in layouts) the hidden constraint."""

    spec: Spec
    demos: Demos
    hidden: np.ndarray | None = None  # (H, W) bool, the true constraint when known
    regions: tuple | None = None  # nominal start / goal regions; default: from the demos
    name: str = "custom"
    nominal: dict | None = None  # options of the generated nominal data (built-in layouts)


def check_inputs(problem: Problem, horizon: int, tolerance: float) -> bool:
    """Raise InputError on unusable demonstrations; return ``trivial``."""
    if tolerance < 0:
        raise InputError(f"--tolerance {tolerance} is negative", "use a tolerance ≥ 0, e.g. 0.1")
    longest = int(problem.demos.lengths.max())
    if longest > horizon:
        i = int(np.argmax(problem.demos.lengths))
        raise InputError(
            f"--horizon {horizon} is below episode {i}'s {longest} states",
            f"use --horizon ≥ {longest}",
        )
    return check_explainable(problem.spec, problem.demos, tolerance)


# ---------------------------------------------------------------------------------------
# Prior
# ---------------------------------------------------------------------------------------
def fit_prior(problem: Problem, config: PriorConfig, seed: int, nominal: np.ndarray | None = None,
              on_step=None, parallel=None, on_loss=None) -> tuple[Prior, dict]:  # fmt: skip
    """Train p_θ on ``nominal`` (N, H, 2) or on generated nominal data; returns the prior
    and its report (``final_loss``, ``legal_move_rate`` of 256 unguided samples).
    ``parallel``, ``on_loss``: as :func:`train_prior` (under torchrun every rank trains;
    call this on every rank, then let rank 0 alone use the result)."""
    regions = problem.regions or regions_from_demos(problem.spec, problem.demos)
    if nominal is None:
        nominal = nominal_trajectories(
            problem.spec,
            regions,
            config.trajectories,
            config.horizon,
            seed,
            **(problem.nominal or {}),
        )
    prior, curve = train_prior(nominal, problem.spec, config, seed, on_step, parallel, on_loss)
    rng = np.random.default_rng(seed + 1)
    pick = rng.integers(0, len(nominal), 256)
    unguided = sample(prior, nominal[pick, 0], nominal[pick, -1], seed + 2)
    rate = legal_move_rate(problem.spec, unguided)
    prior.meta["legal_move_rate"] = rate
    report = {
        "final_loss": curve[-1],
        "loss_curve": curve,
        "legal_move_rate": rate,
        "train_trajectories": int(len(nominal)),
        "config": asdict(config),
    }
    return prior, report


# ---------------------------------------------------------------------------------------
# Recover and verify
# ---------------------------------------------------------------------------------------
def reference_trajectories(problem: Problem, seed: int) -> list[np.ndarray]:
    """The demonstrations' cells plus (grid2d) one unconstrained shortest path per demo."""
    from iclr25.core.exicl.layouts import random_shortest_path
    from iclr25.core.exicl.sampler import to_cells

    spec = problem.spec
    refs = [to_cells(e, spec.width, spec.height) for e in problem.demos.episodes]
    if isinstance(spec, GridSpec):
        rng = np.random.default_rng(seed)
        empty = np.zeros((spec.height, spec.width), dtype=bool)
        for s, g in zip(problem.demos.starts, problem.demos.goals, strict=True):
            refs.append(random_shortest_path(spec, empty, s, g, rng))
    return refs


def constraint_rows(problem: Problem, verdicts, candidates, region) -> list[dict]:
    rows = []
    for k, cand in enumerate(candidates):
        row = verdicts.row(k)
        truth = problem.hidden
        row.update(
            {
                "gdv_feasible": bool(cand.gdv_feasible),
                "gdv_witnesses": int(cand.witnesses),
                "accepted": bool(cand.accepted),
                "infeasible_cells": int(cand.mask.sum()),
                "iou_with_true": None if truth is None else metrics.iou(cand.mask, truth, region),
                "lambda": float(cand.lam),
            }
        )
        rows.append(row)
    return rows


def recover(problem: Problem, prior: Prior, config: ExiclConfig, seed: int, trivial: bool,
            on_round=None) -> tuple[dict, np.ndarray, np.ndarray]:  # fmt: skip
    """Learn K constraints and score them exactly: (results, masks (K, H, W), φ (K, H, W))."""
    cands = explore(problem.spec, problem.demos, prior, config, seed, on_round)
    masks = np.stack([c.mask for c in cands])
    phi = np.stack([c.phi for c in cands])
    v = verify(problem.spec, problem.demos, masks, config.tolerance)
    region = relevant_region(problem.spec, problem.demos)
    gdv = np.array([c.gdv_feasible for c in cands])
    results = {
        "layout": problem.name,
        "constraints": constraint_rows(problem, v, cands, region),
        **metrics.score(masks, phi, v.feasible, gdv, region, reference_trajectories(problem, seed)),
        "relevant_cells": int(region.sum()),
        "trivial": bool(trivial),
    }
    return results, masks, phi


def verify_masks(problem: Problem, masks: np.ndarray, tolerance: float, device: str = "cpu"):
    """Exact verdicts of given masks (``exicl verify``)."""
    spec = problem.spec
    if masks.shape[1:] != (spec.height, spec.width):
        raise InputError(
            f"--masks: shape {masks.shape} does not match the {spec.width}×{spec.height} env",
            f"save masks as bool (K, {spec.height}, {spec.width}), indexed [k, y, x]",
        )
    v = verify(spec, problem.demos, masks, tolerance, device=device)
    region = relevant_region(spec, problem.demos)
    rows = []
    for k in range(len(masks)):
        row = v.row(k)
        row["infeasible_cells"] = int(masks[k].sum())
        row["iou_with_true"] = (
            None if problem.hidden is None else metrics.iou(masks[k], problem.hidden, region)
        )
        rows.append(row)
    feasible = [m for m, ok in zip(masks, v.feasible, strict=True) if ok]
    return {
        "constraints": rows,
        "n_exact_feasible": int(v.feasible.sum()),
        "n_distinct_feasible": len(metrics.distinct_groups(feasible, region)),
        "mean_pairwise_iou": metrics.mean_pairwise_iou(feasible, region),
        "relevant_cells": int(region.sum()),
    }


def load_problem(demos_path, env_path, layout: str, seed: int, state_columns: str = "x,y",
                 action_columns: str = "dx,dy") -> Problem:  # fmt: skip
    """``--demos`` with ``--env`` (both or neither); without them the built-in ``layout``
    drawn with ``seed`` (a fresh hidden constraint and expert)."""
    from iclr25.core.exicl.demos import load_demos
    from iclr25.core.exicl.layouts import make_layout
    from iclr25.core.exicl.spec import load_spec
    from iclr25.errors import UsageError

    if (demos_path is None) != (env_path is None):
        raise UsageError("--demos and --env go together", "give both, or neither for a layout")
    if demos_path is None:
        lay = make_layout(layout, seed)
        return Problem(lay.spec, lay.demos, lay.hidden, lay.regions, lay.name, lay.nominal)
    spec = load_spec(env_path)
    demos = load_demos(demos_path, spec, "--demos", state_columns, action_columns)
    return Problem(spec, demos, None, None, "custom")

"""Train the PI-DION model that `iclr25 pi-dion solve --model bundled` uses (deterministic).

    PYTHONPATH=. OMP_NUM_THREADS=1 nice -n 10 python scripts/train_pi_dion.py

Problem: reaction-diffusion 1-D, k = 1, 64 full sensors, noise 0.01, Matérn ν = 2.5,
ℓ = 0.2 (the toolkit's defaults). Training data: 1,000 unlabelled instances drawn with
``--data-seed`` (0) — measurements of u only; f is never generated into the training
call. Recipe (label-free; see docs/pi-dion.md): full-batch Adam (lr 1e-3, cosine decay),
then full-batch L-BFGS at fixed collocation points; one torch thread, seed 0.

With ``--baselines`` (optionally ``--baselines N,N,...``; default N = 10, 30, 100, 300,
1000) the script also trains the supervised DeepONets that ``compare --quick`` scores:
the same network, recipe, seed and training instances, each on the first N instances
*with* their f (labels are the point of a baseline; PI-DION's training call still never
receives f). ``--baselines-only`` trains just those and leaves the PI-DION file alone.
They are written beside ``--out`` as ``supervised_rd1d_N<n>.safetensors`` with
``baselines_log.json`` (held-out errors, CPU time, sha256 of each). A bad list is one
line on stderr, exit 2, before anything is trained or written.

Acceptance check (labels used for scoring only, after training): relative L² on the
held-out set (seed 20250101, 500 instances) ≤ 0.40 on f and ≤ 0.05 on u. The model is
written whether or not it passes, and the log ``train_log.json`` beside it records the
figures, ``meets_targets``, the wall and CPU time and the sha256; the exit status is 1
when the targets are missed.

``--dim 2`` trains the 2-D model instead (reaction-diffusion on (0,1)², k = 1, the 16×16
sensor grid, noise 0.01; CNN branches, :mod:`iclr25.core.pi_dion.train2d`) with a smaller
recipe by default (``STEPS_2D`` full-batch Adam + ``LBFGS_2D`` L-BFGS steps on
``N_TRAIN_2D`` unlabelled instances, 1,024 collocation points per step), writes
``pi_dion_rd2d.safetensors`` and ``train_log_2d.json`` (held-out errors on
``HELD_OUT_N_2D`` instances of seed 20250101, wall and CPU time, sha256). The issue sets no
2-D target: the exit status is 0 when the model is written; ``compare --dim 2 --model
bundled --test-per-seed`` measures it against Tikhonov and the Bayes mean
(``--baselines`` is 1-D only).

``--pde darcy`` trains the 1-D darcy model instead (−(a u')' = 1, unknown a = exp(g), 64 full
sensors, noise 0.01, Matérn ν = 2.5, ℓ = 0.2; :mod:`iclr25.core.pi_dion.darcy_model`) with
the recipe of the study ``pi-dion-compare-darcy-long`` by default (``STEPS_DARCY`` Adam
steps in batches of ``BATCH_DARCY`` + ``LBFGS_DARCY`` full-batch L-BFGS steps on 1,000
unlabelled instances), writes ``pi_dion_darcy1d.safetensors`` and ``train_log_darcy.json``:
held-out errors of a, g and u on the darcy studies' held-out draw (seed
``darcy_compare.TEST_SEED`` = 20251203, ``HELD_OUT_N_DARCY`` = 200 instances: the very set
``compare --pde darcy`` scores Tikhonov–Gauss–Newton on), wall and CPU time, sha256. The
issue sets no darcy target: the exit status is 0 when the model is written. darcy trains in
one process (not under torchrun) and has no ``--baselines``.

Under ``torchrun --nproc-per-node N scripts/train_pi_dion.py`` the training runs
data-parallel (gloo, :mod:`iclr25.distributed_torch`; Adam and L-BFGS both), 1-D and
2-D, the PI-DION model and each supervised baseline in turn: every process generates the
same data and draws the same instances and collocation points, computes the loss on its
contiguous share of the instances, and DDP averages the weighted gradients, so each step
is the one-process step (to float32 summation order; L-BFGS's line search amplifies that
into slightly different step sizes, but every rank takes the same ones: the script fails
if the ranks' parameters differ in any bit). A baseline on N labels needs N ≥ the number
of processes. Rank 0 alone evaluates, prints and writes (the models, the logs, which
record ``distributed``). ``--loss-log`` (every Adam step's loss, JSON; each baseline's
under ``baselines``) is for tests and trial runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "iclr25" / "data" / "pi_dion"
TARGET_F, TARGET_U = 0.40, 0.05
HELD_OUT_SEED, HELD_OUT_N = 20250101, 500
# --dim 2: the default recipe (sized to the shared 2-core machine) and held-out size
STEPS_2D, LBFGS_2D, N_TRAIN_2D, HELD_OUT_N_2D = 1000, 1000, 300, 100
# --pde darcy: the recipe of the study pi-dion-compare-darcy-long, and the held-out size
STEPS_DARCY, BATCH_DARCY, LBFGS_DARCY, HELD_OUT_N_DARCY = 3000, 100, 400, 200


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


DEFAULT_BASELINES = "10,30,100,300,1000"


def parse_baselines(args, world_size: int = 1) -> list[int]:
    """The label counts of the baselines to train ([] for none); ValueError on a bad list.
    Data-parallel (``world_size`` processes) every N must give each process an instance."""
    if args.baselines is None and not args.baselines_only:
        return []
    text = DEFAULT_BASELINES if args.baselines is None else args.baselines
    fix = f"e.g. --baselines {DEFAULT_BASELINES}"
    try:
        labels = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(
            f"--baselines {text!r} is not a comma-separated list of integers — {fix}"
        ) from None
    bad = [n for n in labels if not world_size <= n <= args.n_train]
    if bad:
        why = f" (an instance or more for each of {world_size} processes)" * (world_size > 1)
        raise ValueError(f"--baselines {bad}: every N must be in {world_size}..--n-train "
                         f"({args.n_train}){why} — {fix}, or raise --n-train")  # fmt: skip
    if len(set(labels)) != len(labels):
        raise ValueError(f"--baselines {text}: a label count is repeated — {fix}")
    return sorted(labels)


def train_baselines(args, p, data, test, cfg, labels: list[int], group, record: dict) -> None:
    """Supervised DeepONets on the first N labelled instances, the PI-DION recipe and seed
    (full batch: a batch larger than N is N, as in the compare study). Data-parallel under
    torchrun, one baseline after the other (each rank its share of the N instances); rank 0
    alone scores, writes and prints. ``record["baselines"]``: each N's Adam losses."""
    from iclr25.core.pi_dion import problem, saved, train

    rows, record["baselines"] = [], {}
    for n in labels:
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        losses: list[float] = []
        model, loss = train.train_supervised(data.d[:n], data.f[:n], data.grid, p.c, cfg, args.seed,
                                             on_loss=losses.append, group=group)  # fmt: skip
        wall_s, cpu_s = time.perf_counter() - wall0, cpu_seconds() - cpu0
        record["baselines"][str(n)] = {"losses": losses, "final_loss": loss}
        if not group.is_main:
            continue
        _, f_hat = train.predict(model, test.d, test.grid)
        path = saved.baseline_path(args.out.parent, n)
        meta = {
            "train": cfg.__dict__,
            "labels": n,
            "instances": n,
            "seed": args.seed,
            "data_seed": args.data_seed,
            "noise": p.noise,
            "nu": p.nu,
            "ell": p.ell,
        }
        saved.save(path, model, data.x, p.pde, p.c, meta)
        err = float(problem.rel_l2(f_hat, test.f).mean())
        rows.append(
            {
                "labels": n,
                "file": path.name,
                "final_loss": loss,
                "rel_l2_f": err,
                "wall_s": wall_s,
                "cpu_s": cpu_s,
                "sha256": saved.sha256_of(path),
            }
        )
        print(f"supervised N = {n}: held-out rel L2 f {err:.4f} ({cpu_s:.0f} CPU-s)", flush=True)
    if group.is_main:
        log = {
            "script": "scripts/train_pi_dion.py",
            "argv": sys.argv[1:],
            "train": cfg.__dict__,
            "held_out": {"seed": HELD_OUT_SEED, "instances": HELD_OUT_N},
            "baselines": rows,
            **_provenance(args, group),
        }
        (args.out.parent / "baselines_log.json").write_text(json.dumps(log, indent=2) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, choices=(1, 2), default=1)
    parser.add_argument("--pde", choices=("reaction-diffusion", "darcy"),
                        default="reaction-diffusion")  # fmt: skip
    parser.add_argument("--steps", type=int,
                        help=f"Adam steps (3000; 2-D {STEPS_2D}; darcy {STEPS_DARCY})")  # fmt: skip
    parser.add_argument("--lbfgs-steps", type=int,
                        help=f"then L-BFGS iterations (500; 2-D {LBFGS_2D}; darcy "
                        f"{LBFGS_DARCY})")  # fmt: skip
    parser.add_argument(
        "--n-train", type=int, help=f"unlabelled instances (1000; 2-D {N_TRAIN_2D})"
    )
    parser.add_argument("--data-seed", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="pi_dion_rd1d.safetensors (2-D: …rd2d…) in "
                        "iclr25/data/pi_dion/")  # fmt: skip
    parser.add_argument("--loss-log", type=Path, help="every Adam step's batch loss as JSON "
                        "(and each baseline's)")  # fmt: skip
    parser.add_argument("--baselines", nargs="?", const=DEFAULT_BASELINES, default=None,
                        metavar="N,N,...", help="also train the supervised DeepONets on the "
                        f"first N labelled instances (default {DEFAULT_BASELINES})")  # fmt: skip
    parser.add_argument("--baselines-only", action="store_true",
                        help="train only the baselines; keep the PI-DION file")  # fmt: skip
    args = parser.parse_args()
    two_d = args.dim == 2
    if args.pde == "darcy":
        return main_darcy(args)
    for name, one, two in (("steps", 3000, STEPS_2D), ("lbfgs_steps", 500, LBFGS_2D),
                           ("n_train", 1000, N_TRAIN_2D)):  # fmt: skip
        if getattr(args, name) is None:
            setattr(args, name, two if two_d else one)
    if args.out is None:
        args.out = DATA / ("pi_dion_rd2d.safetensors" if two_d else "pi_dion_rd1d.safetensors")
    sys.path.insert(0, str(ROOT))
    from iclr25.distributed_torch import context_from_env, process_group

    if two_d and (args.baselines is not None or args.baselines_only):
        print("Error: --baselines is 1-D only — drop it with --dim 2", file=sys.stderr)
        return 2
    try:
        labels = parse_baselines(args, context_from_env("cpu").world_size)
    except ValueError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    with process_group("cpu") as group:
        return run_2d(args, group) if two_d else run(args, group, labels)


def main_darcy(args) -> int:
    """``--pde darcy``: checks (one line on stderr, exit 2), defaults, then :func:`run_darcy`."""
    sys.path.insert(0, str(ROOT))
    from iclr25.distributed_torch import context_from_env

    bad = ("--dim 2" if args.dim == 2 else
           "--baselines" if args.baselines is not None or args.baselines_only else
           "torchrun" if context_from_env("cpu").world_size > 1 else None)  # fmt: skip
    if bad is not None:
        print(f"Error: --pde darcy is not built with {bad} — drop it (darcy is 1-D, one "
              "process, no bundled baselines)", file=sys.stderr)  # fmt: skip
        return 2
    for name, default in (("steps", STEPS_DARCY), ("lbfgs_steps", LBFGS_DARCY),
                          ("n_train", 1000)):  # fmt: skip
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.out is None:
        args.out = DATA / "pi_dion_darcy1d.safetensors"
    return run_darcy(args)


def run_darcy(args) -> int:
    """Train the darcy PI-DION label-free (only the noisy sensor data), score it on the
    darcy studies' held-out draw, write model and ``train_log_darcy.json``."""
    import numpy as np
    import torch

    from iclr25.core.pi_dion import darcy, darcy_compare, darcy_model, saved, train
    from iclr25.core.pi_dion.problem import Problem, rel_l2
    from iclr25.distributed_torch import context_from_env

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    group = context_from_env("cpu")  # one process (main_darcy refused torchrun)
    p = Problem(pde="darcy")
    data = darcy.generate(p, args.n_train, np.random.default_rng(args.data_seed))
    cfg = train.TrainConfig(steps=args.steps, batch=BATCH_DARCY, lbfgs_steps=args.lbfgs_steps)
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    losses: list[float] = []
    model, loss = darcy_model.train_darcy(data.d, data.x, cfg, args.seed, on_loss=losses.append)
    wall_s, cpu_s = time.perf_counter() - wall0, cpu_seconds() - cpu0
    test_seed = darcy_compare.TEST_SEED
    test = darcy.generate(p, HELD_OUT_N_DARCY, np.random.default_rng(test_seed))
    u_hat, g_hat = darcy_model.predict(model, test.d, test.grid)
    near = darcy.flux_zero_window(test.u, test.grid)
    a_hat = np.exp(g_hat)
    held_out = {
        "seed": test_seed,
        "instances": HELD_OUT_N_DARCY,
        "rel_l2_a": float(rel_l2(a_hat, test.a).mean()),
        "rel_l2_g": float(rel_l2(g_hat, test.g).mean()),
        "rel_l2_u": float(rel_l2(u_hat, test.u).mean()),
        "rel_l2_a_near_flux_zero": darcy_compare._rel_masked(a_hat, test.a, near),
        "rel_l2_a_away": darcy_compare._rel_masked(a_hat, test.a, ~near),
    }
    _save_model(args, cfg, p, model, data.x)
    log = {
        "script": "scripts/train_pi_dion.py",
        "argv": sys.argv[1:],
        "pde": "darcy",
        "train": cfg.__dict__,
        "w_res": darcy_model.W_RES,  # darcy's residual weight (cfg.w_res is the linear one's)
        "instances": args.n_train,
        "final_loss": loss,
        "loss_curve": train.loss_curve(losses, loss),
        "held_out": held_out,
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "torch": torch.__version__,
        "sha256": saved.sha256_of(args.out),
        **_provenance(args, group),
    }
    (args.out.parent / "train_log_darcy.json").write_text(json.dumps(log, indent=2) + "\n")
    _write_loss_log(args, group, {"losses": losses, "final_loss": loss})
    print(json.dumps({k: log[k] for k in ("final_loss", "held_out", "cpu_s", "sha256")}, indent=2))
    return 0


def run(args, group, labels: list[int]) -> int:
    import numpy as np
    import torch

    from iclr25.core.pi_dion import problem, saved, train

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    p = problem.Problem()
    ops = problem.operators(p)
    data = problem.generate(p, args.n_train, np.random.default_rng(args.data_seed), ops)
    measured = data.d  # (N, 64) the only thing training sees
    cfg = train.TrainConfig(steps=args.steps, batch=args.n_train, lbfgs_steps=args.lbfgs_steps)
    test = problem.generate(p, HELD_OUT_N, np.random.default_rng(HELD_OUT_SEED), ops)
    record: dict = {}
    if labels:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        train_baselines(args, p, data, test, cfg, labels, group, record)
    if args.baselines_only:
        _write_loss_log(args, group, record)
        return 0
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    losses: list[float] = []
    model, loss = train.train_pi_dion(
        measured, data.x, p.c, cfg, args.seed, group=group, on_loss=losses.append
    )
    wall_s, cpu_s = time.perf_counter() - wall0, cpu_seconds() - cpu0
    if not group.is_main:
        return 0  # rank 0 evaluates, prints and writes

    u_hat, f_hat = train.predict(model, test.d, test.grid)
    err_f = float(problem.rel_l2(f_hat, test.f).mean())
    err_u = float(problem.rel_l2(u_hat, test.u).mean())
    meets = err_f <= TARGET_F and err_u <= TARGET_U
    _save_model(args, cfg, p, model, data.x)
    log = {
        "script": "scripts/train_pi_dion.py",
        "argv": sys.argv[1:],
        "train": cfg.__dict__,
        "final_loss": loss,
        "held_out": {
            "seed": HELD_OUT_SEED,
            "instances": HELD_OUT_N,
            "rel_l2_f": err_f,
            "rel_l2_u": err_u,
        },  # fmt: skip
        "targets": {"rel_l2_f": TARGET_F, "rel_l2_u": TARGET_U},
        "meets_targets": meets,
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "torch": torch.__version__,
        "sha256": saved.sha256_of(args.out),
        **_provenance(args, group),
    }
    (args.out.parent / "train_log.json").write_text(json.dumps(log, indent=2) + "\n")
    _write_loss_log(args, group, {"losses": losses, "final_loss": loss, **record})
    print(json.dumps(log, indent=2))
    return 0 if meets else 1


def _provenance(args, group) -> dict:
    """The log's ``provenance`` block, and ``distributed`` (world size, backend) under
    torchrun (1-D and 2-D, model and baselines alike)."""
    from iclr25.provenance import provenance

    block = {"provenance": provenance(["scripts/train_pi_dion.py", *sys.argv[1:]], [args.seed])}
    if group.active:
        block["distributed"] = group.as_dict()
    return block


def _write_loss_log(args, group, record: dict) -> None:
    """``--loss-log``: the Adam losses of what was trained (rank 0 writes)."""
    if args.loss_log is not None and group.is_main:
        args.loss_log.write_text(json.dumps(record) + "\n")


def _save_model(args, cfg, p, model, sensors) -> None:
    """The label-free model and its metadata at ``args.out`` (1-D and 2-D alike)."""
    from iclr25.core.pi_dion import saved

    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"train": cfg.__dict__, "labels": 0, "instances": args.n_train, "seed": args.seed,
            "data_seed": args.data_seed, "noise": p.noise, "nu": p.nu, "ell": p.ell}  # fmt: skip
    saved.save(args.out, model, sensors, p.pde, p.c, meta)


def run_2d(args, group) -> int:
    """The 2-D model: train label-free (data-parallel under torchrun), then rank 0 scores it
    on the held-out draw and writes model and log."""
    import numpy as np
    import torch

    from iclr25.core.pi_dion import bayes2d, compare2d, saved, train, train2d
    from iclr25.core.pi_dion.problem import Problem

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    p, layout = Problem(dim=2), bayes2d.Layout2D()
    ops = compare2d.operators(p, layout)
    data = compare2d.generate(p, layout, ops, args.n_train, np.random.default_rng(args.data_seed))
    cfg = train.for_dim(2, steps=args.steps, batch=args.n_train, lbfgs_steps=args.lbfgs_steps)
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    losses: list[float] = []
    model, loss = train2d.train_pi_dion_2d(data.d, data.x, p.c, cfg, args.seed,
                                           on_loss=losses.append, group=group)  # fmt: skip
    wall_s, cpu_s = time.perf_counter() - wall0, cpu_seconds() - cpu0
    if not group.is_main:
        return 0  # rank 0 evaluates, prints and writes
    test = compare2d.generate(p, layout, ops, HELD_OUT_N_2D, np.random.default_rng(HELD_OUT_SEED))
    u_hat, f_hat = train2d.predict_2d(model, test.d, test.x, test.pts)
    err_f = float(compare2d.rel_l2(f_hat, test.f).mean())
    err_u = float(compare2d.rel_l2(u_hat, test.u).mean())
    _save_model(args, cfg, p, model, data.x)
    log = {
        "script": "scripts/train_pi_dion.py",
        "argv": sys.argv[1:],
        "dim": 2,
        "train": cfg.__dict__,
        "instances": args.n_train,
        "final_loss": loss,
        "loss_curve": train.loss_curve(losses, loss),
        "held_out": {
            "seed": HELD_OUT_SEED,
            "instances": HELD_OUT_N_2D,
            "rel_l2_f": err_f,
            "rel_l2_u": err_u,
        },  # fmt: skip
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "torch": torch.__version__,
        "sha256": saved.sha256_of(args.out),
        **_provenance(args, group),
    }
    (args.out.parent / "train_log_2d.json").write_text(json.dumps(log, indent=2) + "\n")
    _write_loss_log(args, group, {"losses": losses, "final_loss": loss})
    print(json.dumps({k: log[k] for k in ("final_loss", "held_out", "cpu_s", "sha256")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

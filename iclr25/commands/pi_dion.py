"""`iclr25 pi-dion`: label-free inverse operators for PDE inverse problems (Cho & Son 2025).

Subcommands: ``generate`` (training and held-out data from the Matérn prior, solved on a
4× finer FD grid), ``train`` (label-free, or ``--labels N`` supervised; ``--save``),
``solve`` (a user's CSV/NPZ measurements → f and u with a trained model, Tikhonov or the
Bayes mean) and ``compare`` (PI-DION without labels against supervised DeepONets
with N labels, Tikhonov with the discrepancy principle and the exact Bayes posterior
mean, over seeds, with a pass condition fixed in code). The method lives in
:mod:`iclr25.core.pi_dion`. ``--dim 2`` for every subcommand. ``--pde darcy`` (1-D,
−(a u')' = 1, unknown a = exp(g)) for ``generate``, ``train``, ``solve`` (pi-dion or
Tikhonov–Gauss–Newton; no Bayes: nonlinear; ``--model bundled`` is the darcy model of
``scripts/train_pi_dion.py --pde darcy``), ``compare`` (no Bayes row) and ``noise`` (the
error of a; no predicted slope); ``--dim 2``, ``--k``/``--kappa`` and compare's
``--model``/``--baselines`` are refused for darcy (see docs/pi-dion.md, "darcy").
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from iclr25.core.pi_dion.recipe import COLLOCATION_2D as COLLOCATION_2D
from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command

NAME = "pi-dion"
HELP = "Label-free inverse operators (PI-DION) for PDE inverse problems, against exact references."
app = typer.Typer(no_args_is_help=True, help=HELP)

PdeOpt = Annotated[
    str,
    typer.Option(
        "--pde",
        help="reaction-diffusion (−u''+ku=f), helmholtz (−u''−κ²u=f) or darcy (−(au')'=1, "
        "unknown a = exp(g), 1-D).",
    ),
]
KOpt = Annotated[
    float | None,
    typer.Option("--k", help="Reaction coefficient k ≥ 0 (reaction-diffusion; default 1)."),
]
KappaOpt = Annotated[
    float | None, typer.Option("--kappa", help="Wavenumber κ (helmholtz; default 6).")
]
NuOpt = Annotated[float, typer.Option("--nu", help="Matérn smoothness ν of the prior of f.")]
EllOpt = Annotated[float, typer.Option("--ell", help="Matérn length scale ℓ of the prior of f.")]
NoiseOpt = Annotated[
    float, typer.Option("--noise", help="Noise standard deviation relative to RMS(u at sensors).")
]
SensorsOpt = Annotated[
    str,
    typer.Option(
        "--sensors",
        help="full (64 uniform interior points), subdomain:A,B (64 points in (A,B)) or a CSV "
        "file of sensor positions (header x, one row per sensor).",
    ),
]
DimOpt = Annotated[int, typer.Option("--dim", help="Space dimension: 1 or 2.")]


def coefficients(pde: str, k: float | None, kappa: float | None) -> tuple[float, float]:
    """(k, κ) with their defaults (1, 6); --k or --kappa with darcy is an error (darcy has
    neither: an option that would be silently ignored is refused)."""
    from iclr25.errors import UsageError

    if pde == "darcy" and (k is not None or kappa is not None):
        given = "--k" if k is not None else "--kappa"
        raise UsageError(f"{given} does not apply to --pde darcy (−(a u')' = 1 has no k or κ)",
                         f"drop {given}")  # fmt: skip
    return (1.0 if k is None else k), (6.0 if kappa is None else kappa)


def _problem(pde: str, dim: int, k: float | None, kappa: float | None, nu: float, ell: float,
             noise: float, sensors: str):  # fmt: skip
    """The checked problem of generate, train, compare and noise (each handles --dim 2
    itself; solve builds its own)."""
    from iclr25.core.pi_dion.problem import Problem
    from iclr25.errors import UsageError

    k, kappa = coefficients(pde, k, kappa)
    if pde == "darcy" and dim == 2:
        raise UsageError("--pde darcy --dim 2 is not built (darcy is 1-D)", "use --dim 1")
    if dim not in (1, 2):
        raise UsageError(f"--dim {dim} is not a dimension here", "use --dim 1 or --dim 2")
    if dim == 2:
        return Problem(pde=pde, k=k, kappa=kappa, nu=nu, ell=ell, noise=noise, sensors=sensors,
                       dim=2)  # fmt: skip
    points = None
    if sensors != "full" and not sensors.startswith("subdomain:"):
        from iclr25.core.pi_dion.measurements import read_sensors

        points = tuple(float(v) for v in read_sensors(Path(sensors), dim))
        sensors = f"file:{Path(sensors).name}"
    return Problem(pde=pde, k=k, kappa=kappa, nu=nu, ell=ell, noise=noise, sensors=sensors,
                   n_sensors=len(points) if points else 64, points=points)  # fmt: skip


def _warn_partial(run: Run, p) -> None:
    from iclr25.core.pi_dion.measurements import identifiable_fraction
    from iclr25.core.pi_dion.problem import sensor_points

    if p.dim == 2:
        return  # --dim 2 takes full sensors only
    share = identifiable_fraction(sensor_points(p))
    if share < 1:
        run.warn(
            f"sensors {p.sensors} cover {share:.3f} of Ω only: f outside the sensors' hull is "
            "not determined by the data (identifiable_fraction < 1)"
        )


@command(app, "generate", epilog="JSON results: files, n_train, n_test, sensors, noise_std.")
def generate_command(
    pde: PdeOpt = "reaction-diffusion",
    dim: DimOpt = 1,
    k: KOpt = None,
    kappa: KappaOpt = None,
    nu: NuOpt = 2.5,
    ell: EllOpt = 0.2,
    noise: NoiseOpt = 0.01,
    sensors: SensorsOpt = "full",
    n_train: Annotated[
        int, typer.Option("--n-train", help="Unlabelled training instances.")
    ] = 1000,
    n_test: Annotated[int, typer.Option("--n-test", help="Held-out instances (with f).")] = 500,
    *,
    run: Run,
) -> None:
    """Write train.npz (x: sensors, u: noisy data, no f) and test.npz (adds grid, f, u_true)
    into the --out directory."""
    import numpy as np

    from iclr25.core.pi_dion import problem
    from iclr25.runner import require

    p = _problem(pde, dim, k, kappa, nu, ell, noise, sensors)
    require(run.wants_artifacts, "generate needs --out DIR", "add --out DIR (a new folder)")
    require(n_train >= 1 and n_test >= 1, "--n-train and --n-test must be ≥ 1", "e.g. 1000 and 500")
    if p.dim == 2:
        _generate_2d(run, p, n_train, n_test)
        return
    _warn_partial(run, p)
    if p.pde == "darcy":
        _generate_darcy(run, p, n_train, n_test)
        return
    ops = problem.operators(p)
    rng = np.random.default_rng(run.seed)
    with run.timer("generate_s"):
        train_set = problem.generate(p, n_train, rng, ops)
        test_set = problem.generate(p, n_test, rng, ops)
    np.savez(run.artifact_path("train.npz"), x=train_set.x[:, None], u=train_set.d)
    np.savez(run.artifact_path("test.npz"), x=test_set.x[:, None], u=test_set.d,
             grid=test_set.grid, f=test_set.f, u_true=test_set.u)  # fmt: skip
    results = {"files": ["train.npz", "test.npz"], "n_train": n_train, "n_test": n_test,
               "sensors": len(train_set.x), "noise_std": ops.noise_std}  # fmt: skip
    run.finish(results, {"pde": pde, "c": p.c, "nu": nu, "ell": ell, "noise": noise})


def _generate_2d(run: Run, p, n_train: int, n_test: int) -> None:
    """--dim 2: 16×16 sensors, f and u on the 33×33 grid (f, u_true as N×33×33)."""
    import numpy as np

    from iclr25.core.pi_dion import bayes2d

    layout = bayes2d.Layout2D()
    ops = bayes2d.operators(layout, p.c, p.nu, p.ell, p.noise)
    rng = np.random.default_rng(run.seed)
    side = layout.cells + 1
    with run.timer("generate_s"):
        train_d, _, _ = bayes2d.generate(layout, p.c, p.nu, p.ell, ops, n_train, rng)
        test_d, f, u = bayes2d.generate(layout, p.c, p.nu, p.ell, ops, n_test, rng)
    x = layout.sensors()  # (256, 2)
    np.savez(run.artifact_path("train.npz"), x=x, u=train_d)
    np.savez(run.artifact_path("test.npz"), x=x, u=test_d, grid=np.linspace(0, 1, side),
             f=f.reshape(-1, side, side), u_true=u.reshape(-1, side, side))  # fmt: skip
    results = {"files": ["train.npz", "test.npz"], "n_train": n_train, "n_test": n_test,
               "sensors": len(x), "noise_std": ops.noise_std}  # fmt: skip
    run.finish(results, {"pde": p.pde, "c": p.c, "nu": p.nu, "ell": p.ell, "noise": p.noise,
                         "dim": 2})  # fmt: skip


def _generate_darcy(run: Run, p, n_train: int, n_test: int) -> None:
    """darcy: train.npz as for the linear PDEs; test.npz holds g, a = exp(g) and u_true on
    the 129-point grid (no f)."""
    import numpy as np

    from iclr25.core.pi_dion import darcy

    rng = np.random.default_rng(run.seed)
    with run.timer("generate_s"):
        train_set = darcy.generate(p, n_train, rng)
        test_set = darcy.generate(p, n_test, rng)
    np.savez(run.artifact_path("train.npz"), x=train_set.x[:, None], u=train_set.d)
    np.savez(run.artifact_path("test.npz"), x=test_set.x[:, None], u=test_set.d,
             grid=test_set.grid, g=test_set.g, a=test_set.a, u_true=test_set.u)  # fmt: skip
    results = {"files": ["train.npz", "test.npz"], "n_train": n_train, "n_test": n_test,
               "sensors": len(train_set.x), "noise_std": train_set.noise_std}  # fmt: skip
    run.finish(results, {"pde": p.pde, "nu": p.nu, "ell": p.ell, "noise": p.noise})


StepsOpt = Annotated[int, typer.Option("--steps", help="Optimiser steps.")]
WidthOpt = Annotated[int, typer.Option("--width", help="Hidden width of trunk and branches.")]
BasisOpt = Annotated[
    int | None, typer.Option("--basis", help="p, the number of trunk functions (16; 2-D 64).")
]
TRAIN_KEYS = "mode, labels, instances, sensors, final_loss, steps, held_out, saved, sha256"


@command(app, "train", epilog=f"JSON results: {TRAIN_KEYS}.")
def train_command(
    data: Annotated[
        Path | None, typer.Option("--data", help="A folder from `generate` (reads train.npz).")
    ] = None,
    measurements: Annotated[
        Path | None,
        typer.Option(
            "--measurements",
            help="Your own unlabelled data: CSV (x,u[,instance]) or NPZ (x m×1, u N×m).",
        ),
    ] = None,  # fmt: skip
    pde: PdeOpt = "reaction-diffusion",
    dim: DimOpt = 1,
    k: KOpt = None,
    kappa: KappaOpt = None,
    steps: StepsOpt = 4000,
    width: WidthOpt = 64,
    basis: BasisOpt = None,
    batch: Annotated[int, typer.Option("--batch", help="Instances per step.")] = 1000,
    lr: Annotated[
        float | None, typer.Option("--lr", help="Adam learning rate (1e-3; 2-D 3e-3).")
    ] = None,
    labels: Annotated[
        int,
        typer.Option(
            "--labels",
            help="0: label-free; N: supervised on the first N "
            "labelled instances of --measurements (an NPZ with grid and f).",
        ),
    ] = 0,  # fmt: skip
    save: Annotated[Path | None, typer.Option("--save", help="Write the model here.")] = None,
    *,
    run: Run,
) -> None:
    """Train PI-DION without labels on measurements of u alone (f is never read), or a
    supervised DeepONet with --labels N; --save FILE keeps the model for `solve`."""
    from iclr25.commands.pi_dion_solve import run_train
    from iclr25.core.pi_dion import train

    p = _problem(pde, dim, k, kappa, 2.5, 0.2, 0.01, "full")
    cfg = train.for_dim(dim, steps=steps, width=width, basis=basis, batch=batch, lr=lr)
    train.check(cfg)
    run_train(run, p, cfg, data, measurements, labels, save)


SOLVE_KEYS = (
    "method, grid, f, u (a row per instance), instances, sensors, identifiable_fraction, "
    "residual_rel, misfit_rel (per instance), noise_std, model; tikhonov also alpha_rule "
    "(discrepancy or gcv), log10_alpha, noise_std_estimate (gcv, per instance); --pde darcy: "
    "a, g instead of f, and discrepancy_reached (tikhonov)"
)


@command(app, "solve", epilog=f"JSON results: {SOLVE_KEYS}.")
def solve_command(
    measurements: Annotated[
        Path, typer.Option("--measurements", help="CSV (x[,y],u[,instance]) or NPZ (x m×d, u N×m).")
    ],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="bundled (reaction-diffusion, k = 1, 64 sensors; with --pde darcy the darcy "
            "model) or a file from `train --save`.",
        ),
    ] = "bundled",  # fmt: skip
    method: Annotated[
        str, typer.Option("--method", help="pi-dion, tikhonov or bayes (Matérn prior).")
    ] = "pi-dion",
    noise_std: Annotated[
        float | None,
        typer.Option(
            "--noise-std",
            help="Noise σ. tikhonov: α by the discrepancy principle (absent: by GCV, σ "
            "estimated); bayes: absent means --noise × RMS(u) under the prior.",
        ),
    ] = None,  # fmt: skip
    grid: Annotated[int, typer.Option("--grid", help="Output points on [0, 1].")] = 129,
    pde: PdeOpt = "reaction-diffusion",
    dim: DimOpt = 1,
    k: KOpt = None,
    kappa: KappaOpt = None,
    nu: NuOpt = 2.5,
    ell: EllOpt = 0.2,
    noise: NoiseOpt = 0.01,
    *,
    run: Run,
) -> None:
    """f and u on a grid for every instance of your measurements, with the share of Ω the
    sensors determine (identifiable_fraction) and the PDE residual of the answer."""
    from iclr25.commands.pi_dion_solve import run_solve
    from iclr25.core.pi_dion.problem import Problem
    from iclr25.core.pi_dion.solve import SolveConfig

    k, kappa = coefficients(pde, k, kappa)
    p = Problem(pde=pde, k=k, kappa=kappa, nu=nu, ell=ell, noise=noise)
    run_solve(run, p, dim, SolveConfig(method, grid, noise_std), measurements, model)


COMPARE_KEYS = (
    "methods (pi_dion, supervised_N<n>, tikhonov: α by the discrepancy principle with the "
    "true noise level, tikhonov_gcv (1-D): α by GCV without it, bayes), seeds, rel_l2_f, "
    "rel_l2_u (per method: mean, ci_low, ci_high), "
    "rel_l2_f_inside / rel_l2_f_outside (subdomain sensors), nmse_f, bayes_nmse_f, "
    "inference_ms_per_instance, final_train_loss (per trained method, per seed), "
    "labels_to_match, labels_to_match_where, pass_condition, "
    "effect_reproduced, verdict, identifiable_fraction, problem; --pde darcy: rel_l2_a, "
    "rel_l2_g, rel_l2_u, rel_l2_a_near_flux_zero, rel_l2_a_away instead of the f keys, no "
    "Bayes row"
)


@command(app, "compare", epilog=f"JSON results: {COMPARE_KEYS}.")
def compare_command(
    pde: PdeOpt = "reaction-diffusion",
    dim: DimOpt = 1,
    k: KOpt = None,
    kappa: KappaOpt = None,
    nu: NuOpt = 2.5,
    ell: EllOpt = 0.2,
    noise: NoiseOpt = 0.01,
    sensors: SensorsOpt = "full",
    n_train: Annotated[int, typer.Option("--n-train", help="Unlabelled instances.")] = 1000,
    n_test: Annotated[int, typer.Option("--n-test", help="Held-out instances.")] = 500,
    seeds: Annotated[int, typer.Option("--seeds", help="Training seeds (≥ 3).")] = 5,
    labels: Annotated[
        str, typer.Option("--labels", help="Comma-separated label counts N of the supervised runs.")
    ] = "10,30,100,300,1000",
    steps: Annotated[int, typer.Option("--steps", help="Optimiser steps of every network.")] = 4000,
    batch: Annotated[int, typer.Option("--batch", help="Instances per Adam step.")] = 100,
    lbfgs_steps: Annotated[
        int, typer.Option("--lbfgs-steps", help="Then full-batch L-BFGS iterations (every net).")
    ] = 0,
    width: Annotated[int, typer.Option("--width", help="Hidden width of trunk and branches.")] = 64,
    basis: BasisOpt = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help="200 train / 100 test (darcy: 40), 3 seeds, N = 10,100, 300 steps."
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Score this trained PI-DION (bundled or a `train --save` "
            "file) instead of training one per seed; the supervised models get its "
            "training settings (equal budget).",
        ),
    ] = None,  # fmt: skip
    baselines: Annotated[
        str | None,
        typer.Option(
            "--baselines",
            help="Score these trained supervised DeepONets (bundled or the folder "
            "`scripts/train_pi_dion.py --baselines` wrote) instead of training one per seed; "
            "needs --model (their recipe must be its recipe).",
        ),
    ] = None,  # fmt: skip
    test_per_seed: Annotated[
        bool,
        typer.Option(
            "--test-per-seed",
            help="Each seed scores on its own held-out draw (with --model the PI-DION "
            "interval then covers test draws).",
        ),
    ] = False,  # fmt: skip
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """PI-DION (no labels) vs supervised DeepONets, Tikhonov and the Bayes floor: errors with
    95% t-intervals over seeds, labels_to_match and the verdict (pass: ≥ 100 labels)."""

    from dataclasses import replace

    from iclr25.core.pi_dion import recipe

    # every option check that needs no file runs before torch is imported (~5 CPU-s)
    p = _problem(pde, dim, k, kappa, nu, ell, noise, sensors)
    label_grid = _label_grid(labels, n_train)
    train_cfg = recipe.for_dim(dim, steps=steps, width=width, basis=basis, batch=batch,
                               lbfgs_steps=lbfgs_steps)  # fmt: skip
    if dim == 2 and baselines is not None:
        from iclr25.errors import UsageError

        raise UsageError("--baselines is 1-D only (no 2-D baselines are bundled)",
                         "drop it: compare --dim 2 trains them per seed")  # fmt: skip
    if not quick:  # --quick replaces seeds, sizes and recipe
        _check_sizes(seeds, n_test, train_cfg)
    if p.pde == "darcy":
        _check_darcy_compare(model, baselines, test_per_seed)
        _compare_darcy(run, p, (n_train, n_test, seeds, label_grid, train_cfg), quick,
                       (workers, scheduler, no_cache))  # fmt: skip
        return

    from iclr25 import parallel_options
    from iclr25.commands.pi_dion_render import render_compare
    from iclr25.core.pi_dion import compare

    config = compare.CompareConfig(p, n_train, n_test, seeds, label_grid, train_cfg)
    if test_per_seed:
        config = replace(config, test_per_seed=True)
    if quick:
        config = compare.quick(config)
    if model is not None or config.model is not None:
        config = _with_model(config, model or config.model, run)
    if baselines is not None or config.baselines is not None:
        config = _with_baselines(config, baselines or config.baselines)
    _check_compare(config)
    _warn_partial(run, p)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    n_tasks = config.seeds * len(compare.methods(config))
    _run_compare(run, config, compare.run_compare, n_tasks, execution, render_compare)


def _run_compare(run: Run, config, run_compare, n_tasks: int, execution, render) -> None:
    """The seed × method tasks with progress, the scheduler's report, a warning when the
    paper's effect did not appear, and the result (linear problems and darcy alike)."""
    from iclr25 import parallel_options

    with run.progress("seed × method", total=n_tasks) as advance, run.timer("compare_s"):
        results, outcome = run_compare(config, run.seed, execution, advance)
    parallel_options.report(run, outcome)
    if not results["effect_reproduced"]:
        run.warn("the paper's effect did not appear here: " + results["verdict"])
    run.finish(results, config, render)


def _check_darcy_compare(model, baselines, test_per_seed: bool) -> None:
    from iclr25.errors import UsageError

    for flag, given in (("--model", model), ("--baselines", baselines),
                        ("--test-per-seed", test_per_seed or None)):  # fmt: skip
        if given is not None:
            raise UsageError(
                f"{flag} is not built for compare --pde darcy",
                f"drop {flag}: compare --pde darcy trains every network per seed",
            )


def _compare_darcy(run: Run, p, sizes, quick: bool, parallel) -> None:
    """darcy: PI-DION vs supervised DeepONets (target g) and Tikhonov–Gauss–Newton; no
    Bayes row (nonlinear: no closed-form posterior mean)."""
    from iclr25 import parallel_options
    from iclr25.commands.pi_dion_render import render_compare_darcy
    from iclr25.core.pi_dion import darcy_compare

    n_train, n_test, seeds, label_grid, train_cfg = sizes
    config = darcy_compare.DarcyCompareConfig(p, n_train, n_test, seeds, label_grid, train_cfg)
    if quick:
        config = darcy_compare.quick(config)
    _check_sizes(config.seeds, config.n_test, config.train)
    _warn_partial(run, p)
    execution = parallel_options.execution(*parallel)
    _run_compare(run, config, darcy_compare.run_compare, darcy_compare.n_tasks(config),
                 execution, render_compare_darcy)  # fmt: skip


NOISE_KEYS = (
    "noise_levels, methods, rel_l2_f, root_nmse_f (per method, per level), fitted_slope "
    "(per method: slope, ci_low, ci_high), predicted_slope, rate_reproduced, pass_condition, "
    "verdict, problem; --pde darcy: rel_l2_a, root_nmse_a, median_rel_l2_a, breakdowns "
    "instead of the f keys, fitted_slope_median, predicted_slope and rate_reproduced null "
    "(predicted_slope_reason), slope_pi_dion_minus_tikhonov(_median), final_train_loss"
)


@command(app, "noise", epilog=f"JSON results: {NOISE_KEYS}.")
def noise_command(
    pde: PdeOpt = "reaction-diffusion",
    dim: DimOpt = 1,
    k: KOpt = None,
    kappa: KappaOpt = None,
    nu: NuOpt = 2.5,
    ell: EllOpt = 0.2,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            help="Comma-separated: pi_dion, tikhonov, bayes (default all; darcy: pi_dion, "
            "tikhonov).",
        ),
    ] = None,
    n_train: Annotated[int, typer.Option("--n-train", help="Unlabelled instances.")] = 1000,
    n_test: Annotated[int, typer.Option("--n-test", help="Held-out instances.")] = 500,
    steps: StepsOpt = 4000,
    batch: Annotated[int, typer.Option("--batch", help="Instances per Adam step.")] = 100,
    lbfgs_steps: Annotated[
        int, typer.Option("--lbfgs-steps", help="Then full-batch L-BFGS iterations.")
    ] = 0,
    quick: Annotated[
        bool, typer.Option("--quick", help="200 train / 100 test (darcy: 40), 300 steps.")
    ] = False,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Error of f against six noise levels 0.001–0.05 (PI-DION retrained per level): fitted
    log–log slope per method with a bootstrap interval vs the predicted 2ν/(2ν+4+d)
    (--pde darcy: the error of a, no predicted slope)."""
    from dataclasses import replace

    from iclr25 import parallel_options
    from iclr25.core.pi_dion import noise, train

    p = _problem(pde, dim, k, kappa, nu, ell, 0.01, "full")
    if methods is None:
        methods = "pi_dion,tikhonov" if p.pde == "darcy" else "pi_dion,tikhonov,bayes"
    names = tuple(m.strip() for m in methods.split(",") if m.strip())
    recipe = train.for_dim(dim, steps=steps, batch=batch, lbfgs_steps=lbfgs_steps)
    train.check(recipe)
    if p.pde == "darcy":
        _noise_darcy(run, p, names, (n_train, n_test, recipe), quick,
                     parallel_options.execution(workers, scheduler, no_cache))  # fmt: skip
        return
    cfg = noise.NoiseConfig(p, noise.LEVELS, names, n_train, n_test, recipe)
    if quick:
        cfg = replace(noise.QUICK, problem=p, methods=names)
    noise.check(cfg)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    total = len(cfg.methods) * len(cfg.levels)
    with run.progress("method × level", total=total) as advance, run.timer("noise_s"):
        results, outcome = noise.run_noise(cfg, run.seed, execution, advance)
    parallel_options.report(run, outcome)
    run.finish(results, cfg)


def _noise_darcy(run: Run, p, names, sizes, quick: bool, execution) -> None:
    """darcy: the error of a against the six levels for PI-DION (retrained per level) and
    Tikhonov–Gauss–Newton; no predicted slope (nonlinear: see darcy_noise.py)."""
    from iclr25 import parallel_options
    from iclr25.core.pi_dion import darcy_noise

    n_train, n_test, recipe = sizes
    cfg = darcy_noise.DarcyNoiseConfig(p, darcy_noise.LEVELS, names, n_train, n_test, recipe)
    if quick:
        cfg = darcy_noise.quick(cfg)
    darcy_noise.check(cfg)
    total = len(cfg.methods) * len(cfg.levels)
    with run.progress("method × level", total=total) as advance, run.timer("noise_s"):
        results, outcome = darcy_noise.run_noise(cfg, run.seed, execution, advance)
    parallel_options.report(run, outcome)
    run.finish(results, cfg)


def _label_grid(text: str, n_train: int) -> tuple[int, ...]:
    from iclr25.errors import UsageError

    try:
        grid = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        raise UsageError(f"--labels {text!r} is not a list of integers", "e.g. 10,30,100") from None
    if not grid or grid[0] < 1 or grid[-1] > n_train:
        raise UsageError(f"--labels {text!r} must lie in 1..{n_train}", "e.g. 10,30,100")
    return grid


def _with_model(config, model: str, run: Run):
    """Compare a trained model: its layout must match, the supervised runs get its recipe."""
    from dataclasses import replace

    from iclr25.core.pi_dion import problem, saved, train

    p = config.problem
    path = saved.resolve(model, p.dim)
    loaded = saved.load(path)
    x = config.layout2d.sensors() if p.dim == 2 else problem.sensor_points(p)
    saved.check_compatible(loaded, x, p.pde, p.c, p.dim)
    recipe = train.TrainConfig(**loaded.meta["train"])
    run.warn(f"PI-DION is the trained model {path} (not retrained per seed); the supervised "
             f"models get its recipe: {recipe.steps} Adam steps, batch {recipe.batch}, "
             f"{recipe.lbfgs_steps} L-BFGS steps")  # fmt: skip
    # "bundled" stays a name (with its sha256): an absolute path would record where this
    # copy of the package happens to live; a user's file is recorded by its path
    name = "bundled" if model == "bundled" else str(path)
    return replace(config, train=recipe, model=name, model_sha256=saved.sha256_of(path))


def _with_baselines(config, baselines: str):
    """Score trained supervised DeepONets: one per label count, each for this problem and
    layout, each trained with the PI-DION model's recipe (equal budget)."""
    from dataclasses import replace

    from iclr25.core.pi_dion import compare, problem, saved
    from iclr25.errors import InputError, UsageError

    if config.model is None:
        raise UsageError("--baselines needs --model: the baselines are scored against a "
                         "trained PI-DION with their recipe", "add --model bundled")  # fmt: skip
    folder = compare.baselines_folder(baselines)
    p, shas = config.problem, []
    for n in config.labels:
        path = saved.baseline_path(folder, n)
        if not path.is_file():
            raise InputError(f"no supervised DeepONet for N = {n} in {folder} ({path.name})",
                             f"train them: scripts/train_pi_dion.py --baselines-only --out "
                             f"{folder}/pi_dion_rd1d.safetensors, or choose --labels")  # fmt: skip
        loaded = saved.load(path)
        saved.check_compatible(loaded, problem.sensor_points(p), p.pde, p.c, 1)
        if loaded.meta.get("labels") != n:
            raise InputError(f"{path} was trained on {loaded.meta.get('labels')} labels, not {n}",
                             "retrain it with scripts/train_pi_dion.py --baselines")  # fmt: skip
        if loaded.meta.get("train") != config.train.__dict__:
            raise InputError(f"{path} was trained with another recipe than the PI-DION model "
                             "(unequal budget)", "train both with one scripts/train_pi_dion.py "
                             "recipe")  # fmt: skip
        shas.append(saved.sha256_of(path))
    name = "bundled" if baselines == "bundled" else str(folder)  # as --model: no install path
    return replace(config, baselines=name, baselines_sha256=tuple(shas))


def _check_compare(config) -> None:
    _check_sizes(config.seeds, config.n_test, config.train)


def _check_sizes(seeds: int, n_test: int, train_cfg) -> None:
    from iclr25.core.pi_dion import recipe
    from iclr25.errors import UsageError

    if seeds < 3:
        raise UsageError(f"--seeds {seeds}: intervals need ≥ 3 seeds", "use --seeds 3")
    if n_test < 2 or train_cfg.steps < 1:
        raise UsageError("--n-test must be ≥ 2 and --steps ≥ 1", "e.g. --n-test 500 --steps 4000")
    recipe.check(train_cfg)


def _demo_headline(doc: dict) -> str:
    from iclr25.core.pi_dion.compare import headline

    return headline(doc["results"])


DEMO = (DemoStep("pi-dion compare", ("pi-dion", "compare", "--quick"), _demo_headline, 600.0),)

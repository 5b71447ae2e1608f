"""`iclr25 dro-bound`: Wasserstein-robust models and their certified risk bounds.

Thin commands over :mod:`iclr25.core.dro_bound` (Le & Malick, ICLR 2025; Azizian,
Iutzeler & Malick, NeurIPS 2023): ``risk`` (robust risk of a given model), ``fit`` (robust
and ERM models), ``certify`` (the radius ρ_n = c·√(log(1/δ)/n) and the bound's statement)
and ``coverage`` (the synthetic experiment that measures how often the bound holds).
"""

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands.dro_bound_options import (
    MODEL_PANEL,
    ConstOpt,
    DeltaOpt,
    KappaOpt,
    LossOpt,
    POpt,
    ProblemOptions,
    QOpt,
    parse_float,
    parse_ints,
    problem_options,
    specs,
)
from iclr25.demo import DemoStep
from iclr25.runner import Run, command

NAME = "dro-bound"
HELP = "Wasserstein-robust models and their certified risk bounds (risk, fit, certify, coverage)."

app = typer.Typer(no_args_is_help=True, help=HELP)


def _render_risk(console, results) -> None:
    from iclr25.output import render_mapping

    keys = (
        "robust_risk",
        "empirical_risk",
        "true_risk",
        "rho",
        "lambda",
        "method",
        "model_source",
        "diagnostics",
        "radius",
    )
    render_mapping(console, {k: results[k] for k in keys if k in results}, title="dro-bound risk")


def _render_fit(console, results) -> None:
    from iclr25.output import render_mapping, rows_table

    keys = (
        "robust_objective",
        "lambda",
        "rho",
        "empirical_risk",
        "true_risk",
        "erm_objective",
        "erm_robust_risk",
        "erm_true_risk",
        "solver",
        "converged",
        "saved_to",
    )
    render_mapping(console, {k: results[k] for k in keys if k in results}, title="dro-bound fit")
    coef = results.get("coefficients")
    if coef:
        erm = results.get("erm_coefficients") or [None] * len(coef)
        names = results["data"]["features"]
        rows = [
            {"feature": name, "robust": c, "erm": e}
            for name, c, e in zip(names, coef, erm, strict=True)
        ]
        rows.append(
            {
                "feature": "intercept",
                "robust": results["intercept"],
                "erm": results.get("erm_intercept"),
            }
        )
        shown = rows[:20] + rows[-1:] if len(rows) > 21 else rows
        title = "coefficients" + (f" (20 of {len(coef)} shown)" if len(rows) > 21 else "")
        console.print(rows_table(shown, ["feature", "robust", "erm"], title=title))


def _render_certify(console, results) -> None:
    from iclr25.output import render_mapping

    console.print(results["statement"], markup=False)
    keys = (
        "guarantee",
        "rho",
        "radius_constant",
        "robust_risk",
        "empirical_risk",
        "true_risk",
        "bound_holds",
        "n",
        "d",
        "delta",
    )
    render_mapping(
        console, {k: results[k] for k in keys if k in results}, title="dro-bound certify"
    )


RISK_KEYS = (
    "robust_risk, empirical_risk, rho, lambda, method, diagnostics, radius, "
    "model_source, model, loss, coefficients, intercept, cost, data, true_risk "
    "(synthetic data)"
)


@command(app, "risk", epilog=f"JSON results: {RISK_KEYS}.")
@problem_options(rho="0.1")
def risk(opts: ProblemOptions, *, run: Run) -> None:
    """Robust risk R_ρ(θ; P_n) of a model (--load, --coef, or ERM) on data, by its dual."""
    from iclr25.core.dro_bound.pipeline import run_risk

    parsed = specs(run, opts)
    with run.progress("dual evaluations") as advance, run.timer("risk_s"):
        results = run_risk(*parsed, on_progress=advance)
    _warn_convergence(run, results.get("diagnostics", {}))
    _warn_radius(run, results["radius"])
    run.finish(results, _config(parsed), _render_risk)


FIT_KEYS = (
    "robust_objective, lambda, rho, empirical_risk, model, loss, coefficients, "
    "intercept (linear models), erm_objective, erm_robust_risk, erm_coefficients, "
    "erm_intercept, solver, converged, radius, cost, entropic, data, saved_to, "
    "true_risk and erm_true_risk (synthetic data)"
)


@command(app, "fit", epilog=f"JSON results: {FIT_KEYS}.")
@problem_options(omit=("load", "coef", "intercept"))
def fit(
    opts: ProblemOptions,
    save: Annotated[
        Path | None,
        typer.Option(
            "--save",
            help="Write the fitted model to this JSON file (never overwritten).",
            rich_help_panel=MODEL_PANEL,
        ),
    ] = None,
    *,
    run: Run,
) -> None:
    """Fit a Wasserstein-robust model (jointly over θ and λ) and the ERM model."""
    from iclr25.core.dro_bound.pipeline import run_fit

    parsed = specs(run, opts)
    with run.progress("fitting") as advance, run.timer("fit_s"):
        results = run_fit(*parsed, save=save, on_progress=advance)
    if not results["converged"]:
        run.warn("the solver stopped before convergence: the fitted model may be inaccurate")
    _warn_radius(run, results["radius"])
    run.finish(results, {**_config(parsed), "save": save}, _render_fit)


CERTIFY_KEYS = (
    "n, d, delta, confidence, rho, radius_constant, radius_source, constant_estimated, "
    "guarantee, robust_risk, "
    "empirical_risk, certified_margin, lambda, statement, radius, model_source, "
    "model, loss, coefficients, intercept, cost, data, true_risk and bound_holds "
    "(synthetic data)"
)


@command(app, "certify", epilog=f"JSON results: {CERTIFY_KEYS}.")
@problem_options(omit=("coef", "intercept"))
def certify(opts: ProblemOptions, *, run: Run) -> None:
    """The radius ρ_n = c·√(log(1/δ)/n) and the statement "true risk ≤ robust risk"."""
    from iclr25.core.dro_bound.pipeline import run_certify

    parsed = specs(run, opts)
    with run.progress("bootstrap of the radius") as advance, run.timer("certify_s"):
        results = run_certify(*parsed, on_progress=advance)
    _warn_radius(run, results["radius"])
    if results["rho"] > 0 and results["certified_margin"] <= 1e-8 * max(
        1.0, abs(results["empirical_risk"])
    ):
        run.warn(
            "the robust risk equals the empirical risk at ρ > 0: the model does not move with "
            "the data (e.g. w = 0, ρ beyond the critical radius), so the bound has no margin"
        )
    if results.get("bound_holds") is False:
        run.warn(
            "on this synthetic sample the true risk exceeds the robust risk (this happens "
            f"with probability up to δ = {results['delta']:g} when c is right)"
        )
    run.finish(results, _config(parsed), _render_certify)


COVERAGE_KEYS = (
    "cells (d, n, rho, coverage, coverage_ci, mean_gap, sd_gap, "
    "empirical_coverage, mean_true_risk), target_coverage, radius_constants, "
    "radius_source, loss, distribution, summary"
)


@command(
    app,
    "coverage",
    epilog=f"JSON results: {COVERAGE_KEYS}. Plots with --out: "
    "coverage_vs_n.png, gap_vs_n.png, coverage_vs_d.png.",
)
def coverage(
    distribution: Annotated[
        str,
        typer.Option("--distribution", help="gaussian-classes, linear-gaussian or linear-heavy."),
    ] = "gaussian-classes",
    n_grid: Annotated[str, typer.Option("--n-grid", help="Sample sizes.")] = "50,200,800",
    d_grid: Annotated[str, typer.Option("--d-grid", help="Dimensions.")] = "2,10,50",
    trials: Annotated[int, typer.Option("--trials", help="Trials M per (d, n).")] = 100,
    delta: DeltaOpt = 0.05,
    radius_constant: ConstOpt = None,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Resamples of the pilot estimate of c (per d).")
    ] = 50,
    test_size: Annotated[
        int, typer.Option("--test-size", help="Held-out sample for the true risk.")
    ] = 50_000,
    loss: LossOpt = None,
    p: POpt = 2.0,
    q: QOpt = 1.0,
    kappa: KappaOpt = "inf",
    *,
    run: Run,
) -> None:
    """Share of trials where robust empirical risk ≥ true risk, over n and d grids."""
    from iclr25.core.dro_bound.costs import TransportCost
    from iclr25.core.dro_bound.coverage import CoverageConfig, coverage_plots, run_coverage

    config = CoverageConfig(
        distribution,
        parse_ints(n_grid, "--n-grid"),
        parse_ints(d_grid, "--d-grid"),
        trials,
        delta,
        radius_constant,
        bootstrap,
        test_size,
        TransportCost(p, q, parse_float(kappa, "--kappa")),
        loss,
        run.seed,
    )
    total = trials * len(config.n_grid) * len(config.d_grid)
    with run.progress("coverage trials", total=total) as advance, run.timer("coverage_s"):
        result = run_coverage(config, on_progress=advance)
    results = _coverage_results(result, config)
    below = results["summary"]["cells_below_target"]
    if below:
        run.warn(f"{len(below)} cell(s) cover significantly less than 1 − δ: {below}")
    if run.wants_artifacts:
        for name, fig in coverage_plots(result):
            run.save_plot(fig, name)
    run.finish(results, config, _render_coverage)


def _coverage_results(result, config) -> dict:
    cells = [vars(c) for c in result.cells]
    below = [f"d={c.d}, n={c.n}" for c in result.cells if c.coverage_ci[1] < result.target]
    return {
        "cells": cells,
        "target_coverage": result.target,
        "radius_constants": {str(k): v for k, v in result.radius_constants.items()},
        "radius_source": result.radius_source,
        "loss": result.loss,
        "distribution": config.distribution,
        "summary": {
            "min_coverage": min(c.coverage for c in result.cells),
            "mean_coverage": sum(c.coverage for c in result.cells) / len(result.cells),
            "cells_below_target": below,
        },
    }


def _render_coverage(console, results) -> None:
    from iclr25.output import format_value, rows_table

    rows = [
        {
            "d": c["d"],
            "n": c["n"],
            "ρ": c["rho"],
            "coverage": c["coverage"],
            "95% CI": f"{c['coverage_ci'][0]:.2f}–{c['coverage_ci'][1]:.2f}",
            "mean gap": c["mean_gap"],
            "empirical covers": c["empirical_coverage"],
            "true risk": c["mean_true_risk"],
        }
        for c in results["cells"]
    ]
    title = (
        f"coverage: share of trials with robust empirical risk ≥ true risk "
        f"(target 1 − δ = {results['target_coverage']:g})"
    )
    console.print(rows_table(rows, title=title))
    constants = results["radius_constants"].items()
    consts = ", ".join(f"d={k}: c={format_value(v)}" for k, v in constants)
    console.print(f"radius constants: {consts} ({results['radius_source']})", markup=False)
    below = results["summary"]["cells_below_target"]
    if below:
        console.print(f"significantly below 1 − δ: {'; '.join(below)}", markup=False)


def _warn_radius(run: Run, radius: dict) -> None:
    if radius.get("guarantee", "").startswith("APPROXIMATE"):
        run.warn(
            f"ρ = {radius['rho']:.4g} uses a bootstrap estimate of c = {radius['constant']:.4g}, "
            "not the paper's constant: the certificate is approximate (pass --radius-constant "
            "to use your own c)"
        )


def _warn_convergence(run: Run, diagnostics: dict) -> None:
    conv = diagnostics.get("converged_fraction")
    if conv is not None and conv < 1.0:
        run.warn(
            f"the inner maximisation converged for only {conv:.1%} of the samples — "
            "raise --inner-iters (or --starts); the robust risk may be underestimated"
        )
    agree = diagnostics.get("start_agreement")
    if agree is not None and agree < 0.5:
        run.warn(
            f"only {agree:.1%} of samples had two ascent starts agree on the maximum — "
            "the inner suprema may be local; raise --starts"
        )


def _config(parsed) -> dict:
    data_spec, model_spec, robust = parsed
    return {"data": data_spec, "model": model_spec, "robust": robust}


DEMO = (
    DemoStep(
        "dro-bound certify",
        ("dro-bound", "certify", "--synthetic", "gaussian-classes", "--bootstrap", "60"),
        lambda doc: (
            f"ρ={doc['results']['rho']:.3g}: robust risk {doc['results']['robust_risk']:.3f} "
            f"≥ true {doc['results']['true_risk']:.3f} "
            f"({'holds' if doc['results']['bound_holds'] else 'fails'}, δ=0.05, "
            f"c estimated: approximate)"
        ),
    ),
)

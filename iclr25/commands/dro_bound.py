"""`iclr25 dro-bound`: Wasserstein-robust models and their certified risk bounds.

Thin commands over :mod:`iclr25.core.dro_bound` (Le & Malick, ICLR 2025; Azizian,
Iutzeler & Malick, NeurIPS 2023): ``risk`` (robust risk of a given model), ``fit`` (robust
and ERM models), ``certify`` (a radius of a named kind — calibrated, theory or user — and
the bound's statement) and ``coverage`` (the synthetic experiment that measures how often
each kind's bound holds, trials run through :mod:`iclr25.parallel`).
"""

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands.dro_bound_options import (
    MODEL_PANEL,
    ConstOpt,
    DeltaOpt,
    EpsOpt,
    KappaOpt,
    LossOpt,
    POpt,
    ProblemOptions,
    QOpt,
    SamplesOpt,
    SigmaOpt,
    SplitOpt,
    parse_float,
    parse_ints,
    problem_options,
    specs,
)
from iclr25.demo import DemoStep
from iclr25.errors import UsageError
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command

NAME = "dro-bound"
HELP = "Wasserstein-robust models and their certified risk bounds (risk, fit, certify, coverage)."

app = typer.Typer(no_args_is_help=True, help=HELP)


def _render_risk(console, results) -> None:
    from iclr25.output import render_mapping

    keys = (
        "robust_risk",
        "risk_kind",
        "empirical_risk",
        "true_risk",
        "rho",
        "radius_kind",
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
        "risk_kind",
        "lambda",
        "rho",
        "radius_kind",
        "empirical_risk",
        "true_risk",
        "erm_objective",
        "erm_robust_risk",
        "erm_true_risk",
        "solver",
        "converged",
        "stopping",
        "start_objective",
        "improved",
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
        "radius_kind",
        "risk_kind",
        "guarantee",
        "rho",
        "radius_constant",
        "robust_risk",
        "empirical_risk",
        "true_risk",
        "smoothed_true_risk",
        "bound_holds",
        "n",
        "d",
        "delta",
    )
    render_mapping(
        console, {k: results[k] for k in keys if k in results}, title="dro-bound certify"
    )


RISK_KEYS = (
    "robust_risk, risk_kind, empirical_risk, rho, radius_kind, radius, lambda, method, "
    "diagnostics, model_source, model, loss, coefficients, intercept, cost, data, entropic, "
    "true_risk (synthetic data)"
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
    _warn_common(run, results)
    run.finish(results, _config(parsed), _render_risk)


FIT_KEYS = (
    "robust_objective, risk_kind, lambda, rho, radius_kind, radius, empirical_risk, model, "
    "loss, coefficients, intercept (linear models), erm_objective, erm_robust_risk, "
    "erm_coefficients, erm_intercept, solver, converged (None for the MLP: no convergence "
    "test), stopping (MLP), start_objective, improved, cost, entropic, data, saved_to, "
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
    if results.get("improved", True) and results["converged"] is False:  # (else a note)
        run.warn("the solver stopped before convergence: the fitted model may be inaccurate")
    _warn_common(run, results)
    run.finish(results, {**_config(parsed), "save": save}, _render_fit)


CERTIFY_KEYS = (
    "n (certified rows), d, delta, confidence, rho, radius_constant, radius_kind, radius, "
    "guarantee, risk_kind, robust_risk, empirical_risk, certified_margin, lambda, statement, "
    "model_source, model, loss, coefficients, intercept, cost, data, entropic, true_risk, "
    "smoothed_true_risk (entropic) and bound_holds (synthetic data)"
)


@command(app, "certify", epilog=f"JSON results: {CERTIFY_KEYS}.")
@problem_options(omit=("coef", "intercept"))
def certify(opts: ProblemOptions, *, run: Run) -> None:
    """A radius of a named kind and the statement "true risk ≤ robust risk", with what it
    rests on."""
    from iclr25.core.dro_bound.pipeline import run_certify

    parsed = specs(run, opts)
    with run.progress("bootstrap of the radius") as advance, run.timer("certify_s"):
        results = run_certify(*parsed, on_progress=advance)
    _warn_common(run, results)
    if results.get("bound_holds") is False:
        run.warn(
            "on this synthetic sample the bounded risk exceeds the robust risk (this happens "
            f"with probability up to δ = {results['delta']:g} when the radius is right)"
        )
    run.finish(results, _config(parsed), _render_certify)


COVERAGE_KEYS = (
    "hypothesis, control, pass_conditions, verdict, headline, target_coverage, kinds, theory, "
    "cells (kind, d, n, trials, certified_rows, rho_mean, constant_mean, coverage, "
    "coverage_ci, uniform_coverage, uniform_ci, thetas_covered, mean_gap, gap_ci, sd_gap, "
    "mean_target_risk, mean_empirical_risk), slopes (kind, d, slope, ci, "
    "contains_minus_half), distribution, loss, entropic"
)


@command(
    app,
    "coverage",
    epilog=f"JSON results: {COVERAGE_KEYS}. Plots with --out: "
    "coverage_vs_n.png, uniform_coverage_vs_n.png, gap_loglog.png.",
)
def coverage(
    distribution: Annotated[
        str,
        typer.Option(
            "--distribution",
            help="gaussian-classes, linear-gaussian, linear-heavy, ball-classes or ball-linear "
            "(the ball-* ones are bounded: the theory radius applies).",
        ),
    ] = "gaussian-classes",
    n_grid: Annotated[str, typer.Option("--n-grid", help="Sample sizes.")] = "200,800,3200",
    d_grid: Annotated[str, typer.Option("--d-grid", help="Dimensions.")] = "2,10",
    trials: Annotated[int, typer.Option("--trials", help="Trials M per (d, n).")] = 20,
    kinds: Annotated[
        str | None,
        typer.Option(
            "--kinds",
            help="Radius kinds to measure, e.g. calibrated,theory (default: every kind that "
            "applies; the control ρ = 0 always runs).",
        ),
    ] = None,
    delta: DeltaOpt = 0.05,
    radius_constant: ConstOpt = None,
    calibration_split: SplitOpt = 0.3,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Resamples of the calibrated c, per trial.")
    ] = 30,
    rounds: Annotated[int, typer.Option("--rounds", help="Refit rounds of that bootstrap.")] = 1,
    test_size: Annotated[
        int, typer.Option("--test-size", help="Held-out sample for the true risk (per d).")
    ] = 50_000,
    thetas: Annotated[
        int, typer.Option("--thetas", help="Random θ per d for the uniform check.")
    ] = 8,
    loss: LossOpt = None,
    p: POpt = 2.0,
    q: QOpt = 1.0,
    kappa: KappaOpt = "inf",
    epsilon: EpsOpt = None,
    sigma: SigmaOpt = None,
    samples: SamplesOpt = 32,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Share of trials where each radius kind's robust risk bounds the true risk."""
    from iclr25 import parallel_options
    from iclr25.core.dro_bound.costs import TransportCost
    from iclr25.core.dro_bound.coverage import CoverageConfig, coverage_tasks
    from iclr25.core.dro_bound.coverage_report import coverage_plots, summarize
    from iclr25.parallel import run_tasks

    config = CoverageConfig(
        distribution,
        parse_ints(n_grid, "--n-grid"),
        parse_ints(d_grid, "--d-grid"),
        trials,
        delta,
        parse_kinds(kinds),
        radius_constant,
        calibration_split,
        bootstrap,
        rounds,
        test_size,
        thetas,
        TransportCost(p, q, parse_float(kappa, "--kappa")),
        loss,
        epsilon,
        sigma,
        samples,
        run.seed,
    )
    tasks = coverage_tasks(config)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    with run.progress("coverage trials", total=len(tasks)) as advance, run.timer("coverage_s"):
        outcome = run_tasks(tasks, execution, command="dro-bound coverage", on_done=advance)
    parallel_options.report(run, outcome)
    results = summarize(config, outcome.results)
    below = results["verdict"]["below_target"]
    if below:
        run.warn(f"{len(below)} cell(s) cover significantly less than 1 − δ: {below}")
    if results["verdict"]["overall"] != "met":
        run.warn(f"pass conditions not all met: {results['headline']}")
    if run.wants_artifacts:
        for name, fig in coverage_plots(results):
            run.save_plot(fig, name)
    run.finish(results, config, _render_coverage)


def _render_coverage(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "kind": c["kind"],
            "d": c["d"],
            "n": c["n"],
            "ρ": c["rho_mean"],
            "c": c["constant_mean"],
            "coverage": c["coverage"],
            "95% CI": f"{c['coverage_ci'][0]:.2f}–{c['coverage_ci'][1]:.2f}",
            "uniform": c["uniform_coverage"],
            "mean gap": c["mean_gap"],
        }
        for c in results["cells"]
    ]
    title = (
        f"coverage: share of trials with robust empirical risk ≥ true risk "
        f"(target 1 − δ = {results['target_coverage']:g})"
    )
    console.print(rows_table(rows, title=title))
    slopes = [
        {
            "kind": s["kind"],
            "d": s["d"],
            "slope": s["slope"],
            "95% CI": "—" if not s.get("ci") else f"{s['ci'][0]:.2f} … {s['ci'][1]:.2f}",
            "−1/2 inside": s.get("contains_minus_half"),
        }
        for s in results["slopes"]
    ]
    console.print(rows_table(slopes, title="log-log slope of the mean gap against n"))
    console.print(f"hypothesis: {results['hypothesis']}", markup=False)
    console.print(f"control: {results['control']}", markup=False)
    for key, text in results["pass_conditions"].items():
        verdict = results["verdict"].get(key, "not measured")
        console.print(f"  [{verdict}] {text}", markup=False)
    console.print(f"verdict: {results['verdict']['overall']} — {results['headline']}", markup=False)


def parse_kinds(text: str | None) -> tuple[str, ...]:
    if text is None:
        return ()
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if not kinds:
        raise UsageError("--kinds is empty", "e.g. --kinds calibrated,theory")
    return kinds


def _warn_common(run: Run, results: dict) -> None:
    """The workflow's notes, and what the radius and the risk rest on."""
    for note in results.pop("notes", []):
        run.warn(note)
    robust = results.get("robust_risk", results.get("robust_objective"))
    empirical = results["empirical_risk"]
    flat = robust - empirical <= 1e-8 * max(1.0, abs(empirical))
    if results["risk_kind"] == "exact" and results["rho"] > 0 and flat:
        run.warn(
            "the robust risk equals the empirical risk at ρ > 0: the model does not move with "
            "the data (e.g. w = 0, ρ beyond the critical radius), so the bound has no margin"
        )
    radius = results["radius"]
    if radius["kind"] == "calibrated":
        split = radius["split"]
        run.warn(
            f"ρ = {radius['rho']:.4g} is calibrated: c = {radius['constant']:.4g} estimated on "
            f"{split['calibration_rows']} held-out rows (the other {split['certified_rows']} "
            "are fitted and certified); an estimate, not a proof — pass --rho theory (with "
            "--support-radius) or your own --rho / --radius-constant"
        )
    if results.get("risk_kind") == "estimate":
        spread = results.get("diagnostics", {}).get("spread_across_restarts")
        run.warn(
            "the robust risk of this model is an estimate from multi-start gradient ascent (a "
            "lower estimate of the supremum), not a certified bound"
            + (f"; spread across restarts {spread:.3g}" if spread is not None else "")
        )
    if "entropic" in results:
        run.warn(
            "with --epsilon the robust risk bounds the smoothed risk E_P E_π₀ ℓ (features + "
            f"N(0, σ²I), σ = {results['entropic']['sigma']:.4g}), not E_P ℓ itself"
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


def _demo_line(doc: dict) -> str:
    from iclr25.core.dro_bound.pipeline import certify_headline

    return certify_headline(doc["results"])


DEMO = (
    DemoStep(
        "dro-bound certify",
        ("dro-bound", "certify", "--synthetic", "gaussian-classes", "--bootstrap", "60"),
        _demo_line,
    ),
)

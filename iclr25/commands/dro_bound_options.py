"""Options shared by the `iclr25 dro-bound` subcommands and their parsing into core specs.

Kept apart from :mod:`iclr25.commands.dro_bound` so that the command file stays readable;
like every command module it imports only typer, the stdlib and light iclr25 modules at
module level (the core specs are imported inside :func:`specs`).
"""

import math
from pathlib import Path
from typing import Annotated

import typer

from iclr25.errors import UsageError
from iclr25.runner import Run

_DATA, MODEL_PANEL, _COST, _ROBUST = "Data", "Model", "Transport cost", "Radius and solver"

DataOpt = Annotated[
    Path | None, typer.Option("--data", help="CSV, Parquet or NPZ table.", rich_help_panel=_DATA)
]
TargetOpt = Annotated[
    str, typer.Option("--target", help="Name of the target column.", rich_help_panel=_DATA)
]
SyntheticOpt = Annotated[
    str | None,
    typer.Option(
        "--synthetic",
        help="Built-in data: gaussian-classes, linear-gaussian or linear-heavy.",
        rich_help_panel=_DATA,
    ),
]
NOpt = Annotated[int, typer.Option("--n", help="Synthetic sample size.", rich_help_panel=_DATA)]
DOpt = Annotated[int, typer.Option("--d", help="Synthetic dimension.", rich_help_panel=_DATA)]
StdOpt = Annotated[
    bool,
    typer.Option(
        "--standardize",
        help="Centre and scale features (costs are then in standardised units).",
        rich_help_panel=_DATA,
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="logistic, linear or mlp (default: from the data).",
        rich_help_panel=MODEL_PANEL,
    ),
]
LossOpt = Annotated[
    str | None,
    typer.Option(
        "--loss",
        help="logistic, hinge, ramp | squared, absolute, huber.",
        rich_help_panel=MODEL_PANEL,
    ),
]
HuberOpt = Annotated[
    float, typer.Option("--huber-delta", help="Huber threshold.", rich_help_panel=MODEL_PANEL)
]
HiddenOpt = Annotated[
    str,
    typer.Option("--hidden", help="MLP hidden widths, e.g. 32,32.", rich_help_panel=MODEL_PANEL),
]
EpochsOpt = Annotated[
    int, typer.Option("--epochs", help="MLP training epochs.", rich_help_panel=MODEL_PANEL)
]
LoadOpt = Annotated[
    Path | None,
    typer.Option("--load", help="Model file from `fit --save`.", rich_help_panel=MODEL_PANEL),
]
POpt = Annotated[
    float, typer.Option("--p", help="Feature norm ‖·‖_p (inf allowed).", rich_help_panel=_COST)
]
QOpt = Annotated[
    float, typer.Option("--q", help="Cost power: ‖x − x'‖_p^q.", rich_help_panel=_COST)
]
KappaOpt = Annotated[
    str,
    typer.Option(
        "--kappa", help="Label-switch cost κ (inf = labels fixed).", rich_help_panel=_COST
    ),
]
RhoOpt = Annotated[
    str,
    typer.Option(
        "--rho",
        help="Radius ρ: a number, or auto (the certificate radius c·√(log(1/δ)/n)).",
        rich_help_panel=_ROBUST,
    ),
]
DeltaOpt = Annotated[
    float, typer.Option("--delta", help="Failure probability δ.", rich_help_panel=_ROBUST)
]
ConstOpt = Annotated[
    float | None,
    typer.Option(
        "--radius-constant",
        help="c in ρ_n = c·√(log(1/δ)/n) (default: bootstrap estimate).",
        rich_help_panel=_ROBUST,
    ),
]
BootOpt = Annotated[
    int,
    typer.Option("--bootstrap", help="Resamples for the estimate of c.", rich_help_panel=_ROBUST),
]
EpsOpt = Annotated[
    float | None,
    typer.Option(
        "--epsilon",
        help="Entropic regularisation ε (default: none, exact robust risk).",
        rich_help_panel=_ROBUST,
    ),
]
SigmaOpt = Annotated[
    float | None,
    typer.Option(
        "--sigma", help="σ of the Gaussian reference (default ρ^(1/q)/√d).", rich_help_panel=_ROBUST
    ),
]
SamplesOpt = Annotated[
    int,
    typer.Option("--samples", help="Monte Carlo samples per point (ε).", rich_help_panel=_ROBUST),
]
SolverOpt = Annotated[
    str,
    typer.Option(
        "--solver",
        help="auto, exact (linear models) or pga (projected gradient ascent).",
        rich_help_panel=_ROBUST,
    ),
]
StartsOpt = Annotated[
    int, typer.Option("--starts", help="Ascent starts per sample (pga).", rich_help_panel=_ROBUST)
]
ItersOpt = Annotated[
    int, typer.Option("--inner-iters", help="Max ascent iterations (pga).", rich_help_panel=_ROBUST)
]


def parse_float(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a number", f"pass a number to {option}"
        ) from None


def parse_rho(text: str) -> float | None:
    if text.strip().lower() == "auto":
        return None
    value = parse_float(text, "--rho")
    if not (value >= 0) or not math.isfinite(value):
        raise UsageError(f"--rho {text} is not a finite number ≥ 0", "pass ρ ≥ 0, or auto")
    return value


def parse_ints(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a comma-separated list of integers",
            f"e.g. {option} 50,200,800",
        ) from None
    if not values:
        raise UsageError(f"{option} is empty", f"e.g. {option} 50,200,800")
    return values


def specs(
    run: Run,
    *,
    data,
    target,
    synthetic,
    n,
    d,
    standardize,
    model,
    loss,
    huber_delta,
    hidden,
    epochs,
    load,
    p,
    q,
    kappa,
    rho,
    delta,
    radius_constant,
    bootstrap,
    epsilon,
    sigma,
    samples,
    solver,
    starts,
    inner_iters,
    coef=None,
    intercept=0.0,
):
    from iclr25.core.dro_bound.certificate import CertificateConfig
    from iclr25.core.dro_bound.costs import TransportCost
    from iclr25.core.dro_bound.entropic import EntropicConfig
    from iclr25.core.dro_bound.fit_mlp import MLPConfig
    from iclr25.core.dro_bound.inner_max import InnerMaxConfig
    from iclr25.core.dro_bound.pipeline import DataSpec, ModelSpec, RobustSpec

    if n < 1 or d < 1:
        raise UsageError(f"--n {n} / --d {d} must be at least 1", "pass positive sizes")
    if starts < 1 or inner_iters < 1:
        raise UsageError("--starts and --inner-iters must be at least 1", "e.g. --starts 5")
    data_spec = DataSpec(data, target, synthetic, n, d, standardize, run.seed)
    coef_values = None if coef is None else tuple(parse_float(v, "--coef") for v in coef.split(","))
    model_spec = ModelSpec(
        model,
        loss,
        huber_delta,
        load,
        coef_values,
        intercept,
        MLPConfig(parse_ints(hidden, "--hidden"), epochs, seed=run.seed),
    )
    robust = RobustSpec(
        rho=parse_rho(rho),
        cost=TransportCost(p, q, parse_float(kappa, "--kappa")),
        entropic=None if epsilon is None else EntropicConfig(epsilon, sigma, samples),
        solver=solver,
        inner=InnerMaxConfig(starts=starts, max_iter=inner_iters),
        certificate=CertificateConfig(delta, radius_constant, bootstrap),
        device=run.device.kind,
        seed=run.seed,
    )
    if solver not in ("auto", "exact", "pga"):
        raise UsageError(f"--solver {solver!r} is unknown", "use auto, exact or pga")
    return data_spec, model_spec, robust

"""Options shared by `iclr25 dro-bound risk|fit|certify` and their parsing into core specs.

The three commands take the same ~27 options (data, model, cost, radius, solver). Each is
declared once here, as a typer ``Annotated`` type and a field of :class:`ProblemOptions`;
:func:`problem_options` adds them, as explicit typer options, to a command's signature and
hands the command one :class:`ProblemOptions` (per-command defaults and omissions are
arguments of the decorator). :func:`specs` turns that into the core's dataclass specs.

Like every command module this imports only typer, the stdlib and light iclr25 modules at
module level (the core specs are imported inside :func:`specs`).
"""

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from iclr25.errors import UsageError
from iclr25.runner import Run

MAX_SYNTHETIC_VALUES = 5e7  # n·d of a --synthetic sample (400 MB of float64)
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
CoefOpt = Annotated[
    str | None,
    typer.Option(
        "--coef",
        help="A linear model's coefficients, comma-separated.",
        rich_help_panel=MODEL_PANEL,
    ),
]
InterceptOpt = Annotated[
    float, typer.Option("--intercept", help="Its intercept.", rich_help_panel=MODEL_PANEL)
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
        help="Radius ρ: a number (kind user), calibrated (= auto: c·√(log(1/δ)/n) with c "
        "estimated on held-out rows) or theory (a stated theorem's radius; needs "
        "--support-radius).",
        rich_help_panel=_ROBUST,
    ),
]
SplitOpt = Annotated[
    float,
    typer.Option(
        "--calibration-split",
        help="Share of the rows held out to calibrate c (calibrated radius); the model is "
        "fitted and certified on the others.",
        rich_help_panel=_ROBUST,
    ),
]
SupportOpt = Annotated[
    float | None,
    typer.Option(
        "--support-radius",
        help="X with ‖x‖₂ ≤ X for every possible x (theory radius; an assumption you state).",
        rich_help_panel=_ROBUST,
    ),
]
TargetBoundOpt = Annotated[
    float | None,
    typer.Option(
        "--target-bound",
        help="Y with |y| ≤ Y for every possible target (theory radius, regression).",
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
        help="c in ρ_n = c·√(log(1/δ)/n), given (kind user; default: calibrated).",
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


@dataclasses.dataclass(frozen=True)
class ProblemOptions:
    """The options of risk/fit/certify, as typed; defaults are the commands' defaults."""

    data: DataOpt = None
    target: TargetOpt = "y"
    synthetic: SyntheticOpt = None
    n: NOpt = 500
    d: DOpt = 5
    standardize: StdOpt = False
    model: ModelOpt = None
    loss: LossOpt = None
    huber_delta: HuberOpt = 1.0
    load: LoadOpt = None
    coef: CoefOpt = None
    intercept: InterceptOpt = 0.0
    hidden: HiddenOpt = "32"
    epochs: EpochsOpt = 300
    p: POpt = 2.0
    q: QOpt = 1.0
    kappa: KappaOpt = "inf"
    rho: RhoOpt = "calibrated"
    delta: DeltaOpt = 0.05
    radius_constant: ConstOpt = None
    calibration_split: SplitOpt = 0.3
    support_radius: SupportOpt = None
    target_bound: TargetBoundOpt = None
    bootstrap: BootOpt = 100
    epsilon: EpsOpt = None
    sigma: SigmaOpt = None
    samples: SamplesOpt = 64
    solver: SolverOpt = "auto"
    starts: StartsOpt = 5
    inner_iters: ItersOpt = 400


def problem_options(*, omit: tuple[str, ...] = (), **defaults) -> Callable:
    """Decorate ``fn(..., opts: ProblemOptions, *, run)``: the fields of
    :class:`ProblemOptions` (less ``omit``, with ``defaults`` overridden) become explicit typer
    options of the command, collected into ``opts`` when it runs. Use it under
    ``@command(...)``."""
    fields = [f for f in dataclasses.fields(ProblemOptions) if f.name not in omit]
    unknown = (set(omit) | set(defaults)) - {f.name for f in dataclasses.fields(ProblemOptions)}
    if unknown:
        raise TypeError(f"problem_options: unknown option(s) {sorted(unknown)}")
    shared = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=defaults.get(f.name, f.default),
            annotation=f.type,
        )
        for f in fields
    ]

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.name not in ("opts", "run")]

        @functools.wraps(fn)
        def wrapper(*, run, **kwargs):
            values = {f.name: kwargs.pop(f.name) for f in fields}
            opts = ProblemOptions(**(defaults | values))
            return fn(opts=opts, run=run, **kwargs)

        run_param = sig.parameters["run"]
        wrapper.__signature__ = sig.replace(parameters=[*shared, *own, run_param])
        wrapper.__annotations__ = {p.name: p.annotation for p in [*shared, *own, run_param]}
        return wrapper

    return decorate


def parse_float(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a number", f"pass a number to {option}"
        ) from None


def parse_rho(text: str) -> tuple[float | None, str]:
    """(ρ or None, radius kind when ρ is not given): a number, calibrated/auto, or theory."""
    word = text.strip().lower()
    if word in ("auto", "calibrated"):
        return None, "calibrated"
    if word == "theory":
        return None, "theory"
    try:
        value = float(text)
    except ValueError:
        raise UsageError(
            f"--rho {text!r} is neither a number nor a radius kind",
            "pass a number, calibrated (or auto), or theory",
        ) from None
    if not (value >= 0) or not math.isfinite(value):
        raise UsageError(f"--rho {text} is not a finite number ≥ 0", "pass ρ ≥ 0, or auto")
    return value, "calibrated"


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


def specs(run: Run, opts: ProblemOptions):
    """(DataSpec, ModelSpec, RobustSpec) of the core pipeline, with the options checked."""
    from iclr25.core.dro_bound.certificate import CertificateConfig
    from iclr25.core.dro_bound.costs import TransportCost
    from iclr25.core.dro_bound.entropic import EntropicConfig
    from iclr25.core.dro_bound.fit_mlp import MLPConfig
    from iclr25.core.dro_bound.inner_max import InnerMaxConfig
    from iclr25.core.dro_bound.setup import DataSpec, ModelSpec, RobustSpec
    from iclr25.core.dro_bound.theory import TheoryConfig

    o = opts
    if o.n < 1 or o.d < 1:
        raise UsageError(f"--n {o.n} / --d {o.d} must be at least 1", "pass positive sizes")
    if o.synthetic is not None and o.n * o.d > MAX_SYNTHETIC_VALUES:
        raise UsageError(
            f"--n {o.n} × --d {o.d} synthetic values is too many "
            f"(limit {MAX_SYNTHETIC_VALUES:.0e})",
            "pass a smaller --n or --d",
        )
    if o.starts < 1 or o.inner_iters < 1:
        raise UsageError("--starts and --inner-iters must be at least 1", "e.g. --starts 5")
    if o.solver not in ("auto", "exact", "pga"):
        raise UsageError(f"--solver {o.solver!r} is unknown", "use auto, exact or pga")
    data_spec = DataSpec(o.data, o.target, o.synthetic, o.n, o.d, o.standardize, run.seed)
    coef = None if o.coef is None else tuple(parse_float(v, "--coef") for v in o.coef.split(","))
    if not all(math.isfinite(v) for v in (*(coef or ()), o.intercept)):
        raise UsageError("--coef / --intercept has a value that is not finite", "pass numbers")
    model_spec = ModelSpec(
        o.model,
        o.loss,
        o.huber_delta,
        o.load,
        coef,
        o.intercept,
        MLPConfig(parse_ints(o.hidden, "--hidden"), o.epochs, seed=run.seed),
    )
    rho, radius = parse_rho(o.rho)
    if o.radius_constant is not None and (rho is not None or radius == "theory"):
        raise UsageError(
            "--radius-constant gives the radius, and so does --rho " + o.rho,
            "pass one of --rho R and --radius-constant C",
        )
    if o.support_radius is None and o.target_bound is not None:
        raise UsageError("--target-bound goes with --support-radius", "pass both, or neither")
    theory = None if o.support_radius is None else TheoryConfig(o.support_radius, o.target_bound)
    robust = RobustSpec(
        rho=rho,
        radius=radius,
        cost=TransportCost(o.p, o.q, parse_float(o.kappa, "--kappa")),
        entropic=None if o.epsilon is None else EntropicConfig(o.epsilon, o.sigma, o.samples),
        solver=o.solver,
        inner=InnerMaxConfig(starts=o.starts, max_iter=o.inner_iters),
        certificate=CertificateConfig(
            o.delta,
            o.radius_constant,
            o.bootstrap,
            calibration_split=o.calibration_split,
            theory=theory,
        ),
        device=run.device.kind,
        seed=run.seed,
    )
    return data_spec, model_spec, robust

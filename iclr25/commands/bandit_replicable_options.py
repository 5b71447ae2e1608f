"""Options shared by the `iclr25 bandit-replicable` commands, and their parsing.

Declared once here as typer ``Annotated`` types; the environment builders turn the
instance options into the core's environments. Like every command module this imports
only typer, the stdlib and light iclr25 modules at module level.
"""

from enum import StrEnum
from typing import Annotated

import typer

from iclr25.errors import UsageError
from iclr25.runner import Run

ALGORITHM_NAMES = (
    "etc, list-2k, list-k-delta, list-batched, linear-batched, ucb1, successive-elimination, "
    "thompson, replicable-elimination"
)


class Instance(StrEnum):
    random = "random"
    equal_gaps = "equal-gaps"
    hard = "hard"
    stress = "stress"
    near_tied = "near-tied"
    spread = "spread"
    ladder = "ladder"


class Over(StrEnum):
    horizon = "horizon"
    k = "k"
    delta = "delta"
    batches = "batches"


class Family(StrEnum):
    search = "search"
    stress = "stress"
    near_tied = "near-tied"
    spread = "spread"
    ladder = "ladder"


class Noise(StrEnum):
    bernoulli = "bernoulli"
    gaussian = "gaussian"


class EnvKind(StrEnum):
    k_armed = "k-armed"
    linear = "linear"


_INSTANCE = "Instance"
_SIM = "Simulation"

AlgoOpt = Annotated[str, typer.Option("--algo", help=f"Algorithm: {ALGORITHM_NAMES}.")]
KOpt = Annotated[int, typer.Option("--k", help="Number of arms.", rich_help_panel=_INSTANCE)]
MeansOpt = Annotated[
    str | None,
    typer.Option(
        "--means", help="Arm means, e.g. 0.9,0.8,0.5 (sets k).", rich_help_panel=_INSTANCE
    ),
]
InstanceOpt = Annotated[
    Instance,
    typer.Option(
        "--instance",
        help="Generated means: random U(0.1,0.9), equal-gaps, hard (one arm ahead by --gap), "
        "or a stress family (stress, near-tied, spread, ladder; --gap sets its scale).",
        rich_help_panel=_INSTANCE,
    ),
]
GapOpt = Annotated[
    float | None,
    typer.Option("--gap", help="Gap for equal-gaps / hard instances.", rich_help_panel=_INSTANCE),
]
NoiseOpt = Annotated[
    Noise, typer.Option("--noise", help="Reward noise.", rich_help_panel=_INSTANCE)
]
SigmaOpt = Annotated[
    float, typer.Option("--sigma", help="Gaussian reward sd.", rich_help_panel=_INSTANCE)
]
EnvOpt = Annotated[
    EnvKind,
    typer.Option("--env", help="k-armed or linear bandit.", rich_help_panel=_INSTANCE),
]
DimOpt = Annotated[
    int, typer.Option("--dim", help="Linear bandits: dimension d.", rich_help_panel=_INSTANCE)
]
ArmsOpt = Annotated[
    int,
    typer.Option(
        "--arms",
        help="Linear bandits: N random unit-vector arms (0 = the unit ball).",
        rich_help_panel=_INSTANCE,
    ),
]
ThetaOpt = Annotated[
    float, typer.Option("--theta-norm", help="Linear bandits: |θ|.", rich_help_panel=_INSTANCE)
]
HorizonOpt = Annotated[int, typer.Option("--horizon", help="Rounds T.", rich_help_panel=_SIM)]
RunsOpt = Annotated[
    int, typer.Option("--runs", help="Independent executions.", rich_help_panel=_SIM)
]
DeltaOpt = Annotated[
    float,
    typer.Option(
        "--delta",
        help="δ of the (ℓ, δ) guarantee (ρ for replicable-elimination).",
        rich_help_panel=_SIM,
    ),
]
BatchesOpt = Annotated[
    int,
    typer.Option("--batches", help="B for list-batched / linear-batched.", rich_help_panel=_SIM),
]
SharedOpt = Annotated[
    bool,
    typer.Option(
        "--shared-randomness",
        help="Executions 2i and 2i+1 share their internal random bits (fresh rewards): "
        "pair_agreement then measures ρ-replicability; list checks are skipped.",
        rich_help_panel=_SIM,
    ),
]


def parse_values(text: str | None, over: str) -> tuple[float, ...]:
    """``--values 2,3,4`` for a list-size sweep (defaults per ``--over``)."""
    defaults = {"k": "2,3,4,5,6,7,8", "delta": "0.2,0.1,0.05,0.02,0.01", "batches": "2,3,4,5"}
    text = defaults.get(over, "") if text is None else text
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(
            f"--values {text!r} is not a comma-separated list of numbers",
            "write e.g. --values 2,3,4,5",
        ) from None
    return values


def environment(
    run: Run, *, env, k, means, instance, gap, noise, sigma, dim, arms, theta_norm, horizon
):
    import numpy as np

    from iclr25.core.bandit_replicable import environments as envs

    rng = np.random.default_rng(np.random.SeedSequence(run.seed & (2**63 - 1), spawn_key=(99,)))
    if env == EnvKind.linear:
        if arms == 0:
            return envs.unit_ball(
                dim=dim, horizon=horizon, theta_norm=theta_norm, sigma=sigma, rng=rng
            )
        return envs.linear_finite(
            dim=dim, arms=arms, horizon=horizon, theta_norm=theta_norm, sigma=sigma, rng=rng
        )
    parsed = envs.parse_means(means) if means is not None else None
    return envs.k_armed(
        k=k,
        horizon=horizon,
        instance=instance.value,
        gap=gap,
        means=parsed,
        noise=noise.value,
        sigma=sigma,
        rng=rng,
    )


def k_armed_environment(run: Run, **instance_options):
    """The k-armed environment of the instance options (compare, sweep)."""
    return environment(run, env=EnvKind.k_armed, dim=0, arms=0, theta_norm=1.0, **instance_options)


def device(run: Run, algo: str) -> str:
    from iclr25.core.bandit_replicable.registry import get

    if run.device.kind == "cuda" and get(algo).kind == "sequential":
        from iclr25.gpu import get_cupy

        if get_cupy() is not None:
            return "cuda"
        run.warn("CUDA was selected but CuPy is missing: UCB1/Thompson run on the CPU")
    return "cpu"

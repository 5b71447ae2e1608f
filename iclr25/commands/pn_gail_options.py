"""Options of `iclr25 pn-gail` and their parsing into the core's configs.

Like every command module this imports only typer, the stdlib and light iclr25 modules at
module level; the core (torch, stable-baselines3) is imported inside the functions.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from iclr25.errors import UsageError

DEMOS_PANEL, TRAIN_PANEL = "Demonstrations", "Training"
METHODS = ("gail", "2iwil", "ic-gail", "wgail", "pn-gail", "bc", "weighted-bc")


class Noise(StrEnum):
    uniform = "uniform"
    gaussian = "gaussian"


class Classifier(StrEnum):
    balanced = "balanced"
    iwil = "2iwil"


class Preset(StrEnum):
    default = "default"
    paper = "paper"


DemosOpt = Annotated[
    Path | None,
    typer.Option(
        "--demos",
        help="Demonstrations: NPZ (obs, actions, confidence with NaN = unlabelled), or an "
        "X_mixture.npy with --confidence-file. Default: generated from the bundled expert.",
        rich_help_panel=DEMOS_PANEL,
    ),
]
ConfidenceFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--confidence-file",
        help="Confidences [N] of an X_mixture.npy demonstration array.",
        rich_help_panel=DEMOS_PANEL,
    ),
]
LevelsOpt = Annotated[
    str,
    typer.Option(
        "--levels",
        help="Noise levels of the non-optimal demonstrators (ε of ε-random, or σ).",
        rich_help_panel=DEMOS_PANEL,
    ),
]
NoiseOpt = Annotated[
    Noise,
    typer.Option(
        "--noise",
        help="uniform: a uniform action with probability ε; gaussian: N(0, σ²) added.",
        rich_help_panel=DEMOS_PANEL,
    ),
]
EpisodesOpt = Annotated[
    int,
    typer.Option(
        "--episodes", help="Episodes per non-optimal demonstrator.", rich_help_panel=DEMOS_PANEL
    ),
]
OptimalShareOpt = Annotated[
    float,
    typer.Option(
        "--optimal-share",
        help="Share of the episodes from the expert.",
        rich_help_panel=DEMOS_PANEL,
    ),
]
LabeledOpt = Annotated[
    float | None,
    typer.Option(
        "--labeled-fraction",
        help="Share of pairs whose confidence is known, in (0, 1] (default 0.2 for "
        "generated and X_mixture demos; an NPZ keeps its own NaNs).",
        rich_help_panel=DEMOS_PANEL,
    ),
]
ClassifierOpt = Annotated[
    Classifier,
    typer.Option(
        "--classifier",
        help="Confidence of unlabelled pairs: balanced (PN-GAIL's) or 2iwil (semi-conf).",
        rich_help_panel=DEMOS_PANEL,
    ),
]
OracleOpt = Annotated[
    bool,
    typer.Option(
        "--oracle-confidence",
        help="Use the true confidences of every pair (needs them in the file).",
        rich_help_panel=DEMOS_PANEL,
    ),
]
ClassifierStepsOpt = Annotated[
    int,
    typer.Option(
        "--classifier-steps",
        help="Adam steps of the confidence classifier (320 labelled + 1,280 unlabelled each).",
        rich_help_panel=DEMOS_PANEL,
    ),
]
CompareWorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Local processes for independent tasks (1 = in-process). Default: 2 with "
        "--quick (GAIL and PN-GAIL side by side) unless the load average leaves under half a "
        "core free, else 1; the results are the same. With --scheduler local: the number "
        "of Dask workers.",
        show_default=False,
        rich_help_panel="Execution",
    ),
]
EnvOpt = Annotated[
    str,
    typer.Option(
        "--env",
        help="pendulum (batched numpy Pendulum-v1) or an installed gymnasium id.",
        rich_help_panel=TRAIN_PANEL,
    ),
]
StepsOpt = Annotated[
    int,
    typer.Option(
        "--steps",
        help="Environment steps per run (rounded up to whole rollouts).",
        rich_help_panel=TRAIN_PANEL,
    ),
]
PresetOpt = Annotated[
    Preset,
    typer.Option(
        "--preset",
        help="default (16 envs × 128 steps, γ 0.9, gSDE) or paper (the official settings).",
        rich_help_panel=TRAIN_PANEL,
    ),
]
FixedHorizonOpt = Annotated[
    bool,
    typer.Option(
        "--fixed-horizon",
        help="Tasks that can end early run on to their time limit with reward 0.",
        rich_help_panel=TRAIN_PANEL,
    ),
]
ExpertReturnOpt = Annotated[
    float | None,
    typer.Option(
        "--expert-return",
        help="R_expert for normalising returns on a gymnasium --env (Pendulum: measured).",
        rich_help_panel=TRAIN_PANEL,
    ),
]


def parse_floats(text: str, option: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a comma-separated list of numbers",
            f"e.g. {option} 0.4,0.6,0.8,1.0",
        ) from None
    if not values:
        raise UsageError(f"{option} is empty", f"give at least one number to {option}")
    return values


def parse_matrix(text: str, option: str) -> list[tuple[float, ...]]:
    """``"0.8,0.1,0.1;0.1,0.1,0.8"`` -> rows of equal length."""
    rows = [parse_floats(row, option) for row in text.split(";") if row.strip()]
    if not rows or len({len(r) for r in rows}) != 1:
        raise UsageError(
            f"{option} {text!r}: rows must have the same number of actions",
            f'e.g. {option} "0.8,0.1,0.1;0.1,0.1,0.8"',
        )
    return rows


def parse_names(text: str | None, allowed: tuple[str, ...], option: str) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise UsageError(
            f"{option}: unknown {', '.join(unknown) or '(empty)'}",
            f"use some of: {', '.join(allowed)}",
        )
    return names


def demo_config(levels: str, noise: Noise, episodes: int, optimal_share: float, labeled):
    from iclr25.core.pn_gail.demos import DemoConfig

    config = DemoConfig(
        levels=parse_floats(levels, "--levels"),
        noise=noise.value,
        episodes=episodes,
        optimal_share=optimal_share,
        labeled_fraction=0.2 if labeled is None else labeled,
    )
    config.validate()
    return config


def check_steps(steps: int) -> None:
    if steps < 1 or steps > 50_000_000:
        raise UsageError(f"--steps {steps} is out of range", "use e.g. --steps 200000")

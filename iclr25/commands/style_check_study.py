"""``iclr25 style-check study``: references -> unique -> a class-conditional generative
model trained on them -> generated sets -> check, with controls, over seeds.

Thin layer over ``iclr25.core.style_check.study``: options -> ``StudyConfig`` -> one task
per seed through the execution layer (``iclr25/parallel.py``) -> ``aggregate`` ->
``run.finish``. Registered in ``style_check.py``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt, execution, report
from iclr25.runner import Run, require


def study(
    quick: Annotated[
        bool,
        typer.Option(help="The reduced study: 6 artists at 16 px, shorter training (minutes)."),
    ] = False,
    seeds: Annotated[
        int | None, typer.Option(help="Seeds (intervals need >= 3). Default 3.", min=1, max=50)
    ] = None,
    artists: Annotated[
        int | None, typer.Option(help="Synthetic artists (even: they come in pairs).", min=2)
    ] = None,
    works: Annotated[
        int | None, typer.Option(help="Works per artist, held-out ones included.", min=6)
    ] = None,
    steps: Annotated[
        int | None, typer.Option(help="Optimiser updates of each generative model.", min=1)
    ] = None,
    ssl_steps: Annotated[
        int | None, typer.Option(help="Optimiser updates of the SSL CNN.", min=1)
    ] = None,
    size: Annotated[
        int | None, typer.Option(help="Image side in pixels (even).", min=8, max=64)
    ] = None,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Do samples of a class-conditional model trained on the references get attributed to
    their artist? Against held-out works, other artists' works and an unconditional model."""
    from iclr25.commands.style_check_views import render_study
    from iclr25.core.style_check.study import (
        StudyConfig,
        aggregate,
        headline,
        quick_config,
        run_seed,
        with_size,
    )
    from iclr25.parallel import Task, derive_seed, run_tasks

    config = quick_config() if quick else StudyConfig()
    config = _override(config, seeds, artists, works, steps, ssl_steps, size, no_cache)
    require(config.size_px % 2 == 0, f"--size {config.size_px} is odd", "give an even --size")
    require(
        config.works_per_artist > config.heldout_per_artist + config.deepmatch.folds,
        f"--works {config.works_per_artist} leaves too few references",
        f"give --works >= {config.heldout_per_artist + config.deepmatch.folds + 1}",
    )
    config = with_size(config)
    # 31 bits: scikit-learn and numpy's legacy generators take seeds below 2**32
    seed_values = [
        derive_seed(run.seed, "style-check study", i) % 2**31 for i in range(config.n_seeds)
    ]
    tasks = [Task(run_seed, config, s, label=f"seed {i}") for i, s in enumerate(seed_values)]
    with run.progress("study seeds", total=len(tasks)) as advance, run.timer("study_s"):
        outcome = run_tasks(
            tasks, execution(workers, scheduler, no_cache), command="style-check study",
            on_done=advance,
        )  # fmt: skip
    report(run, outcome)
    results = aggregate(outcome.results, config)
    results["headline"] = headline(results)
    results["seeds"] = seed_values
    results["per_seed"] = outcome.results
    if config.n_seeds < 3:
        run.warn(f"{config.n_seeds} seed(s): the intervals need at least 3")
    if not all(results["effect_appeared"].values()):
        run.warn(results["statement"])
    run.finish(results, config, render_study)


def _override(config, seeds, artists, works, steps, ssl_steps, size, no_cache):
    """The explicit options over the preset (None keeps the preset's value)."""
    if seeds is not None:
        config = replace(config, n_seeds=seeds)
    if artists is not None:
        config = replace(config, n_artists=artists)
    if works is not None:
        held = max(2, min(config.heldout_per_artist, works // 5))
        config = replace(config, works_per_artist=works, heldout_per_artist=held)
    if steps is not None:
        config = replace(config, generator=replace(config.generator, steps=steps))
    if ssl_steps is not None:
        config = replace(config, ssl=replace(config.ssl, steps=ssl_steps))
    if size is not None:
        config = replace(config, size_px=size, render_px=max(config.render_px, 2 * size))
    if config.generated_per_artist > (config.n_artists - 1) * config.heldout_per_artist:
        config = replace(
            config, generated_per_artist=(config.n_artists - 1) * config.heldout_per_artist
        )
    return replace(config, model_cache=not no_cache)

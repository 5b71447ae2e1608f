"""`iclr25 icl-order`: does demonstration order matter, do prompt embeddings cluster by
position, and does quadratic-time order search keep exhaustive accuracy?

Bare ``iclr25 icl-order [--model PATH|ORG/NAME]`` runs the whole analysis (clustering,
order sensitivity, cluster search against its controls); ``cluster``, ``sensitivity``
and ``search`` run each part alone; ``select`` turns a demonstration pool and unlabelled
inputs into chosen, ordered prompts. Thin layer: options -> config dataclasses ->
``iclr25.core.icl_order`` -> render (``icl_order_views``). The model and task options
live in :mod:`iclr25.commands.icl_order_options`.
"""

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands.icl_order_options import (
    Source,
    execution_options,
    load_pool_and_inputs,
    load_source,
    shard_runner,
    warn_if_at_chance,
    with_model_options,
    with_source_options,
)
from iclr25.core.icl_order.cluster_search import DEFAULT_MIDDLE, MIDDLE_RULE_HELP
from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command, require, with_common_options

NAME = "icl-order"
HELP = (
    "Measure whether demonstration order matters and how prompt embeddings cluster by "
    "it; search demonstration orders in quadratic time (Pham et al., ICLR 2025)."
)

K = Annotated[int, typer.Option("--k", help="Demonstrations per prompt.")]
Candidates = Annotated[int, typer.Option(help="Candidates n pre-selected per query.")]
Queries = Annotated[
    int, typer.Option(help="Test queries per seed (held out of the demonstration pool).")
]
Seeds = Annotated[
    int,
    typer.Option(help="Independent draws of queries and candidates; pooled for the intervals."),
]
Selection = Annotated[
    str,
    typer.Option(
        help="random | similar (cosine of the model's embeddings) | shared (one candidate "
        "set for all queries)."
    ),
]
Middle = Annotated[
    str,
    typer.Option(
        help="How cluster search fills the k-2 middle positions (the paper is silent): "
        + " | ".join(f"{rule} ({about})" for rule, about in MIDDLE_RULE_HELP.items())
        + f". Default {DEFAULT_MIDDLE}: its picks ranked best among all organisations in "
        "the benchmark; each rule's measured rank and accuracy are in docs/icl-order.md."
    ),
]
MaxEvaluations = Annotated[
    int, typer.Option(help="Refuse searches needing more model evaluations.")
]
PrefixCache = Annotated[
    bool,
    typer.Option(
        help="Score through the KV-cache prefix tree where it runs at most half the tokens "
        "(exhaustive search); --no-prefix-cache: always one forward per prompt."
    ),
]

SENSITIVITY_KEYS = (
    "accuracy_spread, flip_rate, variance_between_subsets, variance_between_orders, "
    "accuracy (each {value, interval}), position_bias, spread_by_draw, k, draws, queries, "
    "orderings_per_draw, order_verdict, model, task, chance"
)
SEARCH_KEYS = (
    "accuracy, accuracy_interval, evaluations, evaluations_per_query, "
    "exhaustive_evaluations_per_query, cluster_evaluations_per_query, "
    "evaluations_saved_vs_exhaustive, mean_entropy, comparison {method: accuracy, interval, "
    "accuracy_by_seed, correct, evaluations, mean_entropy, mean_percentile}, paired "
    "{cluster_vs_<control>: difference, interval, p_value, significant}, hypothesis, "
    "pass_conditions, verdict, accuracy_difference_vs_exhaustive, rank_vs_exhaustive, "
    "per_query, method, middle, k, candidates, queries, seeds, selection, fixed_set, model, "
    "task, template, label_words, chance"
)
TIMING_KEYS = (
    "timings: scoring_s (scoring of --method, model loading excluded), scoring_<method>_s, "
    "time_saved_vs_exhaustive"
)


def _methods(method: str, compare: str) -> tuple[str, ...]:
    if compare.strip().lower() == "none":
        return ()
    return tuple(m.strip() for m in compare.split(",") if m.strip() and m.strip() != method)


app = typer.Typer(
    no_args_is_help=False,  # a bare `iclr25 icl-order` runs the default analysis
    help=HELP + " Bare `iclr25 icl-order` runs the whole analysis on the embedded model.",
    epilog="JSON results of the bare analysis: the cluster keys, sensitivity, "
    f"order_verdict, search. {TIMING_KEYS}. Plots with --out: projection.png, "
    "positions.png, search.png; per_query.jsonl.",
)


@with_source_options
def analysis(
    k: K = 4,
    candidates: Candidates = 8,
    queries: Queries = 50,
    seeds: Seeds = 3,
    draws: Annotated[
        int, typer.Option(help="Draws for clustering and demonstration subsets for sensitivity.")
    ] = 20,
    quick: Annotated[
        bool, typer.Option(help="Fewer draws (8) and queries (8 per seed): a demo in seconds.")
    ] = False,
    selection: Selection = "random",
    middle: Middle = DEFAULT_MIDDLE,
    max_evaluations: MaxEvaluations = 2_000_000,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    source: Source,
    run: Run,
) -> None:
    """Run the whole analysis: clustering by position, order sensitivity, then cluster
    search against exhaustive, equal-budget sample and random controls."""
    from iclr25.commands import icl_order_views as views
    from iclr25.core.icl_order.analysis import AnalysisConfig, planned_work, run_analysis
    from iclr25.core.icl_order.cluster_analysis import ClusterConfig
    from iclr25.core.icl_order.search import SearchConfig
    from iclr25.core.icl_order.sensitivity import SensitivityConfig

    if quick:
        draws, queries = min(draws, 8), min(queries, 8)
    cfg = AnalysisConfig(
        ClusterConfig(k=k, draws=draws, projection="pca"),  # PCA: no UMAP start-up cost
        SensitivityConfig(k=k, draws=max(draws, 2)),
        SearchConfig(
            k=k,
            n_candidates=candidates,
            queries=queries,
            seeds=seeds,
            selection=selection,
            max_evaluations=max_evaluations,
            middle=middle,
        ),
    )
    total = planned_work(cfg)  # validates every part before the model loads
    execution = execution_options(workers, scheduler, no_cache)
    lm, encoded, context, model_cfg = load_source(run, source)
    with run.timer("scoring_s"), run.progress("icl-order analysis", total) as advance:
        runner = shard_runner(run, cfg.search, execution, model_cfg, encoded, NAME, advance)
        outcome = run_analysis(
            lm, encoded, cfg, run.seed, run.device.kind, advance, run.log, runner
        )
    _drop_warnings(run, outcome.dropped)
    run.timings.update({key: v for key, v in outcome.timings.items() if key != "scoring_s"})
    results = {**context, **outcome.results}
    sens = results["sensitivity"]
    warn_if_at_chance(
        run,
        sens["accuracy"]["value"],
        sens["accuracy"]["interval"],
        context["chance"],
        context["task"],
    )
    views.save_cluster_plots(run, outcome.projection, results)
    views.label_records(outcome.search_results["per_query"], encoded.label_words)
    views.save_search_artifacts(run, outcome.search_results)

    def render(console, res) -> None:
        views.render_cluster(console, res)
        views.render_sensitivity(console, {**context, **res["sensitivity"]})
        views.render_search(console, {**outcome.search_results, **context}, run.timings)

    run.finish(results, {"model": model_cfg, "analysis": cfg}, render)


analysis.__doc__ += f"\n\nJSON results: cluster keys, sensitivity, search. {TIMING_KEYS}."
app.callback(invoke_without_command=True)(with_common_options(analysis))


def _drop_warnings(run: Run, dropped: list[str]) -> None:
    for method in dropped:
        run.warn(
            f"the {method} control was skipped: it would take the search above "
            "--max-evaluations (raise it to compare with it)"
        )


@command(
    app,
    "cluster",
    epilog="JSON results: silhouette, purity, distance_ratio (each {first, last, middle}), "
    "their *_ci95 half-widths, by_position, chance_purity, pattern, pattern_differences, "
    "orderings_per_draw, draws, k, layer, draw_examples, model, task, template, "
    "label_words, label_tokens, chance. Plots with --out: projection.png (colour = "
    "first, marker = last demonstration), positions.png.",
)
@with_source_options
def cluster(
    k: K = 4,
    draws: Annotated[
        int, typer.Option(help="(query, demonstration set) draws averaged over.")
    ] = 20,
    layer: Annotated[
        int, typer.Option(help="hidden_states index: -1 = final layer, 0 = embeddings.")
    ] = -1,
    max_orderings: Annotated[
        int, typer.Option(help="Embed at most this many orderings per draw.")
    ] = 5040,
    sample: Annotated[
        bool, typer.Option(help="Above --max-orderings, embed a seeded sample.")
    ] = False,
    projection: Annotated[
        str,
        typer.Option(
            help="Plot projection: auto (UMAP if umap-learn is installed, else PCA) | pca | umap."
        ),
    ] = "auto",
    *,
    source: Source,
    run: Run,
) -> None:
    """Embed every ordering of k demonstrations and measure clustering by position."""
    import numpy as np

    from iclr25.commands import icl_order_views as views
    from iclr25.core.icl_order.cluster_analysis import (
        ClusterConfig,
        analyze_clustering,
        planned_embeddings,
    )

    require(
        projection in ("auto", "pca", "umap"),
        f"--projection {projection} is unknown",
        "use auto, pca or umap",
    )
    cfg = ClusterConfig(
        k=k,
        draws=draws,
        max_orderings=max_orderings,
        sample=sample,
        layer=layer,
        projection=projection,
    )
    total = planned_embeddings(cfg)  # validates before the model loads
    lm, encoded, context, model_cfg = load_source(run, source)
    rng = np.random.default_rng([run.seed, 0])
    with run.timer("scoring_s"), run.progress("embedding orderings", total) as advance:
        outcome = analyze_clustering(lm, encoded, cfg, rng, run.device.kind, advance)
    results = {**context, **outcome.results}
    if projection == "umap" and outcome.projection.get("method") == "pca":
        run.warn("umap-learn is not installed; the plot uses PCA")
    views.save_cluster_plots(run, outcome.projection, results)
    run.finish(results, {"model": model_cfg, "cluster": cfg}, views.render_cluster)


@command(app, "sensitivity", epilog=f"JSON results: {SENSITIVITY_KEYS}.")
@with_source_options
def sensitivity(
    k: K = 4,
    draws: Annotated[int, typer.Option(help="Demonstration subsets (each in every order).")] = 20,
    queries: Annotated[
        int, typer.Option(help="Test queries, the same for every subset and order.")
    ] = 40,
    max_orderings: Annotated[
        int, typer.Option(help="Score at most this many orderings per subset.")
    ] = 5040,
    sample: Annotated[
        bool, typer.Option(help="Above --max-orderings, score a seeded sample of orders.")
    ] = False,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples over subsets.")] = 2000,
    prefix_cache: PrefixCache = True,
    *,
    source: Source,
    run: Run,
) -> None:
    """How much the order of a fixed set of k demonstrations changes predictions: the
    accuracy spread across orderings, the flip rate, and the variance between subsets
    vs between orders of one subset, with bootstrap intervals."""
    from iclr25.commands import icl_order_views as views
    from iclr25.core.icl_order.sensitivity import (
        SensitivityConfig,
        measure_sensitivity,
        order_verdict,
        planned_evaluations,
    )

    cfg = SensitivityConfig(
        k=k,
        draws=draws,
        queries=queries,
        max_orderings=max_orderings,
        sample=sample,
        bootstrap=bootstrap,
        prefix_cache=prefix_cache,
    )
    total = planned_evaluations(cfg)  # validates before the model loads
    lm, encoded, context, model_cfg = load_source(run, source)
    with run.timer("scoring_s"), run.progress("scoring orderings", total) as advance:
        out = measure_sensitivity(lm, encoded, cfg, run.seed, advance)
    results = {**context, **out, "order_verdict": order_verdict(out)}
    warn_if_at_chance(
        run,
        out["accuracy"]["value"],
        out["accuracy"]["interval"],
        context["chance"],
        context["task"],
    )
    run.finish(results, {"model": model_cfg, "sensitivity": cfg}, views.render_sensitivity)


@command(
    app,
    "search",
    epilog=f"JSON results: {SEARCH_KEYS}. {TIMING_KEYS}. Artifacts with --out: "
    "per_query.jsonl, search.png.",
)
@with_source_options
def search(
    method: Annotated[
        str, typer.Option(help="cluster | exhaustive | sample | random.")
    ] = "cluster",
    k: K = 4,
    candidates: Candidates = 8,
    queries: Queries = 50,
    seeds: Seeds = 3,
    selection: Selection = "random",
    middle: Middle = DEFAULT_MIDDLE,
    fixed_set: Annotated[
        bool, typer.Option(help="Order a fixed set of k (k! orders) instead of choosing k of n.")
    ] = False,
    compare: Annotated[
        str,
        typer.Option(
            help="Controls run on the same queries: exhaustive (skipped with a warning above "
            "--max-evaluations), sample (the best of as many random organisations as "
            "cluster scores), random (one organisation), cluster@RULE (another middle "
            "rule); 'none' for no control."
        ),
    ] = "exhaustive,sample,random",
    max_evaluations: MaxEvaluations = 2_000_000,
    prefix_cache: PrefixCache = True,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    source: Source,
    run: Run,
) -> None:
    """Choose and order k of n demonstrations per query by the self-adaptive entropy,
    against exhaustive, equal-budget sample and random controls over several seeds."""
    from iclr25.commands import icl_order_views as views
    from iclr25.core.icl_order.search import SearchConfig, planned_evaluations
    from iclr25.core.icl_order.search_report import run_search

    controls = _methods(method, compare)
    cfg = SearchConfig(
        method=method,
        k=k,
        n_candidates=candidates,
        queries=queries,
        seeds=seeds,
        selection=selection,
        fixed_set=fixed_set,
        max_evaluations=max_evaluations,
        prefix_cache=prefix_cache,
        middle=middle,
    )
    total = planned_evaluations(cfg, (method, *controls))  # validates before loading
    execution = execution_options(workers, scheduler, no_cache)
    lm, encoded, context, model_cfg = load_source(run, source)
    if prefix_cache and lm.cache_keyword is None:
        run.warn("this model takes no key/value cache; scoring one forward per prompt")
    with run.progress(f"{method} search", total) as advance:
        runner = shard_runner(run, cfg, execution, model_cfg, encoded, f"{NAME} search", advance)
        outcome = run_search(lm, encoded, cfg, run.seed, controls, None, run.log, runner)
    _drop_warnings(run, outcome.dropped)
    run.timings.update(outcome.timings)
    results = {**context, **outcome.results}
    warn_if_at_chance(
        run, results["accuracy"], results["accuracy_interval"], context["chance"], context["task"]
    )
    views.label_records(results["per_query"], encoded.label_words)
    views.save_search_artifacts(run, results)
    run.finish(
        results,
        {"model": model_cfg, "search": cfg, "compare": list(controls)},
        lambda console, res: views.render_search(console, res, run.timings),
    )


@command(
    app,
    "select",
    epilog="JSON results: prompts (per input: input, demonstrations [{text, label}] in "
    "order, prompt, prediction, probabilities, entropy, method), method, k, candidates, "
    "inputs, pool, selection, middle, model, demos, template, label_words. With --out: "
    "prompts.jsonl (one line per input, the same fields).",
)
@with_model_options
def select(
    demos: Annotated[
        Path, typer.Option(help="Labelled demonstration pool (.jsonl/.csv: text, label).")
    ],
    inputs: Annotated[
        Path, typer.Option(help="Unlabelled inputs (.jsonl/.csv with a text field, or .txt).")
    ],
    k: K = 4,
    candidates: Annotated[
        int, typer.Option(help="Candidates n pre-selected from the pool per input.")
    ] = 8,
    method: Annotated[
        str, typer.Option(help="cluster (the paper) | exhaustive | sample (for comparison).")
    ] = "cluster",
    selection: Annotated[
        str, typer.Option(help="similar (top-n cosine of the model's embeddings) | random.")
    ] = "similar",
    middle: Middle = DEFAULT_MIDDLE,
    max_evaluations: MaxEvaluations = 2_000_000,
    prefix_cache: PrefixCache = True,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    source: Source,
    run: Run,
) -> None:
    """For each unlabelled input, pick and order k demonstrations of the pool (cluster
    search on the self-adaptive entropy) and write the prompt, ready for any LLM."""
    from iclr25.commands.icl_order_select import run_select
    from iclr25.core.icl_order.select import SelectConfig, validate

    cfg = SelectConfig(
        k=k,
        n_candidates=candidates,
        method=method,
        selection=selection,
        middle=middle,
        prefix_cache=prefix_cache,
        max_evaluations=max_evaluations,
    )
    validate(cfg)
    execution = execution_options(workers, scheduler, no_cache)
    loaded = load_pool_and_inputs(run, source, demos, inputs)
    run_select(run, cfg, execution, loaded)


def _headline(doc: dict) -> str:
    from iclr25.core.icl_order.headline import headline

    return headline(doc["results"])


DEMO = (DemoStep("icl-order analysis", ("icl-order", "--quick"), _headline, timeout_s=240.0),)

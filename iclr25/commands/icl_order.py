"""`iclr25 icl-order`: demonstration-order clustering and quadratic-time order search.

Bare ``iclr25 icl-order [--model PATH]`` runs the whole analysis (clustering summary and
cluster-based vs exhaustive search); ``cluster`` and ``search`` run each part alone.
Thin layer: options -> config dataclasses -> ``iclr25.core.icl_order`` -> render. The
model and task options of all three live in :mod:`iclr25.commands.icl_order_options`.
"""

from typing import Annotated

import typer

from iclr25.commands.icl_order_options import Source, load_source, with_source_options
from iclr25.demo import DemoStep
from iclr25.runner import Run, command, require, with_common_options

NAME = "icl-order"
HELP = (
    "Measure how prompt embeddings cluster by demonstration order; search demonstration "
    "orders in quadratic time (Pham et al., ICLR 2025)."
)

K = Annotated[int, typer.Option("--k", help="Demonstrations per prompt.")]
Candidates = Annotated[int, typer.Option(help="Candidates n pre-selected per query.")]
Queries = Annotated[int, typer.Option(help="Test queries (held out of the demonstration pool).")]
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
        help="How cluster search fills the k-2 middle positions: rank (best-ranked rest) | "
        "labels (best-ranked rest, labels missing from the prompt first)."
    ),
]
MaxEvaluations = Annotated[
    int, typer.Option(help="Refuse searches needing more model evaluations.")
]

CLUSTER_KEYS = (
    "silhouette, purity, distance_ratio (each {first, last, middle}), their *_ci95 "
    "half-widths, by_position, chance_purity, pattern, orderings_per_draw, draws, k, layer, "
    "draw_examples, model, task, template, label_words, label_tokens, chance"
)
RANK_KEYS = (
    "rank_vs_exhaustive {method: mean_percentile, median_rank, mean_regret_nats, "
    "optimum_found, same_first_last, same_prediction, organisations_per_query}"
)
SEARCH_KEYS = (
    "accuracy, evaluations, evaluations_per_query, exhaustive_evaluations_per_query, "
    "cluster_evaluations_per_query, evaluations_saved_vs_exhaustive, mean_entropy, "
    "per_query, method, middle, k, candidates, queries, selection, fixed_set, model, task, "
    "template, label_words, label_tokens, chance; with --compare also comparison; with "
    f"exhaustive compared also accuracy_difference_vs_exhaustive and {RANK_KEYS}"
)
ANALYSIS_KEYS = (
    "silhouette, purity, distance_ratio ({first, last, middle}), *_ci95, by_position, "
    "pattern, chance_purity, search {comparison {cluster, exhaustive, random: accuracy, "
    "evaluations}, evaluations_saved_vs_exhaustive, accuracy_difference_vs_exhaustive, "
    "rank_vs_exhaustive}, model, task, template, chance"
)
TIMING_KEYS = "timings: scoring_s (scoring only, model loading excluded), scoring_<method>_s"


def _fmt(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.3f}"


def _render_cluster(console, results) -> None:
    from rich.table import Table

    table = Table(
        title=f"prompt-embedding clusters by position ({results['model']}, "
        f"{results['task']}, k={results['k']}, {results['draws']} draws)"
    )
    for col in ("partition by", "silhouette", "± 95% CI", "purity", "± 95% CI", "intra/inter"):
        table.add_column(col, justify="right")
    for part in ("first", "last", "middle"):
        table.add_row(
            part,
            _fmt(results["silhouette"][part]),
            _fmt(results["silhouette_ci95"][part]),
            _fmt(results["purity"][part]),
            _fmt(results["purity_ci95"][part]),
            _fmt(results["distance_ratio"][part]),
        )
    console.print(table)
    console.print(
        f"measured order (silhouette): {results['pattern']}; purity chance "
        f"1/k = {results['chance_purity']:.3f}"
    )


def _search_rows(results: dict, timings: dict) -> list[dict]:
    """One table row per method: accuracy, evaluations, scoring time."""
    methods = results.get("comparison") or {results["method"]: results}
    return [
        {
            "method": method,
            "accuracy": f"{r['accuracy']:.3f}",
            "evaluations": f"{r['evaluations']:,}",
            "per query": f"{r['evaluations'] / results['queries']:,.0f}",
            "scoring s": f"{timings.get(f'scoring_{method}_s', float('nan')):.2f}",
        }
        for method, r in methods.items()
    ]


def _rank_lines(results: dict) -> list[str]:
    """Where each method's picks rank among all the exhaustive organisations."""
    return [
        f"{method}: its pick has on average {100 * r['mean_percentile']:.1f}% of the "
        f"{r['organisations_per_query']:,} exhaustive organisations below it in entropy "
        f"(median rank {r['median_rank']:,.0f}; the optimum on {100 * r['optimum_found']:.0f}%"
        f" of queries; regret {r['mean_regret_nats']:.3f} nats)"
        for method, r in results.get("rank_vs_exhaustive", {}).items()
    ]


def _render_search(console, results, timings: dict) -> None:
    from iclr25.output import rows_table

    console.print(
        rows_table(
            _search_rows(results, timings),
            title=f"demonstration search ({results.get('model', '')}, "
            f"k={results['k']} of n={results['candidates']}, "
            f"{results['queries']} queries, chance {results.get('chance', 0):.2f})",
        )
    )
    saved = results["evaluations_saved_vs_exhaustive"]
    line = f"evaluations saved vs exhaustive: {100 * saved:.1f}%"
    if "time_saved_vs_exhaustive" in timings:
        line += f"; scoring time saved: {100 * timings['time_saved_vs_exhaustive']:.1f}%"
    elif results["method"] != "exhaustive":
        line += " (add --compare exhaustive to measure the time saved and the rank)"
    if "accuracy_difference_vs_exhaustive" in results:
        line += f"; accuracy difference: {results['accuracy_difference_vs_exhaustive']:+.3f}"
    console.print(line)
    for rank_line in _rank_lines(results):
        console.print(rank_line)


def _save_cluster_plots(run: Run, projection: dict, results: dict) -> None:
    if not run.wants_artifacts or not projection:
        return
    from iclr25.core.icl_order.plots import position_figure, projection_figure

    run.save_plot(
        projection_figure(projection, f"orderings of one draw, k={results['k']}"), "projection.png"
    )
    run.save_plot(
        position_figure(results["by_position"], results["chance_purity"]), "positions.png"
    )


def _save_search_artifacts(run: Run, results: dict) -> None:
    if not run.wants_artifacts:
        return
    import json

    from iclr25 import atomic

    lines = "".join(json.dumps(r) + "\n" for r in results["per_query"])
    atomic.write_text(run.artifact_path("per_query.jsonl"), lines)
    if "comparison" in results:
        from iclr25.core.icl_order.plots import search_figure

        run.save_plot(
            search_figure(
                results["comparison"],
                results["exhaustive_evaluations_per_query"],
                results["queries"],
            ),
            "search.png",
        )


def _label_records(records: list[dict], words: tuple[str, ...]) -> None:
    for r in records:
        r["predicted_label"] = words[r["predicted"]]
        r["gold_label"] = words[r["gold"]]


def _methods(method: str, compare: str) -> tuple[str, ...]:
    others = (m.strip() for m in compare.split(",") if m.strip())
    return tuple(dict.fromkeys((method, *others)))


app = typer.Typer(
    no_args_is_help=False,  # a bare `iclr25 icl-order` runs the default analysis
    help=HELP + " Bare `iclr25 icl-order` runs the whole analysis on the embedded model.",
    epilog=f"JSON results of the bare analysis: {ANALYSIS_KEYS}. {TIMING_KEYS}. Plots with "
    "--out: projection.png, positions.png, search.png; per_query.jsonl.",
)


@with_source_options
def analysis(
    k: K = 4,
    candidates: Candidates = 8,
    queries: Queries = 50,
    draws: Annotated[
        int, typer.Option(help="(query, demonstration set) draws for clustering.")
    ] = 20,
    quick: Annotated[
        bool, typer.Option(help="Fewer draws (8) and queries (16): a demo in seconds.")
    ] = False,
    selection: Selection = "random",
    middle: Middle = "rank",
    max_evaluations: MaxEvaluations = 2_000_000,
    *,
    source: Source,
    run: Run,
) -> None:
    """Run the whole analysis: clustering by position, then cluster vs exhaustive search."""
    from iclr25.core.icl_order.analysis import AnalysisConfig, planned_work, run_analysis
    from iclr25.core.icl_order.cluster_analysis import ClusterConfig
    from iclr25.core.icl_order.search import SearchConfig

    if quick:
        draws, queries = min(draws, 8), min(queries, 16)
    cfg = AnalysisConfig(
        ClusterConfig(k=k, draws=draws, projection="pca"),  # PCA: no UMAP start-up cost
        SearchConfig(
            method="cluster",
            k=k,
            n_candidates=candidates,
            queries=queries,
            selection=selection,
            max_evaluations=max_evaluations,
            middle=middle,
        ),
    )
    total = planned_work(cfg)  # validates both configs before the model loads
    lm, encoded, context, model_cfg = load_source(run, source)
    with run.timer("scoring_s"), run.progress("icl-order analysis", total) as advance:
        outcome = run_analysis(lm, encoded, cfg, run.seed, run.device.kind, advance, run.log)
    run.timings.update({key: v for key, v in outcome.timings.items() if key != "scoring_s"})
    results = {**context, **outcome.results}
    _save_cluster_plots(run, outcome.projection, results)
    _label_records(outcome.search_results["per_query"], encoded.label_words)
    _save_search_artifacts(run, outcome.search_results)

    def render(console, res) -> None:
        _render_cluster(console, res)
        _render_search(console, {**outcome.search_results, **context}, run.timings)

    run.finish(results, {"model": model_cfg, "analysis": cfg}, render)


analysis.__doc__ += f"\n\nJSON results: {ANALYSIS_KEYS}. {TIMING_KEYS}."
app.callback(invoke_without_command=True)(with_common_options(analysis))


@command(
    app,
    "cluster",
    epilog=f"JSON results: {CLUSTER_KEYS}. Plots with --out: "
    "projection.png (colour = first, marker = last demonstration), positions.png.",
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
    _save_cluster_plots(run, outcome.projection, results)
    run.finish(results, {"model": model_cfg, "cluster": cfg}, _render_cluster)


@command(
    app,
    "search",
    epilog=f"JSON results: {SEARCH_KEYS}. {TIMING_KEYS}; with --compare "
    "exhaustive also time_saved_vs_exhaustive (a fraction). Artifacts with --out: "
    "per_query.jsonl, search.png.",
)
@with_source_options
def search(
    method: Annotated[str, typer.Option(help="random | exhaustive | cluster.")] = "cluster",
    k: K = 4,
    candidates: Candidates = 8,
    queries: Queries = 50,
    selection: Selection = "random",
    middle: Middle = "rank",
    fixed_set: Annotated[
        bool, typer.Option(help="Order a fixed set of k (k! orders) instead of choosing k of n.")
    ] = False,
    compare: Annotated[
        str,
        typer.Option(
            help="Also run these methods on the same queries, e.g. 'exhaustive,random' "
            "(with exhaustive: the rank of each method's choice among all organisations)."
        ),
    ] = "",
    max_evaluations: MaxEvaluations = 2_000_000,
    prefix_cache: Annotated[
        bool,
        typer.Option(help="Score through the KV-cache prefix tree (else one forward per prompt)."),
    ] = True,
    *,
    source: Source,
    run: Run,
) -> None:
    """Choose and order k of n demonstrations per query by the self-adaptive entropy."""
    from iclr25.core.icl_order.search import SearchConfig, planned_evaluations, run_search

    methods = _methods(method, compare)
    cfg = SearchConfig(
        method=method,
        k=k,
        n_candidates=candidates,
        queries=queries,
        selection=selection,
        fixed_set=fixed_set,
        max_evaluations=max_evaluations,
        prefix_cache=prefix_cache,
        middle=middle,
    )
    total = planned_evaluations(cfg, methods)  # validates before the model loads
    lm, encoded, context, model_cfg = load_source(run, source)
    if prefix_cache and lm.cache_keyword is None:
        run.warn("this model takes no key/value cache; scoring one forward per prompt")
    with run.progress(f"{method} search", total) as advance:
        outcome = run_search(lm, encoded, cfg, run.seed, methods[1:], advance, run.log)
    run.timings.update(outcome.timings)
    results = {**context, **outcome.results}
    _label_records(results["per_query"], encoded.label_words)
    _save_search_artifacts(run, results)
    run.finish(
        results,
        {"model": model_cfg, "search": cfg, "compare": list(methods[1:])},
        lambda console, res: _render_search(console, res, run.timings),
    )


def _headline(doc: dict) -> str:
    r = doc["results"]
    comp = r["search"]["comparison"]
    rank = r["search"]["rank_vs_exhaustive"]["cluster"]
    return (
        f"silhouette first {r['silhouette']['first']:.2f} / last {r['silhouette']['last']:.2f} "
        f"/ middle {r['silhouette']['middle']:.2f}; cluster acc {comp['cluster']['accuracy']:.2f}"
        f" vs exhaustive {comp['exhaustive']['accuracy']:.2f} with "
        f"{100 * r['search']['evaluations_saved_vs_exhaustive']:.0f}% fewer evaluations "
        f"(its pick in the top {100 * rank['mean_percentile']:.0f}% on average)"
    )


DEMO = (DemoStep("icl-order analysis", ("icl-order", "--quick"), _headline, timeout_s=180.0),)

"""`iclr25 icl-order`: demonstration-order clustering and quadratic-time order search.

Bare ``iclr25 icl-order [--model PATH]`` runs the whole analysis (clustering summary and
cluster-based vs exhaustive search); ``cluster`` and ``search`` run each part alone.
Thin layer: options -> config dataclasses -> ``iclr25.core.icl_order`` -> render.
"""

from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.runner import Run, command, require, with_common_options

NAME = "icl-order"
HELP = (
    "Measure how prompt embeddings cluster by demonstration order; search demonstration "
    "orders in quadratic time (Pham et al., ICLR 2025)."
)

# -- options shared by the three entry points ------------------------------------------
_MODEL = "Model"
_TASK = "Task"
Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Causal LM folder (or hub id with --allow-download); default: the embedded model.",
        rich_help_panel=_MODEL,
        show_default=False,
    ),
]
Dtype = Annotated[
    str,
    typer.Option(
        help="auto|float32|float16|bfloat16 (auto: float32 on CPU).", rich_help_panel=_MODEL
    ),
]
BatchSize = Annotated[int, typer.Option(help="Sequences per forward pass.", rich_help_panel=_MODEL)]
TrustRemoteCode = Annotated[
    bool,
    typer.Option(
        help="Run code shipped with the model (only for code you trust).", rich_help_panel=_MODEL
    ),
]
AllowDownload = Annotated[
    bool,
    typer.Option(
        help="Let transformers download a hub id (local files only otherwise).",
        rich_help_panel=_MODEL,
    ),
]
Task = Annotated[
    str | None,
    typer.Option(
        help="symbolic | symbolic-binary | categories, or a .jsonl/.csv file (text, label).",
        rich_help_panel=_TASK,
        show_default=False,
    ),
]
Template = Annotated[
    str | None,
    typer.Option(
        help="Prompt template with {text} then {label}; \\n is a newline. Default: "
        "'{text} {label}\\n' for built-in tasks, 'Input: {text}\\nLabel: {label}\\n' for files.",
        rich_help_panel=_TASK,
        show_default=False,
    ),
]
LabelWords = Annotated[
    str | None,
    typer.Option(
        help="Map label values to words, e.g. '0=negative,1=positive'.",
        rich_help_panel=_TASK,
        show_default=False,
    ),
]
TextColumn = Annotated[
    str, typer.Option(help="Column/field with the input text.", rich_help_panel=_TASK)
]
LabelColumn = Annotated[
    str, typer.Option(help="Column/field with the label.", rich_help_panel=_TASK)
]
K = Annotated[int, typer.Option("--k", help="Demonstrations per prompt.")]

CLUSTER_KEYS = (
    "silhouette, purity, distance_ratio (each {first, last, middle}), their *_ci95 "
    "half-widths, by_position, chance_purity, pattern, orderings_per_draw, draws, k, layer, "
    "draw_examples, model, task"
)
SEARCH_KEYS = (
    "accuracy, evaluations, evaluations_per_query, exhaustive_evaluations_per_query, "
    "cluster_evaluations_per_query, evaluations_saved_vs_exhaustive, mean_entropy, "
    "per_query, method, k, candidates, queries, selection, fixed_set, model, task, chance; "
    "with --compare also comparison and accuracy_difference_vs_exhaustive"
)
ANALYSIS_KEYS = (
    "silhouette, purity, distance_ratio ({first, last, middle}), *_ci95, by_position, "
    "pattern, chance_purity, search {comparison {cluster, exhaustive, random: accuracy, "
    "evaluations}, evaluations_saved_vs_exhaustive, accuracy_difference_vs_exhaustive}, "
    "model, task, chance"
)
TIMING_KEYS = "timings: scoring_s (scoring only, model loading excluded), scoring_<method>_s"


def _load(
    run: Run,
    model,
    dtype,
    batch_size,
    trust_remote_code,
    allow_download,
    task,
    template,
    label_words,
    text_column,
    label_column,
):
    """Model, task and encoded prompts (the heavy imports happen here)."""
    from iclr25.core.icl_order.models import ModelConfig, load_model
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import Template as PromptTemplate
    from iclr25.core.icl_order.tasks import parse_label_words, resolve_task

    prompt = PromptTemplate.from_cli(template) if template is not None else None
    task_obj = resolve_task(
        task, run.seed, prompt, parse_label_words(label_words), text_column, label_column
    )
    cfg = ModelConfig(model, dtype, run.device.kind, batch_size, trust_remote_code, allow_download)
    with run.timer("load_s"):
        lm = load_model(cfg)
    encoded = encode_task(lm.tokenizer, task_obj)
    if model is None and task_obj.name not in ("symbolic", "symbolic-binary", "categories"):
        run.warn("the embedded model only knows its synthetic world; pass --model for real text")
    context = {
        "model": cfg.name,
        "task": task_obj.name,
        "label_words": list(task_obj.label_words),
        "chance": task_obj.chance,
    }
    return lm, encoded, context, cfg


def _fmt(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.3f}"


def _render_cluster(console, results) -> None:
    from rich.table import Table

    table = Table(
        title=f"prompt-embedding clusters by position ({results['model']}, "
        f"{results['task']}, k={results['k']}, {results['draws']} draws)"
    )
    for col in ("partition by", "silhouette", "± 95% CI", "purity", "± 95% CI", "intra/inter"):
        table.add_column(col)
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


def _render_search(console, results, timings: dict) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "method": results["method"],
            "accuracy": results["accuracy"],
            "evaluations": results["evaluations"],
            "per query": results["evaluations_per_query"],
        }
    ]
    if "comparison" in results:
        rows = [
            {
                "method": m,
                "accuracy": r["accuracy"],
                "evaluations": r["evaluations"],
                "per query": r["evaluations"] / results["queries"],
                "scoring s": timings.get(f"scoring_{m}_s", float("nan")),
            }
            for m, r in results["comparison"].items()
        ]
    console.print(
        rows_table(
            rows,
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
        line += " (add --compare exhaustive to measure the time saved)"
    if "accuracy_difference_vs_exhaustive" in results:
        line += f"; accuracy difference: {results['accuracy_difference_vs_exhaustive']:+.3f}"
    console.print(line)


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


app = typer.Typer(
    no_args_is_help=False,  # a bare `iclr25 icl-order` runs the default analysis
    help=HELP + " Bare `iclr25 icl-order` runs the whole analysis on the embedded model.",
    epilog=f"JSON results of the bare analysis: {ANALYSIS_KEYS}. {TIMING_KEYS}. Plots with "
    "--out: projection.png, positions.png, search.png; per_query.jsonl.",
)


def analysis(
    model: Model = None,
    task: Task = None,
    k: K = 4,
    candidates: Annotated[int, typer.Option(help="Candidates n per query for the search.")] = 8,
    queries: Annotated[int, typer.Option(help="Test queries for the search.")] = 50,
    draws: Annotated[
        int, typer.Option(help="(query, demonstration set) draws for clustering.")
    ] = 20,
    quick: Annotated[
        bool, typer.Option(help="Fewer draws (8) and queries (16): a demo in seconds.")
    ] = False,
    selection: Annotated[
        str, typer.Option(help="Candidate pre-selection: random | similar | shared.")
    ] = "random",
    max_evaluations: Annotated[
        int, typer.Option(help="Refuse searches needing more model evaluations.")
    ] = 2_000_000,
    template: Template = None,
    label_words: LabelWords = None,
    text_column: TextColumn = "text",
    label_column: LabelColumn = "label",
    dtype: Dtype = "auto",
    batch_size: BatchSize = 64,
    trust_remote_code: TrustRemoteCode = False,
    allow_download: AllowDownload = False,
    *,
    run: Run,
) -> None:
    """Run the whole analysis: clustering by position, then cluster vs exhaustive search."""
    from iclr25.core.icl_order.analysis import AnalysisConfig, run_analysis
    from iclr25.core.icl_order.cluster_analysis import ClusterConfig
    from iclr25.core.icl_order.cluster_analysis import validate as validate_cluster
    from iclr25.core.icl_order.search import SearchConfig
    from iclr25.core.icl_order.search import validate as validate_search

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
        ),
    )
    validate_cluster(cfg.cluster)
    validate_search(cfg.search)
    lm, encoded, context, model_cfg = _load(
        run,
        model,
        dtype,
        batch_size,
        trust_remote_code,
        allow_download,
        task,
        template,
        label_words,
        text_column,
        label_column,
    )
    with run.timer("scoring_s"), run.progress("icl-order analysis") as advance:
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
def cluster(
    model: Model = None,
    task: Task = None,
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
    template: Template = None,
    label_words: LabelWords = None,
    text_column: TextColumn = "text",
    label_column: LabelColumn = "label",
    dtype: Dtype = "auto",
    batch_size: BatchSize = 64,
    trust_remote_code: TrustRemoteCode = False,
    allow_download: AllowDownload = False,
    *,
    run: Run,
) -> None:
    """Embed every ordering of k demonstrations and measure clustering by position."""
    import numpy as np

    from iclr25.core.icl_order.cluster_analysis import ClusterConfig, analyze_clustering, validate

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
    validate(cfg)
    lm, encoded, context, model_cfg = _load(
        run,
        model,
        dtype,
        batch_size,
        trust_remote_code,
        allow_download,
        task,
        template,
        label_words,
        text_column,
        label_column,
    )
    rng = np.random.default_rng([run.seed, 0])
    with run.timer("scoring_s"), run.progress("embedding orderings") as advance:
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
def search(
    model: Model = None,
    task: Task = None,
    method: Annotated[str, typer.Option(help="random | exhaustive | cluster.")] = "cluster",
    k: K = 4,
    candidates: Annotated[int, typer.Option(help="Candidates n pre-selected per query.")] = 8,
    queries: Annotated[
        int, typer.Option(help="Test queries (held out of the demonstration pool).")
    ] = 50,
    selection: Annotated[
        str,
        typer.Option(
            help="random | similar (cosine of the model's embeddings) | shared (one "
            "candidate set for all queries)."
        ),
    ] = "random",
    fixed_set: Annotated[
        bool, typer.Option(help="Order a fixed set of k (k! orders) instead of choosing k of n.")
    ] = False,
    compare: Annotated[
        str,
        typer.Option(help="Also run these methods on the same queries, e.g. 'exhaustive,random'."),
    ] = "",
    max_evaluations: Annotated[
        int, typer.Option(help="Refuse searches needing more model evaluations.")
    ] = 2_000_000,
    prefix_cache: Annotated[
        bool,
        typer.Option(help="Score through the KV-cache prefix tree (else one forward per prompt)."),
    ] = True,
    template: Template = None,
    label_words: LabelWords = None,
    text_column: TextColumn = "text",
    label_column: LabelColumn = "label",
    dtype: Dtype = "auto",
    batch_size: BatchSize = 64,
    trust_remote_code: TrustRemoteCode = False,
    allow_download: AllowDownload = False,
    *,
    run: Run,
) -> None:
    """Choose and order k of n demonstrations per query by the self-adaptive entropy."""
    from dataclasses import replace

    from iclr25.core.icl_order.search import SearchConfig, run_search, validate

    others = tuple(m.strip() for m in compare.split(",") if m.strip())
    cfg = SearchConfig(
        method=method,
        k=k,
        n_candidates=candidates,
        queries=queries,
        selection=selection,
        fixed_set=fixed_set,
        max_evaluations=max_evaluations,
        prefix_cache=prefix_cache,
    )
    for name in (method, *others):
        validate(replace(cfg, method=name))
    lm, encoded, context, model_cfg = _load(
        run,
        model,
        dtype,
        batch_size,
        trust_remote_code,
        allow_download,
        task,
        template,
        label_words,
        text_column,
        label_column,
    )
    if prefix_cache and lm.cache_keyword is None:
        run.warn("this model takes no key/value cache; scoring one forward per prompt")
    with run.progress(f"{method} search") as advance:
        outcome = run_search(lm, encoded, cfg, run.seed, others, advance, run.log)
    run.timings.update(outcome.timings)
    results = {**context, **outcome.results}
    _label_records(results["per_query"], encoded.label_words)
    _save_search_artifacts(run, results)
    run.finish(
        results,
        {"model": model_cfg, "search": cfg, "compare": list(others)},
        lambda console, res: _render_search(console, res, run.timings),
    )


def _headline(doc: dict) -> str:
    r = doc["results"]
    comp = r["search"]["comparison"]
    return (
        f"silhouette first {r['silhouette']['first']:.2f} / last {r['silhouette']['last']:.2f} "
        f"/ middle {r['silhouette']['middle']:.2f}; cluster acc {comp['cluster']['accuracy']:.2f}"
        f" vs exhaustive {comp['exhaustive']['accuracy']:.2f} with "
        f"{100 * r['search']['evaluations_saved_vs_exhaustive']:.0f}% fewer evaluations"
    )


DEMO = (DemoStep("icl-order analysis", ("icl-order", "--quick"), _headline, timeout_s=180.0),)

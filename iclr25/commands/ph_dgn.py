"""`iclr25 ph-dgn`: port-Hamiltonian deep graph networks (Heilig et al., ICLR 2025).

Thin commands over :mod:`iclr25.core.ph_dgn`: ``energy`` (does the PH-DGN_C step conserve
its Hamiltonian, and is it symplectic?), ``sensitivity`` (source-to-target gradients at
initialisation), ``transfer`` (the long-range ``copy`` task against GCN, GIN, A-DGN,
GraphCON and a node-wise MLP, with pass conditions fixed in code; or the paper's data),
``generate`` (the transfer data as NPZ) and ``fit`` / ``predict`` (any model on your own
graphs: CSV, NPZ or a tensor-only torch/PyG file; node or graph level).
"""

from pathlib import Path
from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command, require

NAME = "ph-dgn"
HELP = "Port-Hamiltonian graph networks: energy conservation and long-range transfer."
app = typer.Typer(no_args_is_help=True, help=HELP)

ALL_MODELS = "phdgn-c,phdgn,gcn,gin,adgn,graphcon,mlp"
QUICK = {"distances": (3, 5), "graphs": (100, 50, 50), "epochs": 60, "seeds": 2}

ENERGY_KEYS = (
    "graph, n_nodes, n_edges, steps, eps, width, rel_energy_error {symplectic, explicit} "
    "(at K/100, K/10, K), drift_ratio_symplectic, growth_ratio_explicit, explicit_diverged, "
    "symplecticity_residual, log_abs_det, explicit_symplecticity_residual, "
    "explicit_log_abs_det, conserved, pass_conditions, damped_rel_energy_change, "
    "damped_max_rise, energy_nonincreasing"
)
TRANSFER_KEYS = (
    "task, cells [model, distance, hops, test_mse (per seed), mean_mse, ci95, val_mse, "
    "params, steps, aggregations_per_forward, identity_mse (official)], "
    "chance_mse {distance: mse}, seeds, pass_conditions, verdict, checks, headline, "
    "saved_models {folder, count} (--save-models)"
)


def _ints(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        values = ()
    require(bool(values), f"{option} {text!r} is not a list of integers", f"e.g. {option} 3,5,10")
    return values


def _graph_counts(text: str) -> tuple[int, int, int]:
    """``--graphs train,val,test``: three positive counts (one check for every verb)."""
    counts = _ints(text, "--graphs")
    require(
        len(counts) == 3 and min(counts) > 0,
        f"--graphs {text!r} needs three positive counts (train, val, test)",
        "e.g. --graphs 500,100,100",
    )
    return counts


@command(app, "energy", epilog=f"JSON results: {ENERGY_KEYS}.")
def energy(
    graph: Annotated[
        Path | None,
        typer.Option("--graph", help="Edge list CSV (header src,dst); else --topology."),
    ] = None,
    undirected: Annotated[
        bool, typer.Option("--undirected", help="Add the reverse of every --graph edge.")
    ] = False,
    topology: Annotated[
        str, typer.Option("--topology", help="line, ring or crossed-ring.")
    ] = "ring",
    distance: Annotated[
        int, typer.Option("--distance", help="Topology size (ring: 2·distance nodes).")
    ] = 6,
    steps: Annotated[int, typer.Option("--steps", help="K steps of each integrator.")] = 1000,
    eps: Annotated[float, typer.Option("--eps", help="Step size ε.")] = 0.1,
    width: Annotated[int, typer.Option("--width", help="d: size of p and of q per node.")] = 4,
    aggregation: Annotated[str, typer.Option("--aggregation", help="sum or gcn.")] = "sum",
    *,
    run: Run,
) -> None:
    """H along symplectic vs explicit Euler (float64), symplecticity of one step, dissipation."""
    from iclr25.core.ph_dgn.energy import EnergyConfig, run_energy
    from iclr25.core.ph_dgn.graphs import AGGREGATIONS
    from iclr25.core.ph_dgn.graphs import topology as make_topology

    require(aggregation in AGGREGATIONS, f"unknown --aggregation {aggregation!r}", "use sum or gcn")
    if graph is not None:
        from iclr25.core.ph_dgn.edges_io import read_edges

        edge_index, n, _ = read_edges(graph, undirected)
        label = f"{graph.name} ({n} nodes)"
    else:
        edge_index, n, _, _ = make_topology(topology, distance)
        label = f"{topology}, distance {distance}"
    cfg = EnergyConfig(edge_index, n, label, steps, eps, width, aggregation, run.seed)
    with run.timer("energy_s"):
        results = run_energy(cfg)
    if not results["conserved"]:
        run.warn("the conservation conditions did not all hold: try a smaller --eps")
    config = {
        "graph": label,
        "steps": steps,
        "eps": eps,
        "width": width,
        "aggregation": aggregation,
    }
    run.finish(results, config, _render_energy)


def _render_energy(console, results) -> None:
    from iclr25.output import rows_table

    errs = results["rel_energy_error"]
    rows = [
        {"integrator": name, **{f"|ΔH|/H₀ @ {k}": v for k, v in errs[name].items()}}
        for name in ("symplectic", "explicit")
    ]
    console.print(
        rows_table(rows, title=f"PH-DGN_C energy, {results['graph']}, ε={results['eps']}")
    )
    console.print(
        f"drift ratio (symplectic) {results['drift_ratio_symplectic']:.3g}; growth (explicit) "
        f"{results['growth_ratio_explicit']}; max|JᵀΩJ−Ω| {results['symplecticity_residual']:.1e}; "
        f"log|det J| {results['log_abs_det']:.1e} → conserved: {results['conserved']}; "
        f"damped (param+, α=1): ΔH/H₀ {results['damped_rel_energy_change']}, "
        f"non-increasing: {results['energy_nonincreasing']}",
        markup=False,
    )


AggregationOpt = Annotated[
    str,
    typer.Option(
        "--aggregation",
        help="PH-DGN models: Φ of both halves (sum or gcn) or one per half (p=gcn,q=sum).",
    ),
]
ReadoutOpt = Annotated[str, typer.Option("--readout", help="PH-DGN models: read out p, q or pq.")]


@command(app, "transfer", epilog=f"JSON results: {TRANSFER_KEYS}.")
def transfer(
    topology: Annotated[
        str, typer.Option("--topology", help="line, ring or crossed-ring.")
    ] = "line",
    distances: Annotated[
        str, typer.Option("--distances", help="Comma-separated distances.")
    ] = "3,5,10",
    models: Annotated[str, typer.Option("--models", help=f"Some of: {ALL_MODELS}.")] = ALL_MODELS,
    variant: Annotated[
        str,
        typer.Option(
            "--variant",
            help="copy, or official (the paper's data: constant target label, MSE over all nodes).",
        ),
    ] = "copy",
    width: Annotated[int, typer.Option("--width", help="Hidden width d of every model.")] = 16,
    depth: Annotated[
        int | None, typer.Option("--depth", help="L layers/steps (default: distance).")
    ] = None,
    eps: Annotated[float, typer.Option("--eps", help="ε of PH-DGN, A-DGN, GraphCON.")] = 0.2,
    lr: Annotated[float, typer.Option("--lr", help="Adam learning rate.")] = 3e-3,
    epochs: Annotated[int, typer.Option("--epochs", help="Full-batch epochs.")] = 300,
    graphs: Annotated[
        str, typer.Option("--graphs", help="Train,val,test graph counts.")
    ] = "500,100,100",
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds (≥ 3 for a verdict).")] = 3,
    quick: Annotated[
        bool, typer.Option("--quick", help="Distances 3,5, 2 seeds, small: no verdict.")
    ] = False,
    save_models: Annotated[
        Path | None,
        typer.Option(
            "--save-models",
            help="Write every trained model (safetensors + JSON) into this folder, for "
            "`sensitivity --load-models`.",
        ),
    ] = None,
    aggregation: AggregationOpt = "sum",
    readout: ReadoutOpt = "pq",
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """The copy task: carry the source's value to the target; MSE at the target vs chance."""
    from iclr25 import parallel_options
    from iclr25.core.ph_dgn import saved
    from iclr25.core.ph_dgn.transfer import TransferConfig, headline, summarise, tasks
    from iclr25.parallel import run_tasks

    counts = _graph_counts(graphs)
    sizes = QUICK if quick else {"distances": _ints(distances, "--distances"), "graphs": counts}
    names = tuple(m.strip() for m in models.split(",") if m.strip())
    cfg = TransferConfig(
        topology, variant, models=names, width=width, depth=depth, eps=eps, lr=lr,
        **{"epochs": epochs, "seeds": seeds, **sizes}, quick=quick,
        aggregation=aggregation, readout=readout,
    )  # fmt: skip
    if save_models is not None:
        saved.check_target(save_models, run.options.overwrite)
    task_list = tasks(cfg, run.seed, keep_state=save_models is not None)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    with (
        run.progress("model × distance × seed", total=len(task_list)) as advance,
        run.timer("train_s"),
    ):
        outcome = run_tasks(task_list, execution, command="ph-dgn transfer", on_done=advance)
    parallel_options.report(run, outcome)
    results = summarise(cfg, task_list, outcome.results)
    results["headline"] = headline(results)
    results["saved_models"] = None
    if save_models is not None:
        names = saved.write(save_models, saved.entries(task_list, outcome.results))
        results["saved_models"] = {"folder": str(save_models), "count": len(names)}
    if quick:
        run.warn("quick: no verdict (2 seeds, distances 3 and 5, 100 training graphs, 60 epochs)")
    run.finish(results, cfg, _render_transfer)


SENSITIVITY_KEYS = (
    "log10_sensitivity {model: {distance: value}}, log10_slope, distances, seeds, trained "
    "(+ topologies with --load-models)"
)


@command(app, "sensitivity", epilog=f"JSON results: {SENSITIVITY_KEYS}.")
def sensitivity(
    distances: Annotated[str, typer.Option("--distances", help="Line lengths.")] = "3,5,10,20,50",
    models: Annotated[str, typer.Option("--models", help=f"Some of: {ALL_MODELS}.")] = ALL_MODELS,
    width: Annotated[int, typer.Option("--width", help="Hidden width d.")] = 16,
    eps: Annotated[float, typer.Option("--eps", help="ε of the ODE-based models.")] = 0.2,
    seeds: Annotated[int, typer.Option("--seeds", help="Initialisations per cell.")] = 3,
    load_models: Annotated[
        Path | None,
        typer.Option(
            "--load-models",
            help="Measure the trained models of `transfer --save-models DIR` instead (their "
            "own distances and topology; --models filters).",
        ),
    ] = None,
    *,
    run: Run,
) -> None:
    """‖∂h_target/∂x_source‖ vs distance per model (log10), at initialisation or trained."""
    from iclr25.core.ph_dgn.sensitivity import (
        SensitivityConfig,
        run_saved_sensitivity,
        run_sensitivity,
    )

    if load_models is not None:
        from iclr25.core.ph_dgn import saved
        from iclr25.core.ph_dgn.models import check_models

        wanted = check_models([m.strip() for m in models.split(",") if m.strip()])
        loaded = [(meta, m) for meta, m in saved.read(load_models) if meta["model"] in wanted]
        require(bool(loaded), f"--load-models {load_models}: none of --models {models}",
                "pass --models naming a saved model")  # fmt: skip
        with run.progress("saved model", total=len(loaded)) as advance, run.timer("grad_s"):
            results = run_saved_sensitivity(loaded, advance)
        config = {"load_models": str(load_models),
                  "models": sorted({meta["model"] for meta, _ in loaded})}  # fmt: skip
        run.finish(results, config, _render_sensitivity)
        return
    names = tuple(m.strip() for m in models.split(",") if m.strip())
    cfg = SensitivityConfig(_ints(distances, "--distances"), names, width, eps, seeds)
    total = len(names) * len(cfg.distances) * seeds
    with run.progress("model × distance × seed", total=total) as advance, run.timer("grad_s"):
        results = run_sensitivity(cfg, run.seed, advance)
    run.finish(results, cfg, _render_sensitivity)


def _render_sensitivity(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {"model": m, **{f"d={d}": v for d, v in row.items()}, "slope": results["log10_slope"][m]}
        for m, row in results["log10_sensitivity"].items()
    ]
    when = "trained (--load-models)" if results.get("trained") else "at initialisation"
    console.print(rows_table(rows, title=f"log10 ‖∂h_target/∂x_source‖ {when}"))


@command(app, "generate", epilog="JSON results: files, task, variant, topology, distance, graphs.")
def generate(
    task: Annotated[
        str,
        typer.Option("--task", help="transfer, or sssp / eccentricity / diameter (property)."),
    ] = "transfer",
    variant: Annotated[str, typer.Option("--variant", help="copy or official.")] = "copy",
    topology: Annotated[
        str, typer.Option("--topology", help="line, ring or crossed-ring.")
    ] = "line",
    distance: Annotated[int, typer.Option("--distance", help="Transfer distance.")] = 10,
    graphs: Annotated[
        str, typer.Option("--graphs", help="Train,val,test graph counts.")
    ] = "500,100,100",
    *,
    run: Run,
) -> None:
    """Write the data sets as NPZ (train/val/test) into the --out run directory."""
    import io

    import numpy as np

    from iclr25 import atomic
    from iclr25.core.ph_dgn.property_data import TASKS
    from iclr25.core.ph_dgn.transfer_data import VARIANTS

    require(run.wants_artifacts, "generate needs --out DIR", "pass --out DIR for the NPZ files")
    require(
        task == "transfer" or task in TASKS,
        f"unknown --task {task!r}",
        f"use transfer or one of: {', '.join(TASKS)}",
    )
    require(variant in VARIANTS, f"unknown --variant {variant!r}", "use copy or official")
    counts = _graph_counts(graphs)
    files = []
    for split, arrays in zip(("train", "val", "test"), _splits(task, variant, topology,
                             distance, counts, run.seed), strict=True):  # fmt: skip
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        atomic.write_bytes(run.artifact_path(f"{split}.npz"), buffer.getvalue())
        files.append(f"{split}.npz")
    results = {"files": files, "task": task}
    if task == "transfer":
        results.update({"variant": variant, "topology": topology, "distance": distance})
    run.finish({**results, "graphs": list(counts)})


def _splits(task, variant, topology, distance, counts, seed):
    """NumPy arrays of each split, as ``transfer`` / ``property`` use them for seed 0."""
    from iclr25.parallel import derive_seed

    if task == "transfer":
        from iclr25.core.ph_dgn.transfer_data import make_data, to_arrays

        base = derive_seed(seed, "data", topology, distance, 0) % 2**62  # as transfer seed 0
        for i, size in enumerate(counts):
            yield to_arrays(make_data(variant, topology, distance, size, base + i), size)
        return
    from iclr25.core.ph_dgn.property_data import make_split, normalise

    base = derive_seed(seed, "property-data", task, 0) % 2**31  # as property seed 0
    splits = [make_split(task, size, base + i) for i, size in enumerate(counts)]
    normalise(splits)
    for s in splits:
        yield {k: s[k].numpy() for k in ("edge_index", "x", "y", "batch")}


PROPERTY_KEYS = (
    "task, level, log10_mse {model: mean, ci95, per_seed, val_mean, params}, "
    "mean_predictor_log10_mse, seeds"
)


@command(app, "property", epilog=f"JSON results: {PROPERTY_KEYS}.")
def property_(
    task: Annotated[
        str, typer.Option("--task", help="sssp, eccentricity (node) or diameter (graph).")
    ] = "sssp",
    models: Annotated[str, typer.Option("--models", help=f"Some of: {ALL_MODELS}.")] = ALL_MODELS,
    width: Annotated[int, typer.Option("--width", help="Hidden width d of every model.")] = 16,
    depth: Annotated[int, typer.Option("--depth", help="L layers / shared steps.")] = 10,
    eps: Annotated[float, typer.Option("--eps", help="ε of the ODE-based models.")] = 0.2,
    lr: Annotated[float, typer.Option("--lr", help="Adam learning rate.")] = 3e-3,
    epochs: Annotated[int, typer.Option("--epochs", help="Full-batch epochs.")] = 300,
    graphs: Annotated[
        str, typer.Option("--graphs", help="Train,val,test graph counts.")
    ] = "500,100,100",
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds (data and initialisation).")] = 3,
    aggregation: AggregationOpt = "sum",
    readout: ReadoutOpt = "pq",
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Graph properties on the PNA mixture (25–35 nodes): log10 MSE per model."""
    from iclr25 import parallel_options
    from iclr25.core.ph_dgn.property import PropertyConfig, summarise, tasks
    from iclr25.parallel import run_tasks

    counts = _graph_counts(graphs)
    names = tuple(m.strip() for m in models.split(",") if m.strip())
    cfg = PropertyConfig(task, names, width, depth, eps, lr, epochs, counts, seeds,
                         aggregation=aggregation, readout=readout)  # fmt: skip
    task_list = tasks(cfg, run.seed)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    with run.progress("model × seed", total=len(task_list)) as advance, run.timer("train_s"):
        outcome = run_tasks(task_list, execution, command="ph-dgn property", on_done=advance)
    parallel_options.report(run, outcome)
    run.finish(summarise(cfg, task_list, outcome.results), cfg, _render_property)


def _render_property(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {"model": m, "log10 MSE": v["mean"], "95% low": v["ci95"][0], "95% high": v["ci95"][1],
         "params": v["params"]}
        for m, v in results["log10_mse"].items()
    ]  # fmt: skip
    title = f"{results['task']} ({results['level']} level), test log10 MSE"
    console.print(rows_table(rows, title=title))
    console.print(f"train-mean predictor: {results['mean_predictor_log10_mse']:.3g}", markup=False)


FIT_KEYS = (
    "model, level, task, metric (mse or accuracy), value (test), baseline_value (train-mean "
    "or majority predictor), scored_split, n_graphs, n_nodes, n_train, n_val, n_test, params, "
    "history [epoch, train_loss, val_metric], saved"
)
PREDICT_KEYS = "model, level, task, n_graphs, n_nodes, predictions, metric, value (with a target)"

EdgesOpt = Annotated[Path | None, typer.Option("--edges", help="Edge list CSV: src,dst[,weight].")]
NodesOpt = Annotated[
    Path | None,
    typer.Option("--nodes", help="Node CSV: node_id[,graph_id][,split], features, target."),
]
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="NPZ (edge_index, x, y, batch) or torch/PyG file (.pt)."),
]
GraphTargetsOpt = Annotated[
    Path | None,
    typer.Option("--graph-targets", help="Graph-level targets CSV: graph_id, --target[, split]."),
]
TargetOpt = Annotated[
    str | None, typer.Option("--target", help="Target column (--nodes or --graph-targets).")
]
UndirectedOpt = Annotated[bool, typer.Option("--undirected", help="Add the reverse of every edge.")]


def _read(data, edges, nodes, target, graph_targets, classification, undirected):
    from iclr25.core.ph_dgn.dataset import load_data

    return load_data(
        data=data, edges=edges, nodes=nodes, target=target, graph_targets=graph_targets,
        classification=classification, undirected=undirected,
    )  # fmt: skip


def _fractions(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    require(len(values) == 3, f"--split {text!r}", "three fractions, e.g. --split 0.8,0.1,0.1")
    return values


@command(app, "fit", epilog=f"JSON results: {FIT_KEYS}.")
def fit(
    edges: EdgesOpt = None,
    nodes: NodesOpt = None,
    target: TargetOpt = None,
    graph_targets: GraphTargetsOpt = None,
    data: DataOpt = None,
    model: Annotated[str, typer.Option("--model", help=f"One of: {ALL_MODELS}.")] = "phdgn-c",
    level: Annotated[str, typer.Option("--level", help="node or graph.")] = "node",
    task: Annotated[str, typer.Option("--task", help="regression or classification.")] = (
        "regression"
    ),
    split: Annotated[
        str, typer.Option("--split", help="Train,val,test fractions, by graph.")
    ] = "0.8,0.1,0.1",
    undirected: UndirectedOpt = False,
    epochs: Annotated[int, typer.Option("--epochs", help="Full-batch Adam epochs.")] = 300,
    width: Annotated[int, typer.Option("--width", help="Hidden width d.")] = 16,
    depth: Annotated[int, typer.Option("--depth", help="L layers / shared steps.")] = 4,
    eps: Annotated[float, typer.Option("--eps", help="ε of the ODE-based models.")] = 0.2,
    lr: Annotated[float, typer.Option("--lr", help="Adam learning rate.")] = 3e-3,
    dampening: Annotated[
        str, typer.Option("--dampening", help="phdgn: D = param, param+, mlp or dgn (α = 1).")
    ] = "param",
    forcing: Annotated[
        str, typer.Option("--forcing", help="phdgn: F = dgn-tanh or mlp-sin (β = 1).")
    ] = "dgn-tanh",
    aggregation: AggregationOpt = "sum",
    readout: ReadoutOpt = "pq",
    save: Annotated[
        Path | None,
        typer.Option("--save", help="Write the model (safetensors) and MODEL.json beside it."),
    ] = None,
    *,
    run: Run,
) -> None:
    """Train a model on your graphs (node or graph level) and score it on the test split."""
    from iclr25.core.ph_dgn import fit as fit_core

    cfg = fit_core.FitConfig(
        model, level, task, _fractions(split), width, depth, eps, lr, epochs,
        dampening=dampening, forcing=forcing, aggregation=aggregation, readout=readout,
    )  # fmt: skip
    if save is not None:
        _check_save(save, run.options.overwrite)
    graphs = _read(data, edges, nodes, target, graph_targets,
                   task == "classification", undirected)  # fmt: skip
    with run.timer("train_s"):
        fitted, results = fit_core.fit(graphs, cfg, run.seed)
    results = {"model": model, "level": level, "task": task, **results, "saved": None}
    if save is not None:
        fit_core.save(fitted, save)
        results["saved"] = str(save)
    run.finish(results, cfg, _render_fit)


def _check_save(path: Path, overwrite: bool) -> None:
    from iclr25.core.ph_dgn.fit import sidecar

    for p in (path, sidecar(path)):
        require(overwrite or not p.exists(), f"--save: {p} exists", "pass --overwrite")
    require(path.parent.is_dir(), f"--save {path}: no folder {path.parent}", "create it first")


def _render_fit(console, results) -> None:
    console.print(
        f"{results['model']} ({results['level']} {results['task']}): {results['metric']} "
        f"{results['value']:.4g} on the {results['scored_split']} split vs "
        f"{results['baseline_value']:.4g} for the baseline predictor; "
        f"{results['n_graphs']} graphs, {results['n_nodes']} nodes, {results['params']} params",
        markup=False,
    )


@command(app, "predict", epilog=f"JSON results: {PREDICT_KEYS}.")
def predict(
    load: Annotated[Path, typer.Option("--load", help="A model written by `fit --save`.")],
    edges: EdgesOpt = None,
    nodes: NodesOpt = None,
    target: TargetOpt = None,
    graph_targets: GraphTargetsOpt = None,
    data: DataOpt = None,
    undirected: UndirectedOpt = False,
    *,
    run: Run,
) -> None:
    """Apply a saved model to graphs (same formats as fit); scores them when labelled."""
    from dataclasses import asdict

    from iclr25.core.ph_dgn import fit as fit_core

    fitted = fit_core.load(load)
    cfg = fitted.cfg
    classification = cfg.task == "classification"
    graphs = _read(data, edges, nodes, target, graph_targets, classification, undirected)
    results = fit_core.predict(fitted, graphs)
    results = {"model": cfg.model, "level": cfg.level, "task": cfg.task, **results}
    if run.wants_artifacts:
        from iclr25 import atomic

        lines = ["row,prediction", *(f"{i},{p}" for i, p in enumerate(results["predictions"]))]
        atomic.write_text(run.artifact_path("predictions.csv"), "\n".join(lines) + "\n")
    run.finish(results, {"load": str(load), **asdict(cfg)})


def _render_transfer(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "model": c["model"],
            "distance": c["distance"],
            "hops": c["hops"],
            "mean MSE": c["mean_mse"],
            "± 95%": (c["ci95"][1] - c["ci95"][0]) / 2,
            "/chance": c["mean_mse"] / results["chance_mse"][str(c["distance"])],
            "params": c["params"],
            "A·x/fwd": c["aggregations_per_forward"],
            **({"identity": c["identity_mse"]} if "identity_mse" in c else {}),
        }
        for c in results["cells"]
    ]
    console.print(rows_table(rows, title=f"graph transfer ({results['task']}), test MSE"))
    console.print(f"verdict: {results['verdict']}", markup=False)


DEMO = (
    DemoStep(
        "ph-dgn energy",
        ("ph-dgn", "energy", "--steps", "300"),
        lambda doc: (
            f"symplectic drift ratio {doc['results']['drift_ratio_symplectic']:.2f} vs explicit "
            f"growth {doc['results']['growth_ratio_explicit'] or float('inf'):.3g}; "
            f"conserved: {doc['results']['conserved']}"
        ),
    ),
    DemoStep(
        "ph-dgn transfer",
        ("ph-dgn", "transfer", "--quick"),
        lambda doc: doc["results"]["headline"],
    ),
)

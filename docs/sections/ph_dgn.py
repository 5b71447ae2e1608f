"""Measured sections of docs/ph-dgn.md (`<!-- generated: ph_dgn.<name> -->`).

- ``energy``: experiments/results/ph-dgn-energy.json (conservation and symplecticity);
- ``sensitivity``: experiments/results/ph-dgn-sensitivity.json (gradients at initialisation);
- ``official``: experiments/results/ph-dgn-transfer-official.json (the paper's data);
- ``transfer``: experiments/results/ph-dgn-transfer.json (the copy task's table and verdict);
- ``transfer_d10``: experiments/results/ph-dgn-transfer-d10.json (distance 10, default budget);
- ``transfer_long``: experiments/results/ph-dgn-transfer-long.json (distances 20 and 50, as
  measured, no verdict);
- ``transfer_d20``: experiments/results/ph-dgn-transfer-d20.json (distance 20 at the
  default budget, as measured);
- ``sweep``: benchmarks/results/ph_dgn_sweep.json (scripts/ph_dgn_sweep.py: line scored,
  ring and crossed-ring alongside);
- ``property``: experiments/results/ph-dgn-property-{diameter,sssp,eccentricity}.json
  (one table: test log10 MSE per model and task, beside the train-mean predictor);
  ``property_full``: the same from ``ph-dgn-property-<task>-full.json`` (the issue's size);
- ``speed``: benchmarks/results/ph_dgn.json (step and aggregation-alone times per side).
"""

from __future__ import annotations

from docs.sections import md_table, num

ENERGY = "experiments/results/ph-dgn-energy.json"
TRANSFER = "experiments/results/ph-dgn-transfer.json"
SENSITIVITY = "experiments/results/ph-dgn-sensitivity.json"
OFFICIAL = "experiments/results/ph-dgn-transfer-official.json"
TRANSFER_D10 = "experiments/results/ph-dgn-transfer-d10.json"
TRANSFER_LONG = "experiments/results/ph-dgn-transfer-long.json"
TRANSFER_D20 = "experiments/results/ph-dgn-transfer-d20.json"
SWEEP = "benchmarks/results/ph_dgn_sweep.json"
PROPERTY = "experiments/results/ph-dgn-property-{}.json"
PROPERTY_FULL = "experiments/results/ph-dgn-property-{}-full.json"
PROPERTY_TASKS = ("diameter", "sssp", "eccentricity")
BENCH = "benchmarks/results/ph_dgn.json"


def render_official(sources) -> str:
    doc = sources.load(OFFICIAL)["document"]
    res, cfg = doc["results"], doc["config"]
    rows = [
        [c["model"], c["distance"], num(c["mean_mse"]),
         f"{num(c['ci95'][0])} – {num(c['ci95'][1])}", num(c["identity_mse"])]
        for c in res["cells"]
    ]  # fmt: skip
    headers = ["model", "distance", "test MSE (all nodes)", "95 % CI", "identity y = x"]
    graphs = "/".join(str(g) for g in cfg["graphs"])
    return "\n".join(
        [
            f"{res['task']}, {res['seeds']} seeds, {graphs} graphs, {cfg['epochs']} epochs:",
            "",
            md_table(rows, headers),
            "",
            f"{res['verdict']}{_checks(res['checks'])}.",
        ]
    )


def render_sensitivity(sources) -> str:
    res = sources.load(SENSITIVITY)["document"]["results"]
    dists = [str(d) for d in res["distances"]]
    rows = [
        [m, *[num(row[d]) if row[d] is not None else "exactly 0" for d in dists],
         num(res["log10_slope"][m]) if res["log10_slope"][m] is not None else "–"]
        for m, row in res["log10_sensitivity"].items()
    ]  # fmt: skip
    headers = ["model", *[f"distance {d}" for d in dists], "slope (decades per node)"]
    return f"Mean over {res['seeds']} seeds of log10 S:\n\n" + md_table(rows, headers)


def render_energy(sources) -> str:
    res = sources.load(ENERGY)["document"]["results"]
    errs = res["rel_energy_error"]
    rows = [[name, *[num(v) for v in errs[name].values()]] for name in ("symplectic", "explicit")]
    headers = ["integrator", *[f"relative energy error at step {k}" for k in errs["symplectic"]]]
    return "\n".join(
        [
            f"{res['graph']} ({res['n_nodes']} nodes), width {res['width']}, ε = {res['eps']}, "
            f"{res['steps']} steps, float64:",
            "",
            md_table(rows, headers),
            "",
            f"Drift ratio (symplectic) {num(res['drift_ratio_symplectic'])}, growth ratio "
            f"(explicit) {num(res['growth_ratio_explicit'])}; one step: max |JᵀΩJ − Ω| "
            f"{num(res['symplecticity_residual'])} and log |det J| {num(res['log_abs_det'])} "
            f"(explicit Euler: {num(res['explicit_symplecticity_residual'])} and "
            f"{num(res['explicit_log_abs_det'])}). **conserved: {res['conserved']}**. "
            f"PH-DGN with D = param+: ΔH/H₀ = {num(res['damped_rel_energy_change'])} over the "
            f"run, non-increasing: {res['energy_nonincreasing']}.",
        ]
    )


def render_transfer(sources, path: str = TRANSFER) -> str:
    doc = sources.load(path)["document"]
    res, cfg = doc["results"], doc["config"]
    rows = [
        [
            c["model"],
            c["distance"],
            c["hops"],
            num(c["mean_mse"]),
            f"{num(c['ci95'][0])} – {num(c['ci95'][1])}",
            num(c["mean_mse"] / res["chance_mse"][str(c["distance"])]),
            c["params"],
            c["aggregations_per_forward"],
        ]
        for c in res["cells"]
    ]
    headers = [
        "model",
        "distance",
        "hops",
        "test MSE",
        "95 % CI",
        "÷ chance",
        "params",
        "A·x per forward",
    ]
    graphs = "/".join(str(g) for g in cfg["graphs"])
    chance = res["chance_mse"].items()
    return "\n".join(
        [
            f"{res['task']}, {res['seeds']} seeds, {graphs} train/val/test graphs, "
            f"{cfg['epochs']} epochs, width {cfg['width']}:",
            "",
            md_table(rows, headers),
            "",
            _per_seed(res),
            "Chance MSE: " + ", ".join(f"distance {d}: {num(v)}" for d, v in chance) + ".",
            f"**Verdict: {res['verdict']}**" + _checks(res["checks"]) + ".",
        ]
    )


def _checks(checks: dict) -> str:
    """'; checks: a = x, b = y' (nothing when a run has no checks, e.g. no verdict)."""
    return "; checks: " + ", ".join(f"{k} = {v}" for k, v in checks.items()) if checks else ""


def _per_seed(res: dict) -> str:
    far = max(c["distance"] for c in res["cells"])
    parts = [
        f"{c['model']} " + ", ".join(num(v) for v in c["test_mse"])
        for c in res["cells"]
        if c["distance"] == far and c["model"].startswith("phdgn")
    ]
    return f"Per-seed test MSE at distance {far}: " + "; ".join(parts) + "."


def render_transfer_d10(sources) -> str:
    return render_transfer(sources, TRANSFER_D10)


def render_transfer_long(sources) -> str:
    """Distances 20 and 50: reported as measured (no verdict)."""
    return render_transfer(sources, TRANSFER_LONG)


def render_transfer_d20(sources) -> str:
    """Distance 20 at the command's default budget: reported as measured (no verdict)."""
    return render_transfer(sources, TRANSFER_D20)


def render_sweep(sources) -> str:
    """One table per topology of the sweep (``÷ chance`` per model and distance)."""
    doc = sources.load(SWEEP)
    parts = [f"**Verdict (line, distance 10): {doc['verdict']}**", ""]
    for topology, block in doc["topologies"].items():
        res = block["results"]
        distances = sorted({c["distance"] for c in res["cells"]})
        cells = {(c["model"], c["distance"]): c for c in res["cells"]}
        models = list(dict.fromkeys(c["model"] for c in res["cells"]))
        rows = [
            [m, *[_ratio(cells[(m, d)], res["chance_mse"][str(d)]) for d in distances]]
            for m in models
        ]
        headers = ["model", *[f"distance {d}: MSE ÷ chance (95 % CI)" for d in distances]]
        scored = "scored" if topology == "line" else "reported, not scored"
        parts += [f"{topology} ({scored}):", "", md_table(rows, headers), ""]
    return "\n".join(parts).rstrip()


def _ratio(cell: dict, chance: float) -> str:
    low, high = (v / chance for v in cell["ci95"])
    return f"{num(cell['mean_mse'] / chance)} ({num(low)} – {num(high)})"


def render_property_full(sources) -> str:
    """The same table from the studies at the issue's size (``ph-dgn-property-<task>-full``)."""
    return render_property(sources, PROPERTY_FULL)


def render_property(sources, pattern: str = PROPERTY) -> str:
    """Test log10 MSE (mean over seeds, 95 % CI) per model and task."""
    docs = {t: sources.load(pattern.format(t))["document"] for t in PROPERTY_TASKS}
    results = {t: d["results"] for t, d in docs.items()}
    models = list(results[PROPERTY_TASKS[0]]["log10_mse"])
    rows = [
        [m, results[PROPERTY_TASKS[0]]["log10_mse"][m]["params"],
         *[_log10_cell(results[t]["log10_mse"][m]) for t in PROPERTY_TASKS]]
        for m in models
    ]  # fmt: skip
    baseline = [num(results[t]["mean_predictor_log10_mse"]) for t in PROPERTY_TASKS]
    rows.append(["train-mean predictor", "–", *baseline])
    sizes = {t: _property_size(docs[t]["config"]) for t in PROPERTY_TASKS}
    cfg = docs[PROPERTY_TASKS[0]]["config"]
    if len(set(sizes.values())) == 1:
        size = sizes[PROPERTY_TASKS[0]]
    else:  # the tasks ran at different sizes: say which is which
        size = "; ".join(f"{t}: {v}" for t, v in sizes.items())
    headers = ["model", "params", *[f"{t} ({results[t]['level']})" for t in PROPERTY_TASKS]]
    return "\n".join(
        [
            f"Test log10 MSE, mean over {results[PROPERTY_TASKS[0]]['seeds']} seeds (95 % "
            f"Student-t interval), lower is better; {size}; width {cfg['width']}, "
            f"ε = {cfg['eps']}, Adam lr {cfg['lr']}:",
            "",
            md_table(rows, headers),
        ]
    )


def _property_size(cfg: dict) -> str:
    graphs = "/".join(str(g) for g in cfg["graphs"])
    return f"{graphs} train/val/test graphs, L = {cfg['depth']}, {cfg['epochs']} full-batch epochs"


def _log10_cell(cell: dict) -> str:
    return f"{num(cell['mean'])} ({num(cell['ci95'][0])} – {num(cell['ci95'][1])})"


def render_speed(sources) -> str:
    """Milliseconds (median process CPU time) per side: the step and A @ x alone."""
    figures = sources.load(BENCH)["figures"]
    sizes = sorted({k.split("_")[0] for k in figures if k[0] == "n" and k.endswith("_ms")}, key=len)
    sides = {"ours": "CSR, cached Aᵀ (ours)", "peer": "gather + index_add_", "pyg": "PyG"}
    rows = []
    for size in sizes:
        step, agg = figures.get(f"{size}_ms", {}), figures.get(f"{size}_aggregation_ms", {})
        for side, label in sides.items():
            if side in step:
                rows.append([f"{int(size[1:]):,}", label, num(step[side]), num(agg.get(side))])
    headers = ["n", "side", "step fwd+bwd, ms CPU", "A·x alone fwd+bwd, ms CPU"]
    ratios = [
        f"n = {int(size[1:]):,}: step {_speedups(figures[f'{size}_ms'])}, A·x alone "
        f"{_speedups(figures.get(f'{size}_aggregation_ms', {}))}{_ceiling(figures, size)}"
        for size in sizes
    ]
    return "\n".join(
        [md_table(rows, headers), "", "Speed-up of ours (peer ÷ ours, 4 digits): "
         + "; ".join(ratios) + "."]
    )  # fmt: skip


def _ceiling(figures: dict, size: str) -> str:
    """The step ratio vs PyG if our four A·x (forward + backward) per step cost nothing."""
    step, agg = figures[f"{size}_ms"], figures.get(f"{size}_aggregation_ms", {})
    if "pyg" not in step or "ours" not in agg:
        return ""
    rest = step["ours"] - 4 * agg["ours"]
    if rest <= 0:  # the A·x-alone timing is noisy next to a step this short
        return (
            " (ceiling vs PyG with a free aggregation: not estimable from this run, four "
            "A·x-alone timings add up to more than our step)"
        )
    return f" (ceiling vs PyG with a free aggregation: {step['pyg'] / rest:.3g}×)"


def _speedups(ms: dict) -> str:
    names = {"pyg": "vs PyG", "peer": "vs index_add_"}
    parts = [f"{label} {ms[s] / ms['ours']:.4g}×" for s, label in names.items() if s in ms]
    return ", ".join(parts) or "—"


SECTIONS = {
    "energy": render_energy,
    "sensitivity": render_sensitivity,
    "official": render_official,
    "transfer": render_transfer,
    "transfer_d10": render_transfer_d10,
    "transfer_long": render_transfer_long,
    "transfer_d20": render_transfer_d20,
    "sweep": render_sweep,
    "property": render_property,
    "property_full": render_property_full,
    "speed": render_speed,
}

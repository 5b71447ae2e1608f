"""How `iclr25 icl-order` shows its results: tables on stdout, plots and JSONL artifacts.

Rendering only; every number comes from the results the core computed.
"""

from __future__ import annotations

import json

from iclr25.runner import Run


def fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None or value != value else f"{value:.{digits}f}"


def fmt_interval(value, interval, scale: float = 1.0, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if not interval:
        return fmt(scale * value, digits)
    low, high = interval
    return f"{fmt(scale * value, digits)} [{fmt(scale * low, digits)}, {fmt(scale * high, digits)}]"


# -- cluster ---------------------------------------------------------------------------
def render_cluster(console, results) -> None:
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
            fmt(results["silhouette"][part]),
            fmt(results["silhouette_ci95"][part]),
            fmt(results["purity"][part]),
            fmt(results["purity_ci95"][part]),
            fmt(results["distance_ratio"][part]),
        )
    console.print(table)
    console.print(
        f"measured order (silhouette; '>' only where the paired 95% interval excludes 0): "
        f"{results['pattern']}; purity chance 1/k = {results['chance_purity']:.3f}"
    )


def save_cluster_plots(run: Run, projection: dict, results: dict) -> None:
    if not run.wants_artifacts or not projection:
        return
    from iclr25.core.icl_order.plots import position_figure, projection_figure

    run.save_plot(
        projection_figure(projection, f"orderings of one draw, k={results['k']}"), "projection.png"
    )
    run.save_plot(
        position_figure(results["by_position"], results["chance_purity"]), "positions.png"
    )


# -- sensitivity -----------------------------------------------------------------------
SENSITIVITY_ROWS = (
    ("accuracy spread across orderings (points)", "accuracy_spread", 100.0, 1),
    ("share of queries that flip with order (%)", "flip_rate", 100.0, 1),
    ("variance between subsets", "variance_between_subsets", 1.0, 4),
    ("variance between orders of one subset", "variance_between_orders", 1.0, 4),
    ("accuracy (mean over orderings)", "accuracy", 1.0, 3),
)


def render_sensitivity(console, results) -> None:
    from iclr25.core.icl_order.sensitivity import order_verdict
    from iclr25.output import rows_table

    rows = [
        {"statistic": label, "value [95% interval]": fmt_interval(
            results[key]["value"], results[key]["interval"], scale, digits
        )}
        for label, key, scale, digits in SENSITIVITY_ROWS
    ]  # fmt: skip
    title = (
        f"order sensitivity ({results.get('model', '')}, {results.get('task', '')}, "
        f"k={results['k']}, {results['draws']} subsets x {results['orderings_per_draw']} "
        f"orders x {results['queries']} queries, chance {results.get('chance', 0):.2f})"
    )
    console.print(rows_table(rows, title=title))
    bias = ", ".join(
        f"{p + 1}: {100 * v:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        for p, (v, (lo, hi)) in enumerate(
            zip(results["position_bias"], results["position_bias_interval"], strict=True)
        )
    )
    console.print(f"copies the label at position (excess over the truth, points): {bias}")
    console.print(order_verdict(results))


# -- search ----------------------------------------------------------------------------
def _search_rows(results: dict, timings: dict) -> list[dict]:
    rows = []
    for method, r in results["comparison"].items():
        row = {
            "method": method,
            "accuracy [95%]": fmt_interval(r["accuracy"], r["interval"]),
            "by seed": " ".join(f"{a:.2f}" for a in r["accuracy_by_seed"]),
            "evaluations": f"{r['evaluations']:,}",
            "scoring s": f"{timings.get(f'scoring_{method}_s', float('nan')):.2f}",
        }
        if "mean_percentile" in r:
            row["pick percentile"] = fmt_interval(
                r["mean_percentile"], r["percentile_interval"], 100.0, 1
            )
        rows.append(row)
    return rows


def render_search(console, results, timings: dict) -> None:
    from iclr25.output import rows_table

    console.print(
        rows_table(
            _search_rows(results, timings),
            title=f"demonstration search ({results.get('model', '')}, {results.get('task', '')}, "
            f"k={results['k']} of n={results['candidates']}, {results['queries']} queries x "
            f"{results['seeds']} seeds, middle rule {results['middle']}, chance "
            f"{results.get('chance', 0):.2f})",
        )
    )
    line = (
        f"evaluations saved vs exhaustive: {100 * results['evaluations_saved_vs_exhaustive']:.1f}%"
    )
    if "time_saved_vs_exhaustive" in timings:
        line += f"; scoring time saved: {100 * timings['time_saved_vs_exhaustive']:.1f}%"
    console.print(line)
    if "pass_conditions" in results:
        console.print(f"hypothesis: {results['hypothesis']}")
        for row in results["pass_conditions"]:
            measured = fmt_interval(row["measured"], row["interval"])
            console.print(f"  {row['condition']}: {measured} -> {row['verdict']}")
    if "verdict" in results:
        console.print(f"verdict: {results['verdict']}")


def label_records(records: list[dict], words: tuple[str, ...]) -> None:
    for r in records:
        r["predicted_label"] = words[r["predicted"]]
        r["gold_label"] = words[r["gold"]]


def save_search_artifacts(run: Run, results: dict) -> None:
    if not run.wants_artifacts:
        return
    from iclr25 import atomic

    lines = "".join(json.dumps(r) + "\n" for r in results["per_query"])
    atomic.write_text(run.artifact_path("per_query.jsonl"), lines)
    if len(results.get("comparison", {})) > 1:
        from iclr25.core.icl_order.plots import search_figure

        run.save_plot(
            search_figure(
                results["comparison"],
                results["exhaustive_evaluations_per_query"],
                results["queries"] * results["seeds"],
            ),
            "search.png",
        )


# -- select ----------------------------------------------------------------------------
def render_select(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "input": r["input"][:40],
            "demonstrations (in order)": " | ".join(d["label"] for d in r["demonstrations"]),
            "prediction": r["prediction"],
            "p": f"{r['probabilities'][r['prediction']]:.2f}",
        }
        for r in results["prompts"][:20]
    ]
    console.print(
        rows_table(
            rows,
            title=f"{results['method']} search: k={results['k']} of n={results['candidates']} "
            f"per input ({results['inputs']} inputs, model {results['model']})",
        )
    )
    if results["inputs"] > 20:
        console.print(f"... {results['inputs'] - 20} more (all of them in prompts.jsonl)")

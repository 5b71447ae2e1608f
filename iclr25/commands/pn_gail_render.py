"""Terminal tables of `iclr25 pn-gail` (the JSON document carries the same numbers)."""

from __future__ import annotations


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _ci(ci) -> str:
    return "—" if not ci else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def render_demos(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "level": _fmt(d.get("level"), 2),
            "return": _fmt(d.get("return_mean"), 1),
            "confidence": _fmt(d["confidence"]),
            "pairs": d["pairs"],
        }
        for d in results["demonstrators"]
    ]
    title = f"pn-gail demos: {results['pairs']} pairs, {results['labeled']} labelled"
    console.print(rows_table(rows, ["level", "return", "confidence", "pairs"], title=title))
    if "saved_to" in results:
        console.print(f"saved to {results['saved_to']}", markup=False)


def render_confidence(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "level": _fmt(d["level"], 2),
            "true r": _fmt(d["true_confidence"]),
            "predicted (unlabelled)": _fmt(d["predicted_mean"]),
            "pairs": d["unlabeled_pairs"],
        }
        for d in results["per_demonstrator"]
    ]
    title = (
        f"{results['classifier']} classifier: MAE {_fmt(results['mae_unlabeled'])}, "
        f"correlation {_fmt(results['correlation'])} on the unlabelled pairs"
    )
    console.print(rows_table(rows, None, title=title) if rows else title, markup=False)


def render_train(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {
            "env steps": p["env_steps"],
            "return": _fmt(p["return_mean"], 1),
            "normalised": _fmt(p["normalized_return"]),
        }
        for p in results["curve"]
    ]
    if rows:
        console.print(rows_table(rows, None, title=f"{results['method']} on {results['env']}"))
    console.print(
        f"normalized_return {_fmt(results['normalized_return'])} (mean at 80–100 % of the "
        f"budget), return {_fmt(results['return_mean'], 1)}, {results['env_steps']:,} env steps",
        markup=False,
    )


def render_fixed_point(console, results) -> None:
    from iclr25.output import rows_table

    rows = []
    for method, closed in results["closed_form"].items():
        learned = results["learned"][method]
        rows.append(
            {
                "method": method,
                "closed form": ", ".join(f"{p:.3f}" for p in closed),
                "learned": ", ".join(f"{p:.3f}" for p in learned),
            }
        )
    console.print(rows_table(rows, None, title="policy fixed points (one state)"))
    console.print(f"max |learned − closed form| = {results['max_abs_error']:.4f}", markup=False)


def render_compare(console, results) -> None:
    from iclr25.output import rows_table

    for setting, block in results["settings"].items():
        rows = [
            {
                "method": m,
                "normalised return": _fmt(v["normalized_return"]["mean"]),
                "95% CI": _ci(v["normalized_return"]["ci95"]),
                "per seed": ", ".join(f"{x:.2f}" for x in v["normalized_return"]["per_seed"]),
            }
            for m, v in block["methods"].items()
        ]
        console.print(rows_table(rows, None, title=f"{setting} demonstrations"))
    rows = [
        {
            "condition": c["name"],
            "rule": c["rule"],
            "value": _fmt(c["value"]),
            "95% CI": _ci(c["ci95"]),
            "passed": _fmt(c["passed"]),
        }
        for c in results["conditions"]
    ]
    console.print(rows_table(rows, None, title="pass conditions (fixed before the run)"))
    if "fixed_point" in results:
        render_fixed_point(console, results["fixed_point"])
    console.print(results["headline"], markup=False)

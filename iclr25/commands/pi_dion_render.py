"""Terminal output of `iclr25 pi-dion compare`."""

from __future__ import annotations


def render_compare(console, results) -> None:
    from iclr25.output import rows_table

    rows = []
    for name in results["methods"]:
        f, u = results["rel_l2_f"][name], results["rel_l2_u"][name]
        rows.append({
            "method": name,
            "rel L² f": f"{f['mean']:.4f} [{f['ci_low']:.4f}, {f['ci_high']:.4f}]",
            "rel L² u": f"{u['mean']:.4f} [{u['ci_low']:.4f}, {u['ci_high']:.4f}]" if u else "—",
            "nMSE f": f"{results['nmse_f'][name]:.4f}",
            "ms/instance": f"{results['inference_ms_per_instance'][name]:.3g}",
        })  # fmt: skip
    if "rel_l2_f_outside" in results:
        for row, name in zip(rows, results["methods"], strict=True):
            row["f outside hull"] = f"{results['rel_l2_f_outside'][name]['mean']:.3f}"
    title = (
        f"pi-dion compare: {results['problem']['pde']}, {results['seeds']} seeds, 95% t-intervals"
    )
    console.print(rows_table(rows, list(rows[0]), title=title))
    console.print(results["verdict"])


def render_compare_darcy(console, results) -> None:
    from iclr25.output import rows_table

    def cell(v):
        return f"{v['mean']:.4f} [{v['ci_low']:.4f}, {v['ci_high']:.4f}]" if v else "—"

    rows = [{"method": name,
             "rel L² a": cell(results["rel_l2_a"][name]),
             "rel L² g": cell(results["rel_l2_g"][name]),
             "rel L² u": cell(results["rel_l2_u"][name]),
             "a near flux zero": f"{results['rel_l2_a_near_flux_zero'][name]['mean']:.3f}",
             "a away": f"{results['rel_l2_a_away'][name]['mean']:.3f}",
             "ms/instance": f"{results['inference_ms_per_instance'][name]:.3g}"}
            for name in results["methods"]]  # fmt: skip
    title = f"pi-dion compare: darcy, {results['seeds']} seeds, 95% t-intervals (no Bayes row)"
    console.print(rows_table(rows, list(rows[0]), title=title))
    console.print(results["verdict"])

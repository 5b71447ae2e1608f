"""The throughput figure gpu-bench writes into ``--out`` (``throughput.png``).

One horizontal bar per (case, implementation): our kernel and each reference, grouped by
case, TFLOP/s on a GPU and GFLOP/s for the CPU references. Bars without a figure (a backend
this machine lacks, a failed kernel) are left out; the table and JSON say why. matplotlib is
imported inside, with the Agg backend, so importing this module costs nothing.
"""

from __future__ import annotations

OURS = "ours"


def bars(rows: list[dict], gpu: bool) -> list[tuple[str, str, float]]:
    """(case label, implementation, value) per bar, cases in table order; values in TFLOP/s
    on a GPU, GFLOP/s on the CPU."""
    scale = 1.0 if gpu else 1e3
    out: list[tuple[str, str, float]] = []
    for case in dict.fromkeys((r["op"], r["shape"]) for r in rows):
        mine = [r for r in rows if (r["op"], r["shape"]) == case]
        label = f"{case[0]} {case[1]}"
        ours = next((r["ours_tflops"] for r in mine if r["ours_tflops"] is not None), None)
        if gpu and ours is not None:
            out.append((label, OURS, ours * scale))
        for r in mine:
            if r["reference"] is not None and r["reference_tflops"] is not None:
                out.append((label, r["reference"], r["reference_tflops"] * scale))
    return out


def throughput_figure(rows: list[dict], gpu: bool):
    """Horizontal bars of :func:`bars`; ours in one colour, references in another."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = bars(rows, gpu)
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.32 * max(1, len(data))))
    labels, y, previous = [], [], None
    for i, (case, name, _) in enumerate(data):
        labels.append(f"{case}  |  {name}" if case != previous else name)
        y.append(-i)
        previous = case
    colours = ["tab:orange" if name == OURS else "tab:blue" for _, name, _ in data]
    ax.barh(y, [value for _, _, value in data], color=colours)
    ax.set_yticks(y, labels, fontsize=7)
    unit = "TFLOP/s" if gpu else "GFLOP/s"
    ax.set_xlabel(f"{unit} (median of the timed calls)")
    where = "our kernels (orange) against the references (blue)" if gpu else "CPU references"
    ax.set_title(f"gpu-bench: {where}", fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    return fig

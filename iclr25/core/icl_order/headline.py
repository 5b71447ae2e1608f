"""One line that sums up a bare ``icl-order`` analysis: used by ``iclr25 demo`` and by the
docs (``docs/sections/icl_order.py``), so both say the same thing from the same results."""

from __future__ import annotations


def headline(results: dict) -> str:
    """Order sensitivity, then cluster search against its controls, plainly."""
    sens = results["sensitivity"]
    flip_low, flip_high = sens["flip_rate"]["interval"]
    parts = [
        f"order flips {100 * sens['flip_rate']['value']:.0f}% of predictions "
        f"[{100 * flip_low:.0f}, {100 * flip_high:.0f}] (spread "
        f"{100 * sens['accuracy_spread']['value']:.0f} points)"
    ]
    if results.get("order_verdict", "").startswith("order changes"):
        parts[0] = results["order_verdict"]
    search = results["search"]
    comp = search["comparison"]
    line = f"cluster acc {comp['cluster']['accuracy']:.2f}"
    for control in ("exhaustive", "sample", "random"):
        if control in comp:
            line += f" vs {control} {comp[control]['accuracy']:.2f}"
    line += f" with {100 * search['evaluations_saved_vs_exhaustive']:.0f}% fewer evaluations"
    parts.append(line)
    significant = [
        name.replace("_vs_", " vs ")
        for name, pair in search.get("paired", {}).items()
        if pair["significant"]
    ]
    parts.append(
        "significant: " + ", ".join(significant)
        if significant
        else "no significant difference at this size"
    )
    return "; ".join(parts)

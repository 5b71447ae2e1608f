"""One-line summaries of results, shared by the CLI, the demo and the generated docs.

Each function takes a command's JSON ``results`` and returns plain text; the demo's
headline and the docs' sentences come from here, so they always say the same thing —
including when an effect did not appear.
"""

from __future__ import annotations


def _n(value) -> str:
    """A count or a figure: thousands separated from 100 up, 3 significant digits below."""
    if value is None:
        return "—"
    if abs(value) >= 100 or isinstance(value, int):
        return f"{value:,.0f}" if abs(value) < 1e9 else f"{value:.3g}"
    return f"{value:.3g}"


def guarantee_line(entry: dict) -> str:
    """``held`` / ``violated`` / ``untestable (about N runs would decide)`` / ``no claim``."""
    outcome = entry.get("guarantee")
    if outcome is None:
        return "no list claim"
    if outcome != "untestable":
        return outcome
    needed = (entry.get("guarantee_check") or {}).get("runs_needed")
    return f"untestable (≈ {_n(needed)} runs would decide)" if needed else "untestable"


def crossing_line(crossing: dict | None) -> str:
    if not crossing:
        return ""
    cross = crossing["alg1_overtakes_etc"]
    ahead = crossing["alg1_ahead_at"]
    if ahead:
        return f"Alg. 1 beats ETC from T = {_n(min(ahead))} on this instance"
    if cross["horizon"] is None:
        return f"Alg. 1 does not overtake ETC: {cross['note']}"
    low, high = cross["range"]
    span = f" (range {_n(low)} to {_n(high) if high else 'never'})"
    at = _n(cross["horizon"])
    return f"ETC ahead at every simulated horizon; Alg. 1 would overtake at T ≈ {at}{span}"


def compare_headline(results: dict) -> str:
    """Alg. 1 against UCB1 (traces, regret), the guarantee, and the ETC crossing."""
    rows = {a["algorithm"]: a for a in results["algorithms"]}
    parts = []
    if "list-2k" in rows:
        a = rows["list-2k"]
        parts.append(
            f"Alg. 1: {a['traces_covering_1_minus_delta']} traces cover 1-δ (bound "
            f"{_n(a['list_bound'])}, {guarantee_line(a)}), regret {_n(a['mean_regret'])}"
        )
    if "ucb1" in rows:
        u = rows["ucb1"]
        parts.append(f"UCB1: {u['distinct_traces']} traces, regret {_n(u['mean_regret'])}")
    line = crossing_line(results.get("crossing"))
    if line:
        parts.append(line)
    return "; ".join(parts)


def list_sweep_headline(results: dict) -> str:
    """The largest share of the bound reached, and the guarantee outcomes."""
    share = results["bound_approached"]
    counts = results["guarantee_outcomes"]
    over = results["over"]
    if share is None:
        return f"{results['algorithm']}: no list bound (measured over {over})"
    best = max(
        results["rows"],
        key=lambda r: (r["share_of_bound"] or 0, r["traces_covering_1_minus_delta"]),
    )
    return (
        f"{results['algorithm']}: at most {share:.1%} of the bound reached "
        f"({best['traces_covering_1_minus_delta']} of {_n(best['list_bound'])} at {over} = "
        f"{best['value']:g}); held {counts['held']}, violated {counts['violated']}, "
        f"untestable {counts['untestable']}"
    )


def lower_bound_headline(results: dict) -> str:
    names = [a["algorithm"] for a in results["algorithms"]]
    needs = [a["algorithm"] for a in results["algorithms"] if a["needs_k_traces"]["passed"]]
    linear = [a["algorithm"] for a in results["algorithms"] if a["restricted"]["passed"]]
    text = (
        f"≥ k = {results['k']} traces needed on a near-tied instance: {len(needs)} of "
        f"{len(names)} algorithms; restricted to k-1 traces linear with a sub-linear "
        f"control: {len(linear)} of {len(names)}"
    )
    if results["escapes"]:
        text += ". Escapes: " + "; ".join(results["escapes"])
    return text

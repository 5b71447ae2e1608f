"""Studies of `iclr25 bandit-replicable` whose documents docs/bandit-replicable.md quotes.

Each command computes its own hypothesis, pass condition and verdict (``sweep``: the
claimed exponent against the fit past exploration; ``lower-bound``: both halves of the
theorem; ``sweep --over``: the guarantee's outcome at every value), so a study is one
command line at the size the docs report. Phase-based algorithms are simulated per phase,
so their horizons reach 10^10; UCB1 is simulated per round and stops at 10^5.
"""

from __future__ import annotations

from experiments import Study

PHASED_HORIZONS = ("--t-min", "1000", "--t-max", "10000000000", "--points", "8")
#: --no-cache: a study recomputes every cell (the task cache keys on the version, not the code)
HORIZON_SWEEP = ("--runs", "300", "--gap-points", "8", "--workers", "2", "--no-cache")
LIST_SWEEP = (
    *("--runs", "1000", "--pilot-runs", "200", "--horizon", "100000"),
    *("--workers", "2", "--no-cache"),
)


def _horizon_sweep(algo: str, *extra: str) -> Study:
    args = ("bandit-replicable", "sweep", "--algo", algo, *extra, *PHASED_HORIZONS)
    return Study(
        args=(*args, *HORIZON_SWEEP),
        about=f"{algo} {' '.join(extra)}: worst-case regret over 8 gaps, T = 10^3..10^10, "
        "k = 5, 300 runs; exponent fitted past exploration",
    )


def _list_sweep(algo: str, over: str, values: str, *extra: str) -> Study:
    args = ("bandit-replicable", "sweep", "--algo", algo, "--over", over, "--values", values)
    return Study(
        args=(*args, *extra, *LIST_SWEEP),
        about=f"{algo}: list size (searched stress instance, 1,000 fresh runs) against its "
        f"bound over {over} = {values}",
    )


STUDIES = {
    "bandit-replicable-compare": Study(
        args=("bandit-replicable", "compare", "--workers", "2", "--no-cache"),
        about="all nine algorithms, k = 5, T = 50,000, 400 runs; ETC vs Alg. 1 crossing",
    ),
    # regret against the horizon
    "bandit-replicable-sweep-etc": _horizon_sweep("etc"),
    "bandit-replicable-sweep-list-2k": _horizon_sweep("list-2k"),
    "bandit-replicable-sweep-list-k-delta": _horizon_sweep("list-k-delta"),
    "bandit-replicable-sweep-replicable-elimination": _horizon_sweep("replicable-elimination"),
    "bandit-replicable-sweep-list-batched-b2": _horizon_sweep("list-batched", "--batches", "2"),
    "bandit-replicable-sweep-list-batched-b3": _horizon_sweep("list-batched", "--batches", "3"),
    "bandit-replicable-sweep-list-batched-b4": _horizon_sweep("list-batched", "--batches", "4"),
    "bandit-replicable-sweep-linear-batched-b2": _horizon_sweep("linear-batched", "--batches", "2"),
    "bandit-replicable-sweep-linear-batched-b3": _horizon_sweep("linear-batched", "--batches", "3"),
    "bandit-replicable-sweep-ucb1": Study(
        args=(
            *("bandit-replicable", "sweep", "--algo", "ucb1", "--t-min", "1000"),
            *("--t-max", "100000", "--points", "3", "--gap-points", "4", "--runs", "300"),
            *("--workers", "2", "--no-cache"),
        ),
        about="ucb1: worst-case regret over 4 gaps, T = 10^3..10^5 (per-round simulation)",
    ),
    # list size against the bound
    "bandit-replicable-lists-k-etc": _list_sweep("etc", "k", "2,3,4,5,6,7,8"),
    "bandit-replicable-lists-k-list-2k": _list_sweep("list-2k", "k", "2,3,4,5,6,7,8,9"),
    "bandit-replicable-lists-k-list-k-delta": _list_sweep("list-k-delta", "k", "2,3,4,5,6,7,8"),
    "bandit-replicable-lists-k-list-batched": _list_sweep("list-batched", "k", "2,3,4,5,6"),
    "bandit-replicable-lists-k-linear-batched": _list_sweep("linear-batched", "k", "2,3,4,5"),
    "bandit-replicable-lists-delta-list-k-delta": _list_sweep(
        "list-k-delta", "delta", "0.2,0.1,0.05,0.02,0.01"
    ),
    "bandit-replicable-lists-batches-list-batched": _list_sweep(
        "list-batched", "batches", "2,3,4,5", "--k", "4"
    ),
    # the lower bound
    "bandit-replicable-lower-bound": Study(
        args=(
            *("bandit-replicable", "lower-bound", "--algos"),
            "etc,list-2k,list-k-delta,list-batched,linear-batched,replicable-elimination",
            *("--k", "3", "--t-max", "1000000", "--points", "4", "--runs", "1000"),
            *("--workers", "2", "--no-cache"),
        ),
        about="both halves of the lower bound for the list algorithms, k = 3, T ≤ 10^6",
    ),
    "bandit-replicable-lower-bound-k4": Study(
        args=(
            *("bandit-replicable", "lower-bound", "--algos"),
            "etc,list-2k,list-k-delta,list-batched,linear-batched",
            *("--k", "4", "--t-max", "1000000", "--points", "4", "--runs", "1000"),
            *("--workers", "2", "--no-cache"),
        ),
        about="both halves of the lower bound for the list algorithms, k = 4, T ≤ 10^6",
    ),
    "bandit-replicable-lower-bound-baselines": Study(
        args=(
            *("bandit-replicable", "lower-bound", "--algos"),
            "ucb1,thompson,successive-elimination",
            *("--k", "3", "--t-max", "10000", "--points", "2", "--runs", "300"),
            *("--workers", "2", "--no-cache"),
        ),
        about="both halves of the lower bound for the non-replicable baselines, k = 3",
    ),
}

"""Where a method's chosen organisation ranks among all the exhaustive ones.

"Cluster search keeps exhaustive search's accuracy" says little about the search itself:
on an easy task every decent organisation predicts the same label. Run on the same
queries and candidates as exhaustive search, every organisation a cheaper method picks
is also among the P(n, k) exhaustive ones, so its place in the exhaustive entropy ranking
is known exactly. Per query, with H the entropies of all exhaustive organisations and
H* that of the pick (looked up in the exhaustive scores, so both come from one scorer):

* ``rank`` = 1 + #{H < H*} (1 = the exhaustive optimum);
* ``percentile`` = #{H < H*} / P(n, k) (0 = the optimum; a random pick averages ~0.5);
* ``regret_nats`` = H* - min H.

:func:`annotate` adds them to each query's record; :func:`summarise` averages them over
queries, with the share of queries where the pick is the optimum, where it has the
optimum's (first, last) pair, and where it predicts the same label as exhaustive search.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Scored = tuple[Sequence[tuple[int, ...]], np.ndarray]  # (organisations, H (O,)) of a query


def rank_in_exhaustive(order: Sequence[int], exhaustive: Scored) -> dict:
    """Rank, percentile and regret of ``order`` among the exhaustive organisations."""
    orders, h = exhaustive
    index = {tuple(o): i for i, o in enumerate(orders)}
    key = tuple(order)
    if key not in index:
        raise ValueError(f"organisation {key} is not among the exhaustive ones")
    h_pick = h[index[key]]
    better = int((h < h_pick).sum())
    return {
        "rank": better + 1,
        "percentile": better / len(h),
        "regret_nats": float(h_pick - h.min()),
    }


def _ends(record: dict) -> tuple[int, int]:
    return record["order"][0], record["order"][-1]


def annotate(records: Sequence[dict], exhaustive: Sequence[Scored]) -> None:
    """Add ``exhaustive_rank``, ``exhaustive_percentile`` and ``regret_nats`` to each
    record (one per query, aligned with the exhaustive scores of that query)."""
    for record, scored in zip(records, exhaustive, strict=True):
        r = rank_in_exhaustive(record["order"], scored)
        record.update(
            exhaustive_rank=r["rank"],
            exhaustive_percentile=r["percentile"],
            regret_nats=r["regret_nats"],
        )


def summarise(
    records: Sequence[dict], exhaustive_records: Sequence[dict], organisations: int
) -> dict:
    """Mean percentile, median rank, mean regret and agreement shares over annotated
    ``records`` (aligned with ``exhaustive_records``, the same queries)."""
    pairs = list(zip(records, exhaustive_records, strict=True))
    return {
        "organisations_per_query": organisations,
        "mean_percentile": float(np.mean([r["exhaustive_percentile"] for r in records])),
        "median_rank": float(np.median([r["exhaustive_rank"] for r in records])),
        "mean_regret_nats": float(np.mean([r["regret_nats"] for r in records])),
        "optimum_found": float(np.mean([r["exhaustive_rank"] == 1 for r in records])),
        "same_first_last": float(np.mean([_ends(a) == _ends(b) for a, b in pairs])),
        "same_prediction": float(np.mean([a["predicted"] == b["predicted"] for a, b in pairs])),
    }

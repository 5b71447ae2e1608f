"""Cluster-based Search: choose only the first and the last demonstration.

Paper: Pham, Le, Ngo, Tran, ICLR 2025, Sec. 4. Prompt embeddings cluster by their first
and last demonstrations (``cluster_analysis.py``), so the search over all P(n, k) ordered
k-subsets of n candidates is replaced by a search over the n(n-1) (first, last) pairs;
each pair is completed into one organisation and scored like any other (``search.py``).

The paper does not say how the k-2 middle positions are filled. Rules (``middle``), all
free (no extra model evaluation):

* ``rotate`` (default): the t-th pair (in enumeration order) takes k-2 consecutive
  candidates of the rest R (rank order), cyclically from R[t(k-2) mod |R|]: the middles
  vary from pair to pair and every candidate fills a middle about equally often, so the
  n(n-1) organisations cover many different k-subsets;
* ``rank`` (our first rule): the k-2 best-ranked remaining candidates, in rank order —
  nearly the same two middles for every pair;
* ``labels``: like ``rank``, but while a label of the candidates is missing from the
  prompt the best-ranked candidate of a missing label comes first (label coverage);
  chosen middles in rank order.

Each rule is measured in ``benchmarks/bench_icl_order.py`` (n = 8, k = 4): the mean
percentile of its picks among the 1,680 exhaustive organisations ranked by entropy,
against the best of 56 random organisations (the ``sample`` control); the default is the
rule that measured best (``tests/core/icl_order/test_search.py`` checks it against the
committed result) and docs/icl-order.md renders the figures from that result.

With ``fixed_set`` the pairs range over the first k candidates: k(k-1) organisations.

Symbols: ``n`` -> len(ranked), ``k`` -> k, ``n(n-1)`` -> :func:`cluster_count`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

#: each rule in a few words (``--middle --help``)
MIDDLE_RULE_HELP = {
    "rotate": "the middles cycle through the other candidates from pair to pair",
    "rank": "the best-ranked other candidates, nearly the same middles for every pair",
    "labels": "like rank, candidates of labels missing from the prompt first",
}
MIDDLE_RULES = tuple(MIDDLE_RULE_HELP)
#: the rule that measured best (``benchmarks/bench_icl_order.py``; a test checks the
#: benchmark's result file agrees): the default of the CLI, the library and the benchmark
DEFAULT_MIDDLE = "rotate"


def cluster_count(n: int, k: int, fixed_set: bool = False) -> int:
    """n(n-1) (first, last) pairs (k(k-1) with a fixed set; n when k = 1)."""
    m = k if fixed_set else n
    return m if k == 1 else m * (m - 1)


def fill_middle(
    ranked: Sequence[int],
    first: int,
    last: int,
    k: int,
    rule: str = DEFAULT_MIDDLE,
    labels: Sequence[int] | None = None,
    pair_index: int = 0,
) -> list[int]:
    """The k-2 middle demonstrations of the organisation (first, ..., last), the
    ``pair_index``-th pair of the enumeration."""
    rest = [c for c in ranked if c != first and c != last]
    if rule == "rank":
        return rest[: k - 2]
    if rule == "rotate":
        start = pair_index * (k - 2)
        return [rest[(start + i) % len(rest)] for i in range(k - 2)]
    if rule not in MIDDLE_RULES:
        raise ValueError(f"unknown middle rule {rule!r}; use one of {MIDDLE_RULES}")
    if labels is None:
        raise ValueError("the 'labels' middle rule needs the candidates' labels")
    shown = {labels[first], labels[last]}
    chosen: list[int] = []
    while len(chosen) < k - 2:
        pick = next((c for c in rest if labels[c] not in shown), rest[0])
        chosen.append(pick)
        shown.add(labels[pick])
        rest.remove(pick)
    position = {c: i for i, c in enumerate(ranked)}
    return sorted(chosen, key=position.__getitem__)


def cluster_orderings(
    ranked: Sequence[int],
    k: int,
    rule: str = DEFAULT_MIDDLE,
    labels: Sequence[int] | None = None,
) -> list[tuple[int, ...]]:
    """Every (first, last) pair of ``ranked`` candidates, completed by ``fill_middle``."""
    if k == 1:
        return [(c,) for c in ranked]
    return [
        (first, *fill_middle(ranked, first, last, k, rule, labels, t), last)
        for t, (first, last) in enumerate(itertools.permutations(ranked, 2))
    ]

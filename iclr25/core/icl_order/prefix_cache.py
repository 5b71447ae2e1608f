"""Exhaustive scoring through a prefix tree that reuses the key/value cache.

Orderings of demonstrations share prefixes: all P(n, k) ordered k-subsets of n candidates
have only n distinct first segments, P(n, 2) distinct two-segment prefixes, and so on.
Instead of one forward pass per prompt (``scoring.score_naive``) this scorer walks the
trie of the orderings depth-first: each trie node runs only its own segment's tokens,
attending to its parent's cached keys and values; the leaves append the query.

Token work for n = 8, k = 4 and segments of s tokens, query of q tokens:
naive P(8,4)·(4s + q) vs cached s·(8 + 56 + 336) + P(8,4)·(s + q). With several queries
sharing one candidate pool the depth-k nodes are cached too and each (ordering, query)
costs only the q query tokens.

How a batch of children is run: parent caches are gathered row by row (``index_select``
on the batch axis), the children's new tokens are left-padded, and the attention mask
is the parent's mask followed by the new tokens' mask — so padding can sit in the middle
of a row, masked out, with ``position_ids`` counting only real tokens. The last new token
of every row sits at index -1, so only the tail logits are computed (``logits_to_keep``).
Every score thus equals the naive left-padded forward's up to float rounding (tested to
1e-4). Multi-token label words add one leaf row per label (``scoring.ScoringRow``).

Memory is bounded: depth-first, at most ``batch_size`` rows per forward and per level.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iclr25.core.icl_order.models import (
    LoadedModel,
    cache_to_tensors,
    output_cache,
    tail_kwargs,
    tensors_to_cache,
)
from iclr25.core.icl_order.prompts import EncodedTask
from iclr25.core.icl_order.scoring import (
    ScoringRow,
    merge_scores,
    read_scores,
    scoring_rows,
    tail_length,
)


@dataclass
class Frontier:
    """Cached rows of trie nodes: keys/values per layer (B, H, T, D), mask (B, T)."""

    prefixes: list[tuple[int, ...]]
    kv: list[tuple[Any, Any]] | None  # None: the empty root (no special prefix tokens)
    mask: Any  # (B, T) long
    lengths: Any  # (B,) real tokens per row


@dataclass
class _Trie:
    children: dict[tuple[int, ...], list[int]]
    leaf_rows: dict[tuple[int, ...], list[int]]  # ordering -> its indices in the input
    depth: int


def _build_trie(orderings: Sequence[tuple[int, ...]]) -> _Trie:
    depths = {len(o) for o in orderings}
    if len(depths) != 1:
        raise ValueError(f"orderings of different lengths {sorted(depths)}")
    children: dict[tuple[int, ...], list[int]] = defaultdict(list)
    leaf_rows: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for row, order in enumerate(orderings):
        order = tuple(order)
        leaf_rows[order].append(row)
        for depth in range(len(order)):
            kids = children[order[:depth]]
            if order[depth] not in kids:
                kids.append(order[depth])
    return _Trie(dict(children), dict(leaf_rows), depths.pop())


def _extend(
    lm: LoadedModel, parent: Frontier, rows: list[int], new: list[list[int]], keep: bool, tail=1
):
    """Run ``new[i]`` after parent row ``rows[i]``; return (child frontier or None, logits
    (B, tail, V) at each row's last ``tail`` new tokens)."""
    import torch

    device = lm.device
    width = max(len(t) for t in new)
    ids = torch.full((len(new), width), lm.pad_id, dtype=torch.long)
    new_mask = torch.zeros((len(new), width), dtype=torch.long)
    for i, tokens in enumerate(new):
        ids[i, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
        new_mask[i, width - len(tokens) :] = 1
    ids, new_mask = ids.to(device), new_mask.to(device)
    index = torch.tensor(rows, dtype=torch.long, device=device)
    past_len = parent.lengths.index_select(0, index)  # (B,)
    positions = past_len[:, None] + (new_mask.cumsum(dim=1) - 1).clamp(min=0)  # (B, S)
    mask = torch.cat([parent.mask.index_select(0, index), new_mask], dim=1)  # (B, T + S)
    kwargs: dict = {"attention_mask": mask, "use_cache": True, **tail_kwargs(lm, tail)}
    if lm.accepts_position_ids:
        kwargs["position_ids"] = positions
    if parent.kv is not None:
        gathered = [(k.index_select(0, index), v.index_select(0, index)) for k, v in parent.kv]
        kwargs[lm.cache_keyword] = tensors_to_cache(gathered)
    with torch.inference_mode():
        out = lm.model(ids, **kwargs)
    logits = out.logits[:, -tail:, :].float()  # (B, tail, V)
    child = None
    if keep:
        lengths = past_len + new_mask.sum(dim=1)  # (B,)
        child = Frontier([], cache_to_tensors(output_cache(out)), mask, lengths)
    return child, logits


@dataclass(frozen=True)
class _Leaf:
    """A leaf forward: parent row, full ordering, query slot and scoring row."""

    row: int
    order: tuple[int, ...]
    query: int
    scoring: ScoringRow


class PrefixTreeScorer:
    """``score(orderings, queries)`` -> label scores (n_orderings, n_queries, n_labels)."""

    def __init__(self, lm: LoadedModel, encoded: EncodedTask, on_batch: Callable | None = None):
        if lm.cache_keyword is None:
            raise ValueError("this model's forward takes no key/value cache")
        self.lm = lm
        self.encoded = encoded
        self.on_batch = on_batch
        self.forwards = 0  # forward passes run (for tests and benchmarks)

    def score(self, orderings: Sequence[tuple[int, ...]], queries: Sequence[int]) -> np.ndarray:
        import torch

        n_labels = len(self.encoded.label_tokens)
        self._out = np.full((len(orderings), len(queries), n_labels), np.nan)
        self._queries = list(queries)
        self._rows = scoring_rows(self.encoded)
        if not orderings or not queries:
            return self._out
        self._trie = _build_trie(orderings)
        root = self._root(torch)
        if self._trie.depth == 0:
            self._finish_leaves(root, [(0, (), q) for q in range(len(self._queries))])
        else:
            self._expand(root, 0)
        return self._out

    def _root(self, torch) -> Frontier:
        prefix = self.encoded.prefix
        device = self.lm.device
        empty = Frontier(
            [()],
            None,
            torch.zeros((1, 0), dtype=torch.long, device=device),
            torch.zeros(1, dtype=torch.long, device=device),
        )
        if not prefix:
            return empty
        root, _ = _extend(self.lm, empty, [0], [prefix], keep=True)
        root.prefixes = [()]
        self.forwards += 1
        return root

    def _expand(self, parent: Frontier, depth: int) -> None:
        """Run every child of ``parent``'s rows, chunked; recurse or finish at leaves."""
        pairs = [
            (row, prefix + (nxt,))
            for row, prefix in enumerate(parent.prefixes)
            for nxt in self._trie.children.get(prefix, [])
        ]
        last_level = depth + 1 == self._trie.depth
        if last_level and len(self._queries) == 1:  # fuse last segment and query
            jobs = [(row, child, 0) for row, child in pairs]
            return self._finish_leaves(parent, jobs)
        size = self.lm.batch_size
        for start in range(0, len(pairs), size):
            chunk = pairs[start : start + size]
            new = [self.encoded.demos[child[-1]] for _, child in chunk]
            frontier, _ = _extend(self.lm, parent, [r for r, _ in chunk], new, keep=True)
            self.forwards += 1
            frontier.prefixes = [child for _, child in chunk]
            if last_level:  # several queries: append each to every cached ordering
                jobs = [
                    (row, p, q)
                    for row, p in enumerate(frontier.prefixes)
                    for q in range(len(self._queries))
                ]
                self._finish_leaves(frontier, jobs, query_only=True)
            else:
                self._expand(frontier, depth + 1)
        return None

    def _finish_leaves(self, parent: Frontier, jobs: list, query_only: bool = False) -> None:
        """Leaf forwards: (parent row, full ordering, query slot) -> label scores."""
        leaves = [_Leaf(r, order, q, row) for r, order, q in jobs for row in self._rows]
        encoded = self.encoded
        for start in range(0, len(leaves), self.lm.batch_size):
            chunk = leaves[start : start + self.lm.batch_size]
            new = []
            for leaf in chunk:
                tail = [] if query_only or not leaf.order else encoded.demos[leaf.order[-1]]
                query = encoded.queries[self._queries[leaf.query]]
                new.append(tail + query + list(leaf.scoring.suffix))
            scoring = [leaf.scoring for leaf in chunk]
            tail = tail_length(encoded, scoring)
            _, logits = _extend(self.lm, parent, [x.row for x in chunk], new, False, tail)
            self.forwards += 1
            for leaf, values in zip(chunk, read_scores(logits, scoring, encoded), strict=True):
                for row in self._trie.leaf_rows[leaf.order]:
                    merge_scores(self._out[row, leaf.query], values)
            if self.on_batch is not None:
                self.on_batch(len(chunk) / len(self._rows))


def score_prefix_tree(
    lm: LoadedModel,
    encoded: EncodedTask,
    orderings: Sequence[tuple[int, ...]],
    queries: Sequence[int],
    on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Label scores (n_orderings, n_queries, n_labels), equal to ``score_naive``'s."""
    return PrefixTreeScorer(lm, encoded, on_batch).score(orderings, queries)


#: the prefix tree is used when it runs at most this share of naive scoring's tokens: its
#: forwards are more (one per trie level and chunk) and smaller, so a small saving of
#: tokens does not pay for them (cluster search's n(n-1) organisations share few prefixes)
TREE_WORTH = 0.5


def token_work(
    encoded: EncodedTask, orderings: Sequence[tuple[int, ...]], queries: Sequence[int]
) -> tuple[int, int]:
    """(tokens the prefix tree runs, tokens naive scoring runs) for these organisations
    on these queries (special prefix, demonstration segments and query segments)."""
    if not orderings or not queries:
        return 0, 0
    depth = len(orderings[0])
    query_tokens = sum(len(encoded.queries[q]) for q in queries)
    demo = {i: len(encoded.demos[i]) for o in orderings for i in o}  # demos may be a dict
    naive = sum(len(encoded.prefix) + sum(demo[i] for i in o) for o in orderings) * len(queries)
    naive += len(orderings) * query_tokens
    cached_depth = depth if len(queries) > 1 else depth - 1  # one query: last segment fused
    nodes = {tuple(o[:d]) for o in orderings for d in range(1, cached_depth + 1)}
    tree = len(encoded.prefix) + sum(demo[node[-1]] for node in nodes)
    leaves = set(map(tuple, orderings))
    tree += len(leaves) * query_tokens
    if cached_depth < depth:
        tree += sum(demo[o[-1]] for o in leaves)
    return tree, naive


def score_organisations(
    lm: LoadedModel,
    encoded: EncodedTask,
    orderings: Sequence[tuple[int, ...]],
    queries: Sequence[int],
    prefix_cache: bool = True,
    on_batch: Callable[[float], None] | None = None,
) -> np.ndarray:
    """Label scores (O, Q, L) through the prefix tree when allowed and worth it
    (:data:`TREE_WORTH`), else one forward per prompt; the choice depends only on the
    organisations, so it is the same in every run."""
    from iclr25.core.icl_order.scoring import score_naive

    if prefix_cache and lm.cache_keyword is not None:
        tree, naive = token_work(encoded, orderings, queries)
        if tree <= TREE_WORTH * naive:
            return score_prefix_tree(lm, encoded, orderings, queries, on_batch)
    return score_naive(lm, encoded, orderings, queries, on_batch)
